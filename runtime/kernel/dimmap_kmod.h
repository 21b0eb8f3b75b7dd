/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dimmap_kmod.h - internal definitions of dimmap.ko.
 *
 * A buffer is a fixed pool of pages managed by the DI-MMAP policy (dimmap_policy.c,
 * shared with the user-space engine). A link redirects to a backing block device or
 * regular file; its pages live in one buffer. A link is either a pseudo-device
 * /dev/dimmapN (dimmapctl link) or a file of a dimmapfs mount (dimmap_overlay.c).
 *
 * Locking, outermost first:
 *   mmap_lock (page faults)  ->  buf->evict_lock  ->  folio lock  ->  i_mmap_rwsem
 *   ->  page table locks;  buf->lock (a spinlock) is innermost and never held across
 *   anything that sleeps. dm_links_lock guards the link table and link->opens; it is
 *   never held while calling misc_register/misc_deregister (misc_open holds misc_mtx
 *   while it calls our open, which takes dm_links_lock).
 *
 * Pages demoted to the eviction queue are unmapped by a worker (unmap_work), not by
 * the faulting thread: each unmap is a TLB shootdown, and a module cannot batch them
 * into one (the kernel's batched flush is not exported), so they stay off the fault path.
 *
 * A resident page keeps one reference from the pool plus one per page-table entry.
 * A fault returns the page locked (VM_FAULT_LOCKED) after checking, under the folio
 * lock, that the slot still holds its key; eviction takes the folio lock, unmaps the
 * page from every process and only then frees the slot, so no page-table entry can
 * be installed for a page that changed hands.
 */
#ifndef DIMMAP_KMOD_H
#define DIMMAP_KMOD_H

#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dimmap_policy.h"
#include "dimmap_uapi.h"

#define DM_PGOFF_BITS	44	/* policy key = link id << DM_PGOFF_BITS | page index */
#define DM_MAX_PGOFF	((1ull << DM_PGOFF_BITS) - 1)

struct dm_link;

/* Caller-owned flag in dmp_page.flags: the page is queued for unmap_work. */
#define DM_F_UNMAP	0x02u

struct dm_slot {
	struct folio *folio;	/* the pool page (replaced if pinned when it leaves) */
	struct dm_link *link;	/* owner while the slot is not free */
	pgoff_t pgoff;		/* page index in the owner */
};

/* One page of a writeback or eviction pass; scratch owned by buf->evict_lock holders. */
struct dm_flush_entry {
	u64 key;
	u32 slot;
	bool dirty;
	int err;
	bool replaced;		/* the slot got spare instead of folio */
	struct folio *folio;	/* locked during the pass */
	struct folio *spare;	/* replaces a pinned folio */
};

/* Writes in flight together; dm_write_wait returns when all are done. */
struct dm_write_batch {
	atomic_t pending;
	struct completion done;
	u64 perma_due;			/* latency model: the batch's last completion */
	unsigned int perma_requests;
};

/* One write of adjacent pages, possibly completing asynchronously (O_DIRECT). */
struct dm_write {
	struct kiocb iocb;
	struct dm_write_batch *batch;
	size_t bytes;
	int err;
	u32 first, len;		/* the buf->flush entries it covers */
};

struct dm_buffer {
	unsigned int index;
	spinlock_t lock;		/* pol, slots[].link/pgoff/folio, st */
	struct dmp_policy pol;
	struct dmp_page *pages;
	struct dmp_bucket *buckets;
	struct dm_slot *slots;
	struct mutex evict_lock;	/* one eviction or writeback pass at a time */
	/* Scratch arrays of par.batch entries, used under evict_lock: */
	u32 *leaving;			/* slots chosen by dmp_evict_batch */
	struct dm_flush_entry *flush;
	struct bio_vec *bvec;
	struct dm_write *writes;
	wait_queue_head_t wait;		/* a load finished or slots were freed */
	struct work_struct evict_work;	/* refills the free reserve in the background */
	/* Demoted pages waiting to be unmapped by unmap_work (a ring of slots, lock): */
	u32 *unmap_ring;
	u32 unmap_head, unmap_len;
	struct work_struct unmap_work;
	struct dimmap_kstats st;	/* under lock */
};

struct dm_link {
	struct kref ref;		/* the link table's plus transient users' */
	u32 id;
	struct dm_buffer *buf;
	struct file *backing;
	struct inode *inode;		/* anonymous: one address_space for all opens */
	pgoff_t npages;
	bool writable;
	bool ready;			/* misc device registered (dm_links_lock) */
	bool dying;			/* being unlinked (dm_links_lock) */
	bool fs_owned;			/* a dimmapfs file's: no /dev node, not unlinkable */
	unsigned int opens;		/* dm_links_lock */
	int wb_err;			/* first writeback error since fsync (xchg) */
	char name[24];
	struct miscdevice misc;
};

/* dimmap_main.c */
extern struct vfsmount *dm_mnt;
extern unsigned int dm_nr_buffers;
extern struct dm_buffer *dm_buffers[DIMMAP_MAX_BUFFERS];
void dm_fill_version(struct dimmap_version *v);

/* dimmap_buffer.c: the page buffer */
struct dm_buffer *dm_buffer_create(unsigned int index, u32 npages, u32 hot_permille,
				   u32 evict_permille, u32 batch);
void dm_buffer_destroy(struct dm_buffer *buf);
int dm_buffer_fault(struct dm_link *link, pgoff_t pgoff, struct folio **out);
int dm_buffer_sync(struct dm_link *link, pgoff_t first, pgoff_t last, bool drop,
		   u64 *written, u64 *dropped);
void dm_buffer_discard(struct dm_link *link);
void dm_buffer_stats(struct dm_buffer *buf, struct dimmap_kstats *out);

/* dimmap_io.c: reads and writes of the backing file */
int dm_read_page(struct dm_link *link, pgoff_t pgoff, struct folio *folio);
void dm_write_batch_init(struct dm_write_batch *batch);
void dm_write_start(struct dm_link *link, pgoff_t pgoff, struct bio_vec *bv, unsigned int n,
		    struct dm_write *w, struct dm_write_batch *batch);
void dm_write_wait(struct dm_write_batch *batch);

/* dimmap_perma.c: the optional PerMA latency model (module parameter perma=) */
int dm_perma_init(void);
u64 dm_perma_begin(unsigned int pages);
void dm_perma_end(u64 due, unsigned int requests);

/* dimmap_link.c: /dev/dimmapN */
int dm_link_create(int fd, struct dm_buffer *buf, struct dm_link **out);
int dm_link_create_file(struct file *file, struct dm_buffer *buf, bool device,
			struct dm_link **out);
int dm_link_drop_owned(struct dm_link *link);
int dm_link_mmap_vma(struct dm_link *link, struct vm_area_struct *vma);
int dm_link_unlink(u32 id);
void dm_link_unlink_all(void);
struct dm_link *dm_link_get(u32 id);
void dm_link_put(struct dm_link *link);
int dm_link_info(u32 id, struct dimmap_link_info *info);

static inline u64 dm_key(const struct dm_link *link, pgoff_t pgoff)
{
	return ((u64)link->id << DM_PGOFF_BITS) | pgoff;
}

static inline struct address_space *dm_link_mapping(const struct dm_link *link)
{
	return link->inode->i_mapping;
}

/* dimmap_fs.c: the dimmapfs overlay (mount -t dimmapfs -o source=DIR) */
int dm_overlay_register(void);
void dm_overlay_unregister(void);

/* dimmap_ctl.c: /dev/dimmap_ctl */
int dm_ctl_register(void);
void dm_ctl_unregister(void);

#endif /* DIMMAP_KMOD_H */
