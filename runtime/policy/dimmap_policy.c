// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The DI-MMAP page-buffer policy. See dimmap_policy.h.
 * Kernel coding style: this file is also compiled into dimmap.ko.
 */
#include "dimmap_policy.h"

/* ---- queues (intrusive, doubly linked through slot indices) ---- */

static void q_init(struct dmp_queue *q)
{
	q->head = DMP_NIL;
	q->tail = DMP_NIL;
	q->len = 0;
}

static void q_push_tail(struct dmp_policy *p, struct dmp_queue *q, dmp_u32 s)
{
	struct dmp_page *pg = &p->pages[s];

	pg->prev = q->tail;
	pg->next = DMP_NIL;
	if (q->tail != DMP_NIL)
		p->pages[q->tail].next = s;
	else
		q->head = s;
	q->tail = s;
	q->len++;
}

static void q_unlink(struct dmp_policy *p, struct dmp_queue *q, dmp_u32 s)
{
	struct dmp_page *pg = &p->pages[s];

	if (pg->prev != DMP_NIL)
		p->pages[pg->prev].next = pg->next;
	else
		q->head = pg->next;
	if (pg->next != DMP_NIL)
		p->pages[pg->next].prev = pg->prev;
	else
		q->tail = pg->prev;
	pg->prev = DMP_NIL;
	pg->next = DMP_NIL;
	q->len--;
}

static struct dmp_queue *queue_of(struct dmp_policy *p, dmp_u8 state)
{
	switch (state) {
	case DMP_FREE:
		return &p->free;
	case DMP_PRIMARY:
		return &p->primary;
	case DMP_HOT:
		return &p->hot;
	case DMP_EVICT:
		return &p->evict;
	default:
		return (struct dmp_queue *)0; /* LOADING and LEAVING pages are in no queue */
	}
}

/* ---- page location table ---- */

static dmp_u32 bucket_of(const struct dmp_policy *p, dmp_u64 key)
{
	/* Fibonacci hashing spreads consecutive page numbers over the buckets. */
	return (dmp_u32)((key * 0x9E3779B97F4A7C15ull) >> p->hash_shift);
}

static void hash_insert(struct dmp_policy *p, dmp_u32 s)
{
	struct dmp_bucket *b = &p->buckets[bucket_of(p, p->pages[s].key)];

	p->pages[s].hnext = b->head;
	b->head = s;
}

static void hash_remove(struct dmp_policy *p, dmp_u32 s)
{
	struct dmp_bucket *b = &p->buckets[bucket_of(p, p->pages[s].key)];
	dmp_u32 *link = &b->head;

	while (*link != DMP_NIL) {
		if (*link == s) {
			*link = p->pages[s].hnext;
			p->pages[s].hnext = DMP_NIL;
			return;
		}
		link = &p->pages[*link].hnext;
	}
}

/* A page leaves the buffer: its fault count raises the bucket's history, or decays it. */
static void bucket_remember(struct dmp_policy *p, dmp_u32 s)
{
	struct dmp_bucket *b = &p->buckets[bucket_of(p, p->pages[s].key)];
	dmp_u32 f = p->pages[s].faults;

	if (f > b->faults)
		b->faults = f;
	else if (f == b->faults && b->faults > 1)
		b->faults--;
}

/* ---- setup ---- */

int dmp_params_init(struct dmp_params *par, dmp_u32 npages, dmp_u32 hot_permille,
		    dmp_u32 evict_permille, dmp_u32 batch)
{
	dmp_u64 evict, hot;
	dmp_u32 nb = 1;

	if (npages < DMP_MIN_PAGES || hot_permille > 999 || evict_permille < 1 ||
	    evict_permille > 499)
		return -1;
	if (batch < 1)
		batch = 1;
	if (batch > npages / 8)
		batch = npages / 8;
	evict = (dmp_u64)npages * evict_permille / 1000;
	if (evict < 2ull * batch)
		evict = 2ull * batch;
	if (evict > npages / 2)
		evict = npages / 2;
	hot = (dmp_u64)npages * hot_permille / 1000;
	/* The primary FIFO keeps at least one page beside a full hot FIFO. */
	if (hot > npages - evict - 1)
		hot = npages - evict - 1;
	while (nb < npages && nb < (1u << 31))
		nb <<= 1;
	par->npages = npages;
	par->nbuckets = nb;
	par->mapped_cap = npages - (dmp_u32)evict;
	par->hot_cap = (dmp_u32)hot;
	par->evict_pages = (dmp_u32)evict;
	par->batch = batch;
	par->reserve = batch;
	return 0;
}

void dmp_init(struct dmp_policy *p, const struct dmp_params *par, struct dmp_page *pages,
	      struct dmp_bucket *buckets)
{
	dmp_u32 i, bits = 0;

	p->par = *par;
	p->pages = pages;
	p->buckets = buckets;
	while ((1u << bits) < par->nbuckets)
		bits++;
	p->hash_shift = 64 - bits; /* nbuckets >= DMP_MIN_PAGES, so bits >= 4 */
	q_init(&p->free);
	q_init(&p->primary);
	q_init(&p->hot);
	q_init(&p->evict);
	p->loading = 0;
	p->leaving = 0;
	p->fault_sum = 0;
	p->lent = 0;
	p->cnt.allocs = 0;
	p->cnt.recoveries = 0;
	p->cnt.hot_promotions = 0;
	p->cnt.demotions = 0;
	p->cnt.batches = 0;
	p->cnt.releases = 0;
	for (i = 0; i < par->nbuckets; i++) {
		buckets[i].head = DMP_NIL;
		buckets[i].faults = 0;
	}
	for (i = 0; i < par->npages; i++) {
		pages[i].key = 0;
		pages[i].hnext = DMP_NIL;
		pages[i].faults = 0;
		pages[i].state = DMP_FREE;
		pages[i].flags = 0;
		q_push_tail(p, &p->free, i);
	}
}

/* ---- lookups and transitions ---- */

dmp_u32 dmp_lookup(const struct dmp_policy *p, dmp_u64 key)
{
	dmp_u32 s = p->buckets[bucket_of(p, key)].head;

	while (s != DMP_NIL && p->pages[s].key != key)
		s = p->pages[s].hnext;
	return s;
}

dmp_u32 dmp_alloc(struct dmp_policy *p, dmp_u64 key)
{
	dmp_u32 s = p->free.head;
	dmp_u32 seed;

	if (s == DMP_NIL)
		return DMP_NIL;
	q_unlink(p, &p->free, s);
	p->pages[s].key = key;
	p->pages[s].state = DMP_LOADING;
	p->pages[s].flags = 0;
	hash_insert(p, s);
	seed = p->buckets[bucket_of(p, key)].faults;
	p->pages[s].faults = (dmp_u16)(seed < 1 ? 1 : seed > DMP_MAX_FAULTS ? DMP_MAX_FAULTS : seed);
	p->loading++;
	p->cnt.allocs++;
	return s;
}

int dmp_is_hot(const struct dmp_policy *p, dmp_u32 s)
{
	dmp_u32 n = dmp_resident(p);

	/* faults > sum / n, without division (the kernel lacks 64-bit division helpers here) */
	return n > 0 && (dmp_u64)p->pages[s].faults * n > p->fault_sum;
}

/* Removes a resident page from the average. */
static void forget_fault(struct dmp_policy *p, dmp_u32 s)
{
	p->fault_sum -= p->pages[s].faults;
}

static void move_to(struct dmp_policy *p, dmp_u32 s, dmp_u8 state)
{
	struct dmp_queue *from = queue_of(p, p->pages[s].state);

	if (from)
		q_unlink(p, from, s);
	p->pages[s].state = state;
	q_push_tail(p, queue_of(p, state), s);
}

/* The FIFOs' budget and the hot FIFO's capacity, less the lent slots (dmp_lend). */
static dmp_u32 mapped_cap(const struct dmp_policy *p)
{
	return p->par.mapped_cap - p->lent;
}

static dmp_u32 hot_cap(const struct dmp_policy *p)
{
	return p->par.hot_cap > p->lent ? p->par.hot_cap - p->lent : 0;
}

/* Moves a FIFO page into the eviction queue; returns it (the caller unmaps it). */
static dmp_u32 demote(struct dmp_policy *p, dmp_u32 s)
{
	move_to(p, s, DMP_EVICT);
	p->cnt.demotions++;
	return s;
}

/*
 * A page just entered the primary FIFO. While primary + hot exceed their budget, displace
 * the oldest primary page. Exactly one page ends in the eviction queue once the buffer is
 * full; primary -> hot moves on the way do not shrink primary + hot.
 */
static dmp_u32 displace(struct dmp_policy *p)
{
	while (p->primary.len + p->hot.len > mapped_cap(p)) {
		dmp_u32 old = p->primary.head;

		if (p->par.hot_cap > 0 && dmp_is_hot(p, old)) {
			move_to(p, old, DMP_HOT);
			p->cnt.hot_promotions++;
			if (p->hot.len <= hot_cap(p))
				continue;
			old = p->hot.head;
		}
		return demote(p, old);
	}
	return DMP_NIL;
}

dmp_u32 dmp_loaded(struct dmp_policy *p, dmp_u32 s)
{
	p->loading--;
	p->fault_sum += p->pages[s].faults;
	p->pages[s].state = DMP_PRIMARY;
	q_push_tail(p, &p->primary, s);
	return displace(p);
}

void dmp_abort(struct dmp_policy *p, dmp_u32 s)
{
	p->loading--;
	hash_remove(p, s);
	p->pages[s].state = DMP_FREE;
	p->pages[s].flags = 0;
	q_push_tail(p, &p->free, s);
}

dmp_u32 dmp_recover(struct dmp_policy *p, dmp_u32 s)
{
	struct dmp_page *pg = &p->pages[s];

	if (pg->state == DMP_LEAVING) {
		p->leaving--;
		pg->state = DMP_PRIMARY;
		q_push_tail(p, &p->primary, s);
	} else {
		forget_fault(p, s);
		move_to(p, s, DMP_PRIMARY);
	}
	if (pg->faults < DMP_MAX_FAULTS)
		pg->faults++;
	p->fault_sum += pg->faults;
	p->cnt.recoveries++;
	return displace(p);
}

int dmp_wants_eviction(const struct dmp_policy *p)
{
	return p->free.len < p->par.reserve + p->lent && p->evict.len > 0;
}

dmp_u32 dmp_lend(struct dmp_policy *p, dmp_u32 pages)
{
	p->lent = pages < p->par.mapped_cap / 2 ? pages : p->par.mapped_cap / 2;
	return p->lent;
}

dmp_u32 dmp_shrink(struct dmp_policy *p)
{
	return p->hot.len > hot_cap(p) ? demote(p, p->hot.head) : displace(p);
}

dmp_u32 dmp_evict_batch(struct dmp_policy *p, dmp_u32 *out, dmp_u32 max)
{
	dmp_u32 n = 0, s = p->evict.head;

	while (s != DMP_NIL && n < max) {
		dmp_u32 next = p->pages[s].next;

		if (!(p->pages[s].flags & DMP_F_BUSY)) {
			q_unlink(p, &p->evict, s);
			forget_fault(p, s);
			p->pages[s].state = DMP_LEAVING;
			p->leaving++;
			out[n++] = s;
		}
		s = next;
	}
	if (n)
		p->cnt.batches++;
	return n;
}

static void make_free(struct dmp_policy *p, dmp_u32 s)
{
	bucket_remember(p, s);
	hash_remove(p, s);
	p->pages[s].state = DMP_FREE;
	p->pages[s].flags = 0;
	q_push_tail(p, &p->free, s);
	p->cnt.releases++;
}

void dmp_release(struct dmp_policy *p, dmp_u32 s)
{
	p->leaving--;
	make_free(p, s);
}

void dmp_remove(struct dmp_policy *p, dmp_u32 s)
{
	struct dmp_page *pg = &p->pages[s];

	if (pg->state == DMP_LEAVING) {
		p->leaving--;
	} else {
		forget_fault(p, s);
		q_unlink(p, queue_of(p, pg->state), s);
	}
	make_free(p, s);
}

dmp_u32 dmp_resident(const struct dmp_policy *p)
{
	return p->primary.len + p->hot.len + p->evict.len;
}

/* ---- consistency check ---- */

static int check_queue(const struct dmp_policy *p, const struct dmp_queue *q, dmp_u8 state,
		       dmp_u64 *sum)
{
	dmp_u32 n = 0, prev = DMP_NIL, s = q->head;

	while (s != DMP_NIL) {
		if (s >= p->par.npages || p->pages[s].state != state || p->pages[s].prev != prev)
			return 1;
		*sum += p->pages[s].faults;
		prev = s;
		s = p->pages[s].next;
		if (++n > p->par.npages)
			return 2; /* cycle */
	}
	return (n != q->len || q->tail != prev) ? 3 : 0;
}

int dmp_check(const struct dmp_policy *p)
{
	dmp_u64 sum = 0, free_sum = 0;
	dmp_u32 i, loading = 0, leaving = 0, hashed = 0, in_use = 0;

	if (check_queue(p, &p->free, DMP_FREE, &free_sum) ||
	    check_queue(p, &p->primary, DMP_PRIMARY, &sum) ||
	    check_queue(p, &p->hot, DMP_HOT, &sum) ||
	    check_queue(p, &p->evict, DMP_EVICT, &sum))
		return 10;
	if (sum != p->fault_sum)
		return 11;
	if (p->hot.len > hot_cap(p) || p->primary.len + p->hot.len > mapped_cap(p))
		return 12;
	for (i = 0; i < p->par.npages; i++) {
		if (p->pages[i].state == DMP_LOADING)
			loading++;
		if (p->pages[i].state == DMP_LEAVING)
			leaving++;
		if (p->pages[i].state != DMP_FREE) {
			in_use++;
			if (dmp_lookup(p, p->pages[i].key) != i)
				return 13; /* not findable, or a duplicate key shadows it */
		}
	}
	if (loading != p->loading || leaving != p->leaving)
		return 14;
	for (i = 0; i < p->par.nbuckets; i++) {
		dmp_u32 s = p->buckets[i].head;

		while (s != DMP_NIL) {
			if (p->pages[s].state == DMP_FREE || bucket_of(p, p->pages[s].key) != i)
				return 15;
			if (++hashed > p->par.npages)
				return 16;
			s = p->pages[s].hnext;
		}
	}
	if (hashed != in_use || in_use + p->free.len != p->par.npages)
		return 17;
	return 0;
}
