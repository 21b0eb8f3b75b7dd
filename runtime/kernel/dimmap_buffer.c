// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_buffer.c - the fixed page buffer: faults, eviction and writeback.
 *
 * Faults look pages up in the DI-MMAP policy (dimmap_policy.c) under buf->lock and read
 * misses into a free slot outside it. A page the policy demotes to the eviction queue
 * is unmapped from every process by a worker soon after, so touching it again faults
 * and recovers it (the victim buffer). When free slots run short, a batch of the oldest eviction-queue
 * pages leaves together: they are unmapped, the dirty ones are written back with
 * adjacent pages coalesced into one write, and the slots return to the free pool.
 *
 * Dirty pages are found the way the page cache finds them: unmapping a page whose
 * page-table entry is dirty marks the folio dirty (zap_pte_range), so writes cost no
 * extra faults; msync/fsync first unmaps its range (one TLB flush per process for the
 * whole range), then writes the dirty folios back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "dimmap_compat.h"
#include "dimmap_kmod.h"

enum dm_pass {
	DM_PASS_EVICT,	/* leaving slots: write back, then free */
	DM_PASS_DROP,	/* resident slots of one link: write back, then free */
	DM_PASS_SYNC,	/* resident slots of one link: write back */
	DM_PASS_DISCARD,	/* resident slots of one link: free without writing */
};

#define DM_SCAN_CHUNK 1024u	/* slots inspected per buf->lock hold when scanning */

/* ---- demotion: unmap pages that entered the eviction queue ---- */

/*
 * The policy moved slot to the eviction queue (buf->lock held): queue it for unmap_work,
 * so that touching it again faults and recovers it. Returns true if the worker needs a
 * kick. A full ring drops the request: the page is unmapped when it leaves anyway.
 */
static bool dm_demote(struct dm_buffer *buf, u32 slot)
{
	struct dmp_page *pg;

	lockdep_assert_held(&buf->lock);
	if (slot == DMP_NIL)
		return false;
	pg = &buf->pol.pages[slot];
	if ((pg->flags & DM_F_UNMAP) || buf->unmap_len == buf->pol.par.npages)
		return false;
	pg->flags |= DM_F_UNMAP;
	buf->unmap_ring[(buf->unmap_head + buf->unmap_len) % buf->pol.par.npages] = slot;
	buf->unmap_len++;
	return true;
}

struct dm_unmap {
	struct dm_link *link;	/* holds a reference */
	pgoff_t pgoff;
};

/* Takes up to max queued pages that are still in the eviction queue (buf->lock held). */
static u32 dm_unmap_take(struct dm_buffer *buf, struct dm_unmap *todo, u32 max)
{
	u32 n = 0;

	while (buf->unmap_len && n < max) {
		u32 s = buf->unmap_ring[buf->unmap_head];
		struct dmp_page *pg = &buf->pol.pages[s];

		buf->unmap_head = (buf->unmap_head + 1) % buf->pol.par.npages;
		buf->unmap_len--;
		if (!(pg->flags & DM_F_UNMAP))
			continue;	/* freed and reused since */
		pg->flags &= ~DM_F_UNMAP;
		if (pg->state != DMP_EVICT)
			continue;	/* recovered, or leaving (the pass unmaps it) */
		todo[n].link = buf->slots[s].link;
		todo[n].pgoff = buf->slots[s].pgoff;
		kref_get(&todo[n].link->ref);
		n++;
	}
	return n;
}

static void dm_unmap_worker(struct work_struct *work)
{
	struct dm_buffer *buf = container_of(work, struct dm_buffer, unmap_work);
	struct dm_unmap todo[16];
	u32 n, i;

	do {
		spin_lock(&buf->lock);
		n = dm_unmap_take(buf, todo, ARRAY_SIZE(todo));
		spin_unlock(&buf->lock);
		for (i = 0; i < n; i++) {
			unmap_mapping_pages(dm_link_mapping(todo[i].link), todo[i].pgoff, 1, false);
			dm_link_put(todo[i].link);
		}
		cond_resched();
	} while (n);
}

static void dm_kick_unmap(struct dm_buffer *buf, bool kick)
{
	if (kick)
		queue_work(system_unbound_wq, &buf->unmap_work);
}

/* ---- writeback and eviction passes over buf->flush[0..n) ---- */

static int dm_flush_cmp(const void *a, const void *b)
{
	const struct dm_flush_entry *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Locks the pages, unmaps them (unless syncing a range already unmapped) and takes
 * their dirty bits. No page-table entry can come back while the folio stays locked.
 */
static void dm_pass_lock(struct dm_buffer *buf, u32 n, enum dm_pass pass)
{
	u32 i;

	for (i = 0; i < n; i++) {
		struct dm_flush_entry *e = &buf->flush[i];
		struct dm_slot *sl = &buf->slots[e->slot];

		e->folio = sl->folio;
		folio_lock(e->folio);
		if (pass != DM_PASS_SYNC)
			unmap_mapping_pages(dm_link_mapping(sl->link), sl->pgoff, 1, false);
		e->dirty = folio_test_clear_dirty(e->folio);
	}
}

/* Starts writing the run of adjacent dirty pages at flush[first]; returns its length. */
static u32 dm_write_run(struct dm_buffer *buf, u32 first, u32 n, u32 bv_used,
			struct dm_write *w, struct dm_write_batch *batch)
{
	struct dm_flush_entry *e = &buf->flush[first];
	struct dm_slot *sl = &buf->slots[e->slot];
	struct bio_vec *bv = &buf->bvec[bv_used];
	u32 len = 0;

	while (first + len < n && e[len].dirty && e[len].key == e->key + len) {
		bvec_set_page(&bv[len], folio_page(e[len].folio, 0), PAGE_SIZE, 0);
		len++;
	}
	w->first = first;
	w->len = len;
	dm_write_start(sl->link, sl->pgoff, bv, len, w, batch);
	return len;
}

/* Writes the dirty pages of flush[0..n), adjacent ones together, all in flight at once. */
static void dm_pass_write(struct dm_buffer *buf, u32 n, u64 *written, u64 *ios)
{
	struct dm_write_batch batch;
	u32 i = 0, used = 0, runs = 0, r, k;

	sort(buf->flush, n, sizeof(*buf->flush), dm_flush_cmp, NULL);
	dm_write_batch_init(&batch);
	while (i < n) {
		u32 len;

		if (!buf->flush[i].dirty) {
			i++;
			continue;
		}
		len = dm_write_run(buf, i, n, used, &buf->writes[runs++], &batch);
		used += len;
		i += len;
	}
	dm_write_wait(&batch);
	for (r = 0; r < runs; r++) {
		struct dm_write *w = &buf->writes[r];

		for (k = w->first; k < w->first + w->len; k++)
			buf->flush[k].err = w->err;
		if (!w->err)
			*written += w->len;
	}
	*ios += runs;
}

/* A page still referenced beyond the pool and a racing fault (e.g. pinned by O_DIRECT
 * I/O) must not be reused for other data: it leaves with its holder and the slot gets
 * a fresh page.
 */
static void dm_pass_spares(struct dm_buffer *buf, u32 n, enum dm_pass pass)
{
	u32 i;

	if (pass == DM_PASS_SYNC)
		return;
	for (i = 0; i < n; i++)
		if (folio_ref_count(buf->flush[i].folio) > 1)
			buf->flush[i].spare = folio_alloc(GFP_KERNEL | __GFP_NOFAIL, 0);
}

/* Whether the pass may free the slot now (buf->lock held). */
static bool dm_pass_frees(struct dm_buffer *buf, struct dm_flush_entry *e, enum dm_pass pass)
{
	u8 state = buf->pol.pages[e->slot].state;

	if (pass == DM_PASS_EVICT)
		return state == DMP_LEAVING;	/* else a fault recovered it meanwhile */
	if (e->err || pass == DM_PASS_SYNC)
		return false;
	return state == DMP_PRIMARY || state == DMP_HOT || state == DMP_EVICT;
}

/*
 * The page could not be written. The error goes to the next fsync/msync of the link.
 * A page that was leaving leaves anyway, its data lost, as the page cache does after a
 * failed writeback: keeping it would fill the buffer with pages that can never go, and
 * every fault would then wait forever. A page being synced or dropped stays dirty.
 */
static void dm_pass_fail(struct dm_buffer *buf, struct dm_flush_entry *e, enum dm_pass pass)
{
	struct dm_slot *sl = &buf->slots[e->slot];

	buf->st.write_errors++;
	cmpxchg(&sl->link->wb_err, 0, e->err);
	pr_warn_ratelimited("%s: writeback of page %lu failed (%d)%s\n", sl->link->name,
			    sl->pgoff, e->err, pass == DM_PASS_EVICT ? ": its data is lost" : "");
	if (pass != DM_PASS_EVICT)
		folio_set_dirty(e->folio);
}

static void dm_pass_free(struct dm_buffer *buf, struct dm_flush_entry *e, enum dm_pass pass)
{
	struct dm_slot *sl = &buf->slots[e->slot];

	if (e->spare) {
		sl->folio = e->spare;
		e->replaced = true;
		buf->st.replaced_pages++;
	}
	if (pass == DM_PASS_EVICT)
		dmp_release(&buf->pol, e->slot);
	else
		dmp_remove(&buf->pol, e->slot);
	sl->link = NULL;
}

/* Frees what may go, updates the counters, unlocks the pages. Returns slots freed. */
static u32 dm_pass_finish(struct dm_buffer *buf, u32 n, enum dm_pass pass, u64 written,
			  u64 ios)
{
	u32 i, freed = 0;

	spin_lock(&buf->lock);
	for (i = 0; i < n; i++) {
		struct dm_flush_entry *e = &buf->flush[i];

		if (e->err)
			dm_pass_fail(buf, e, pass);
		if (dm_pass_frees(buf, e, pass)) {
			dm_pass_free(buf, e, pass);
			freed++;
		}
	}
	buf->st.writebacks += written;
	buf->st.write_ios += ios;
	buf->st.bytes_written += written << PAGE_SHIFT;
	buf->st.evictions += freed;
	spin_unlock(&buf->lock);

	for (i = 0; i < n; i++) {
		struct dm_flush_entry *e = &buf->flush[i];

		folio_unlock(e->folio);
		if (e->replaced)
			folio_put(e->folio);	/* the pool's reference to the pinned page */
		else if (e->spare)
			folio_put(e->spare);
	}
	wake_up_all(&buf->wait);
	return freed;
}

/* Runs a pass over buf->flush[0..n); caller holds evict_lock. Returns slots freed. */
static u32 dm_pass(struct dm_buffer *buf, u32 n, enum dm_pass pass, u64 *written, int *err)
{
	u64 w = 0, ios = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		buf->flush[i].err = 0;
		buf->flush[i].replaced = false;
		buf->flush[i].spare = NULL;
	}
	dm_pass_lock(buf, n, pass);
	if (pass != DM_PASS_DISCARD)
		dm_pass_write(buf, n, &w, &ios);
	dm_pass_spares(buf, n, pass);
	for (i = 0; i < n; i++)
		if (buf->flush[i].err && !*err)
			*err = buf->flush[i].err;
	if (written)
		*written += w;
	return dm_pass_finish(buf, n, pass, w, ios);
}

/* ---- eviction ---- */

/* Sends one batch out of the eviction queue if free slots run short. Returns true if
 * a slot is free (or was freed), false if nothing could leave right now.
 */
static bool dm_evict_batch(struct dm_buffer *buf)
{
	int err = 0;
	u32 n, i;

	lockdep_assert_held(&buf->evict_lock);
	spin_lock(&buf->lock);
	if (!dmp_wants_eviction(&buf->pol)) {
		bool have = buf->pol.free.len > 0;

		spin_unlock(&buf->lock);
		return have;
	}
	n = dmp_evict_batch(&buf->pol, buf->leaving, buf->pol.par.batch);
	for (i = 0; i < n; i++) {
		u32 s = buf->leaving[i];

		buf->flush[i].slot = s;
		buf->flush[i].key = buf->pol.pages[s].key;
	}
	spin_unlock(&buf->lock);
	if (!n)
		return false;
	dm_pass(buf, n, DM_PASS_EVICT, NULL, &err);
	return true;
}

static void dm_evict_worker(struct work_struct *work)
{
	struct dm_buffer *buf = container_of(work, struct dm_buffer, evict_work);
	int i;

	mutex_lock(&buf->evict_lock);
	for (i = 0; i < 4; i++) {
		bool more;

		dm_evict_batch(buf);
		spin_lock(&buf->lock);
		more = dmp_wants_eviction(&buf->pol);
		spin_unlock(&buf->lock);
		if (!more)
			break;
	}
	mutex_unlock(&buf->evict_lock);
}

static bool dm_has_free(struct dm_buffer *buf)
{
	bool have;

	spin_lock(&buf->lock);
	have = buf->pol.free.len > 0;
	spin_unlock(&buf->lock);
	return have;
}

/* The pool is empty: evict now, or wait for reads in flight to finish. */
static void dm_make_room(struct dm_buffer *buf)
{
	bool ok;

	mutex_lock(&buf->evict_lock);
	ok = dm_evict_batch(buf);
	mutex_unlock(&buf->evict_lock);
	if (!ok)
		wait_event_timeout(buf->wait, dm_has_free(buf), HZ / 10);
}

/* ---- faults ---- */

static bool dm_loading(struct dm_buffer *buf, u32 slot, u64 key)
{
	bool loading;

	spin_lock(&buf->lock);
	loading = buf->pol.pages[slot].state == DMP_LOADING && buf->pol.pages[slot].key == key;
	spin_unlock(&buf->lock);
	return loading;
}

/* Reads a missing page into a free slot. -EAGAIN: look it up again. */
static int dm_load(struct dm_link *link, pgoff_t pgoff, u64 key)
{
	struct dm_buffer *buf = link->buf;
	bool kick, demoted = false;
	struct folio *folio;
	int err;
	u32 s;

	spin_lock(&buf->lock);
	if (dmp_lookup(&buf->pol, key) != DMP_NIL) {
		spin_unlock(&buf->lock);
		return -EAGAIN;
	}
	s = dmp_alloc(&buf->pol, key);
	if (s == DMP_NIL) {
		spin_unlock(&buf->lock);
		dm_make_room(buf);
		return -EAGAIN;
	}
	buf->slots[s].link = link;
	buf->slots[s].pgoff = pgoff;
	buf->st.faults++;
	buf->st.misses++;
	kick = dmp_wants_eviction(&buf->pol);
	folio = buf->slots[s].folio;
	spin_unlock(&buf->lock);
	if (kick)
		queue_work(system_unbound_wq, &buf->evict_work);

	err = dm_read_page(link, pgoff, folio);

	spin_lock(&buf->lock);
	if (err) {
		dmp_abort(&buf->pol, s);
		buf->slots[s].link = NULL;
		buf->st.read_errors++;
	} else {
		buf->st.bytes_read += PAGE_SIZE;
		demoted = dm_demote(buf, dmp_loaded(&buf->pol, s));
	}
	spin_unlock(&buf->lock);
	wake_up_all(&buf->wait);
	dm_kick_unmap(buf, demoted);
	if (err)
		pr_warn_ratelimited("%s: read of page %lu failed: %d\n", link->name, pgoff,
				    err);
	return err;
}

/* A resident page was faulted: recover it from the eviction queue if it is there.
 * Returns true if a page was demoted to make room (kick unmap_work).
 */
static bool dm_touch(struct dm_buffer *buf, u32 s, bool counted)
{
	u8 state = buf->pol.pages[s].state;
	bool demoted = false;

	if (state == DMP_EVICT || state == DMP_LEAVING) {
		demoted = dm_demote(buf, dmp_recover(&buf->pol, s));
		if (!counted)
			buf->st.recoveries++;
	} else if (!counted) {
		buf->st.hits++;
	}
	if (!counted)
		buf->st.faults++;
	return demoted;
}

static bool dm_slot_holds(struct dm_buffer *buf, u32 s, u64 key, struct folio *folio)
{
	bool same;
	u8 state;

	spin_lock(&buf->lock);
	state = buf->pol.pages[s].state;
	same = buf->pol.pages[s].key == key && buf->slots[s].folio == folio &&
	       state != DMP_FREE && state != DMP_LOADING;
	spin_unlock(&buf->lock);
	return same;
}

/*
 * The page for (link, pgoff), read from the backing file on a miss. Returns it locked
 * and with a reference for the page-table entry the caller's fault installs.
 */
int dm_buffer_fault(struct dm_link *link, pgoff_t pgoff, struct folio **out)
{
	struct dm_buffer *buf = link->buf;
	u64 key = dm_key(link, pgoff);
	bool counted = false;
	int err;

	for (;;) {
		struct folio *folio;
		bool demoted;
		u32 s;

		if (fatal_signal_pending(current))
			return -EINTR;
		spin_lock(&buf->lock);
		s = dmp_lookup(&buf->pol, key);
		if (s == DMP_NIL) {
			spin_unlock(&buf->lock);
			err = dm_load(link, pgoff, key);
			if (err && err != -EAGAIN)
				return err;
			counted |= !err;
			continue;
		}
		if (buf->pol.pages[s].state == DMP_LOADING) {
			spin_unlock(&buf->lock);
			wait_event(buf->wait, !dm_loading(buf, s, key));
			continue;
		}
		demoted = dm_touch(buf, s, counted);
		counted = true;
		folio = buf->slots[s].folio;
		folio_get(folio);
		spin_unlock(&buf->lock);
		dm_kick_unmap(buf, demoted);

		folio_lock(folio);
		if (dm_slot_holds(buf, s, key, folio)) {
			*out = folio;
			return 0;
		}
		folio_unlock(folio);	/* evicted meanwhile: start over */
		folio_put(folio);
	}
}

/* ---- msync, fsync, DIMMAP_IOC_SYNC and unlink ---- */

static bool dm_sync_wants(struct dm_buffer *buf, u32 s, struct dm_link *link, pgoff_t first,
			  pgoff_t last, bool drop)
{
	u8 state = buf->pol.pages[s].state;
	struct dm_slot *sl = &buf->slots[s];

	if (state != DMP_PRIMARY && state != DMP_HOT && state != DMP_EVICT)
		return false;
	if (sl->link != link || sl->pgoff < first || sl->pgoff > last)
		return false;
	return drop || folio_test_dirty(sl->folio);
}

/* Collects up to a batch of the link's slots in [first, last] from *cursor on. */
static u32 dm_sync_collect(struct dm_buffer *buf, struct dm_link *link, pgoff_t first,
			   pgoff_t last, bool drop, u32 *cursor)
{
	u32 n = 0, end = min(*cursor + DM_SCAN_CHUNK, buf->pol.par.npages);

	spin_lock(&buf->lock);
	for (; *cursor < end && n < buf->pol.par.batch; (*cursor)++) {
		if (!dm_sync_wants(buf, *cursor, link, first, last, drop))
			continue;
		buf->flush[n].slot = *cursor;
		buf->flush[n].key = buf->pol.pages[*cursor].key;
		n++;
	}
	spin_unlock(&buf->lock);
	return n;
}

static int dm_buffer_range(struct dm_link *link, pgoff_t first, pgoff_t last,
			   enum dm_pass pass, u64 *written, u64 *dropped)
{
	struct dm_buffer *buf = link->buf;
	bool all = pass != DM_PASS_SYNC;
	u32 cursor = 0, freed = 0;
	int err = 0;

	if (last >= link->npages)
		last = link->npages - 1;
	if (first > last)
		return 0;
	unmap_mapping_pages(dm_link_mapping(link), first, last - first + 1, false);
	mutex_lock(&buf->evict_lock);
	while (cursor < buf->pol.par.npages) {
		u32 n = dm_sync_collect(buf, link, first, last, all, &cursor);

		if (n)
			freed += dm_pass(buf, n, pass, written, &err);
		cond_resched();
	}
	mutex_unlock(&buf->evict_lock);
	if (dropped)
		*dropped += freed;
	return err;
}

/*
 * Writes back the link's dirty pages in [first, last] and, with drop, frees them.
 * Pages mapped right now are unmapped first so their dirty bits are seen. Returns 0 or
 * the first writeback error.
 */
int dm_buffer_sync(struct dm_link *link, pgoff_t first, pgoff_t last, bool drop,
		   u64 *written, u64 *dropped)
{
	return dm_buffer_range(link, first, last, drop ? DM_PASS_DROP : DM_PASS_SYNC,
			       written, dropped);
}

/* Frees all the link's pages without writing them (writeback failed at unload). */
void dm_buffer_discard(struct dm_link *link)
{
	dm_buffer_range(link, 0, link->npages - 1, DM_PASS_DISCARD, NULL, NULL);
}

/* ---- statistics ---- */

static u64 dm_count_dirty(struct dm_buffer *buf)
{
	u32 s = 0, end;
	u64 dirty = 0;

	while (s < buf->pol.par.npages) {
		end = min(s + DM_SCAN_CHUNK, buf->pol.par.npages);
		spin_lock(&buf->lock);
		for (; s < end; s++)
			if (buf->pol.pages[s].state != DMP_FREE &&
			    folio_test_dirty(buf->slots[s].folio))
				dirty++;
		spin_unlock(&buf->lock);
		cond_resched();
	}
	return dirty;
}

void dm_buffer_stats(struct dm_buffer *buf, struct dimmap_kstats *out)
{
	u64 dirty = dm_count_dirty(buf);

	spin_lock(&buf->lock);
	*out = buf->st;
	out->hot_promotions = buf->pol.cnt.hot_promotions;
	out->eviction_batches = buf->pol.cnt.batches;
	out->demotions = buf->pol.cnt.demotions;
	out->buffer_pages = buf->pol.par.npages;
	out->resident_pages = dmp_resident(&buf->pol);
	spin_unlock(&buf->lock);
	out->dirty_pages = dirty;
}

/* ---- setup and teardown ---- */

static void dm_buffer_free(struct dm_buffer *buf)
{
	u32 i;

	if (buf->slots) {
		for (i = 0; i < buf->pol.par.npages; i++) {
			struct folio *folio = buf->slots[i].folio;

			if (!folio)
				break;
			WARN_ON_ONCE(folio_ref_count(folio) != 1);
			folio_clear_dirty(folio);
			folio_put(folio);
		}
	}
	kvfree(buf->slots);
	kvfree(buf->pages);
	kvfree(buf->buckets);
	kvfree(buf->unmap_ring);
	kfree(buf->leaving);
	kfree(buf->flush);
	kfree(buf->bvec);
	kfree(buf->writes);
	kfree(buf);
}

static int dm_buffer_alloc_pages(struct dm_buffer *buf)
{
	u32 i;

	for (i = 0; i < buf->pol.par.npages; i++) {
		buf->slots[i].folio = folio_alloc(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, 0);
		if (!buf->slots[i].folio)
			return -ENOMEM;
		if (!(i % 1024))
			cond_resched();
	}
	return 0;
}

struct dm_buffer *dm_buffer_create(unsigned int index, u32 npages, u32 hot_permille,
				   u32 evict_permille, u32 batch)
{
	struct dmp_params par;
	struct dm_buffer *buf;

	if (dmp_params_init(&par, npages, hot_permille, evict_permille, batch))
		return ERR_PTR(-EINVAL);
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->index = index;
	buf->pol.par = par;	/* dm_buffer_free needs npages before dmp_init */
	buf->pages = kvcalloc(par.npages, sizeof(*buf->pages), GFP_KERNEL);
	buf->buckets = kvcalloc(par.nbuckets, sizeof(*buf->buckets), GFP_KERNEL);
	buf->slots = kvcalloc(par.npages, sizeof(*buf->slots), GFP_KERNEL);
	buf->unmap_ring = kvcalloc(par.npages, sizeof(*buf->unmap_ring), GFP_KERNEL);
	buf->leaving = kcalloc(par.batch, sizeof(*buf->leaving), GFP_KERNEL);
	buf->flush = kcalloc(par.batch, sizeof(*buf->flush), GFP_KERNEL);
	buf->bvec = kcalloc(par.batch, sizeof(*buf->bvec), GFP_KERNEL);
	buf->writes = kcalloc(par.batch, sizeof(*buf->writes), GFP_KERNEL);
	if (!buf->pages || !buf->buckets || !buf->slots || !buf->unmap_ring || !buf->leaving ||
	    !buf->flush || !buf->bvec || !buf->writes)
		goto nomem;
	if (dm_buffer_alloc_pages(buf))
		goto nomem;
	dmp_init(&buf->pol, &par, buf->pages, buf->buckets);
	spin_lock_init(&buf->lock);
	mutex_init(&buf->evict_lock);
	init_waitqueue_head(&buf->wait);
	INIT_WORK(&buf->evict_work, dm_evict_worker);
	INIT_WORK(&buf->unmap_work, dm_unmap_worker);
	return buf;

nomem:
	dm_buffer_free(buf);
	return ERR_PTR(-ENOMEM);
}

/* Every link is gone by now, so every slot is free. */
void dm_buffer_destroy(struct dm_buffer *buf)
{
	cancel_work_sync(&buf->evict_work);
	cancel_work_sync(&buf->unmap_work);
	WARN_ON_ONCE(dmp_resident(&buf->pol) || buf->pol.loading || buf->pol.leaving);
	dm_buffer_free(buf);
}
