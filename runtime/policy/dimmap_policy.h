/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The DI-MMAP page-buffer policy (DI-MMAP 2015 paper, section 2).
 *
 * A fixed pool of page slots moves through these states:
 *
 *   FREE --alloc--> LOADING --loaded--> PRIMARY --(faults > average)--> HOT
 *                                          |                             |
 *                                          +--------> EVICT <------------+
 *                                                       |  ^ recover (fault on a victim page)
 *                                              evict_batch |
 *                                                       v  |
 *                                                    LEAVING --release--> FREE
 *
 * On a miss the caller takes a free slot (alloc), reads the page, and reports it loaded:
 * the page enters the primary FIFO. When the mapped pages (primary + hot) exceed their
 * budget, the oldest primary page is displaced: into the hot FIFO if its fault count
 * exceeds the buffer's average, else into the eviction queue; a page pushed out of the
 * hot FIFO goes to the eviction queue. Each insertion demotes at most one page, which the
 * caller unmaps (in bulk, one TLB flush per batch). A fault on a page in the eviction
 * queue recovers it into the primary FIFO with no I/O and bumps its fault count. Pages
 * leave the eviction queue in batches (evict_batch); the caller writes dirty ones back,
 * frees them and calls release. The page location table is a chained hash whose buckets
 * keep a decaying fault count: a new page starts with its bucket's count; a leaving page
 * raises the bucket's count to its own, or decays it by one (minimum 1) when equal.
 *
 * Plain C with no allocation, no libc and no OS calls: the caller hands in the slot and
 * bucket arrays and acts on the results. The same source is compiled into the user-space
 * engine and the kernel module. Not thread-safe: the caller serializes calls.
 */
#ifndef DIMMAP_POLICY_H
#define DIMMAP_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef u64 dmp_u64;
typedef u32 dmp_u32;
typedef u16 dmp_u16;
typedef u8 dmp_u8;
#else
#include <stdint.h>
typedef uint64_t dmp_u64;
typedef uint32_t dmp_u32;
typedef uint16_t dmp_u16;
typedef uint8_t dmp_u8;
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DMP_NIL 0xffffffffu
#define DMP_MIN_PAGES 16u
#define DMP_MAX_FAULTS 0xffffu

enum dmp_state {
	DMP_FREE = 0,
	DMP_LOADING,
	DMP_PRIMARY,
	DMP_HOT,
	DMP_EVICT,
	DMP_LEAVING,
};

/*
 * Flag bits in dmp_page.flags. DMP_F_BUSY is honoured by the policy (a busy page is never
 * chosen to leave); the other bits belong to the caller (dirty, write-protected, ...).
 */
#define DMP_F_BUSY 0x01u

struct dmp_page {
	dmp_u64 key;    /* caller's page identity, e.g. (region << 36) | page index */
	dmp_u32 hnext;  /* next slot in the hash chain */
	dmp_u32 prev;   /* queue links */
	dmp_u32 next;
	dmp_u16 faults; /* fault count (saturating) */
	dmp_u8 state;   /* enum dmp_state */
	dmp_u8 flags;
};

struct dmp_bucket {
	dmp_u32 head;   /* first slot in the chain, DMP_NIL if empty */
	dmp_u32 faults; /* decaying fault history that seeds new pages */
};

struct dmp_queue {
	dmp_u32 head; /* oldest */
	dmp_u32 tail; /* newest */
	dmp_u32 len;
};

/* Sizes derived from the configuration (dmp_params_init). */
struct dmp_params {
	dmp_u32 npages;      /* slots in the pool */
	dmp_u32 nbuckets;    /* power of two */
	dmp_u32 mapped_cap;  /* primary + hot may hold at most this many pages */
	dmp_u32 hot_cap;     /* hot FIFO capacity (0 = no hot FIFO) */
	dmp_u32 evict_pages; /* eviction queue target length: npages - mapped_cap */
	dmp_u32 batch;       /* pages per eviction batch */
	dmp_u32 reserve;     /* keep at least this many free slots (= batch) */
};

struct dmp_counters {
	dmp_u64 allocs;         /* misses given a slot */
	dmp_u64 recoveries;     /* faults on pages in the eviction queue (or leaving) */
	dmp_u64 hot_promotions; /* primary -> hot */
	dmp_u64 demotions;      /* primary or hot -> eviction queue */
	dmp_u64 batches;        /* evict_batch calls that chose pages */
	dmp_u64 releases;       /* pages returned to the free pool */
};

struct dmp_policy {
	struct dmp_params par;
	struct dmp_page *pages;
	struct dmp_bucket *buckets;
	dmp_u32 hash_shift;
	struct dmp_queue free, primary, hot, evict;
	dmp_u32 loading, leaving;  /* counts of slots in those states */
	dmp_u64 fault_sum;         /* sum of fault counts over primary, hot and evict pages */
	dmp_u32 lent;              /* slots lent back (dmp_lend): kept free, the FIFOs' caps lower */
	struct dmp_counters cnt;
};

/*
 * Computes sizes for a pool of npages slots. hot_permille and evict_permille are shares
 * of the pool (0-999 and 1-499); batch is clamped to [1, npages/8]. Returns 0, or -1 if
 * npages < DMP_MIN_PAGES or a share is out of range.
 */
int dmp_params_init(struct dmp_params *par, dmp_u32 npages, dmp_u32 hot_permille,
		    dmp_u32 evict_permille, dmp_u32 batch);

/* pages[par->npages] and buckets[par->nbuckets] are owned by the caller. */
void dmp_init(struct dmp_policy *p, const struct dmp_params *par, struct dmp_page *pages,
	      struct dmp_bucket *buckets);

/* Slot holding key (in any state but FREE), or DMP_NIL. */
dmp_u32 dmp_lookup(const struct dmp_policy *p, dmp_u64 key);

/*
 * Miss: takes a free slot for key (state LOADING, in the hash, fault count seeded from its
 * bucket). Returns DMP_NIL when no slot is free: evict a batch and release pages first.
 * The key must not be present.
 */
dmp_u32 dmp_alloc(struct dmp_policy *p, dmp_u64 key);

/*
 * The read finished: LOADING -> PRIMARY. Returns the slot demoted to the eviction queue by
 * this insertion (the caller must unmap it), or DMP_NIL.
 */
dmp_u32 dmp_loaded(struct dmp_policy *p, dmp_u32 slot);

/* The read failed: LOADING -> FREE without touching the fault history. */
void dmp_abort(struct dmp_policy *p, dmp_u32 slot);

/*
 * Fault on a page in the eviction queue or leaving: back into the primary FIFO with its
 * fault count bumped. Returns the slot demoted by the insertion, or DMP_NIL.
 */
dmp_u32 dmp_recover(struct dmp_policy *p, dmp_u32 slot);

/* Nonzero when fewer than `reserve` (plus the lent) slots are free and the eviction queue has pages. */
int dmp_wants_eviction(const struct dmp_policy *p);

/*
 * Moves up to max of the oldest non-busy pages from the eviction queue to LEAVING and
 * stores their slots in out. Returns how many.
 */
dmp_u32 dmp_evict_batch(struct dmp_policy *p, dmp_u32 *out, dmp_u32 max);

/*
 * A leaving page was written back (if dirty) and freed: LEAVING -> FREE, updating its
 * bucket's fault history.
 */
void dmp_release(struct dmp_policy *p, dmp_u32 slot);

/*
 * Drops a page in any state but FREE or LOADING at once (e.g. its mapping is going
 * away), updating the fault history like dmp_release.
 */
void dmp_remove(struct dmp_policy *p, dmp_u32 slot);

/*
 * Lends `pages` slots of the pool back, or fewer (at most half the FIFOs' budget); returns how
 * many. The FIFOs' budget and the hot FIFO's capacity shrink by that many (the hot FIFO's to
 * no less than 0), and eviction keeps that many more slots free: the pages in use shrink by
 * it, for a caller whose memory is short. 0 returns them. The caller then demotes with
 * dmp_shrink until it returns DMP_NIL, and evicts while dmp_wants_eviction.
 */
dmp_u32 dmp_lend(struct dmp_policy *p, dmp_u32 pages);

/*
 * Demotes one page to the eviction queue if the FIFOs exceed their budget (after dmp_lend):
 * the oldest hot page while the hot FIFO is over its capacity, else as an insertion would.
 * Returns the slot (the caller unmaps it), or DMP_NIL once within the budget.
 */
dmp_u32 dmp_shrink(struct dmp_policy *p);

/* Pages resident in the FIFOs and the eviction queue (not loading, leaving or free). */
dmp_u32 dmp_resident(const struct dmp_policy *p);

/* Nonzero if the page would go to the hot FIFO now (fault count above the average). */
int dmp_is_hot(const struct dmp_policy *p, dmp_u32 slot);

/*
 * Checks every internal invariant (queue links and lengths, hash membership, state
 * counts, fault sum). Returns 0 if consistent, else a nonzero code naming the first
 * violation. For tests and debug builds: O(npages + nbuckets).
 */
int dmp_check(const struct dmp_policy *p);

#ifdef __cplusplus
}
#endif

#endif /* DIMMAP_POLICY_H */
