/*
 * hpmmap.h - an HPMMAP-style memory arena: large pages, reserved on request at start.
 *
 * After HPMMAP (Kocoloski and Lange, 2015): Linux hands memory
 * out by demand paging, so an application pays a page fault for every page it first
 * touches, and with transparent huge pages also for khugepaged merges at random moments,
 * and both get slower and more variable under a competing workload. An arena instead
 * reserves all of its memory when it is created: mapped with 2 MiB pages, every page
 * populated and locked, so the application's later accesses take no page faults.
 *
 * Where the 2 MiB pages come from (enum dimmap_hpmmap_pages):
 *   HUGETLB  hugetlbfs pages (MAP_HUGETLB). Needs free pages in the pool
 *            (/proc/sys/vm/nr_hugepages, or surplus pages allowed by
 *            /proc/sys/vm/nr_overcommit_hugepages; dimmap-run --reserve-huge-pages sets this).
 *   THP      anonymous memory with MADV_HUGEPAGE, populated at once and, where the kernel
 *            can (6.1+), collapsed synchronously (MADV_COLLAPSE); huge pages only as far as
 *            the kernel finds free 2 MiB blocks.
 *   SMALL    4 KiB pages, still populated and locked (no faults later, but no large pages);
 *            marked MADV_NOHUGEPAGE so khugepaged never merges them behind the program's back.
 *   AUTO     HUGETLB if the pool has room, else THP, else SMALL.
 * A request the kernel cannot satisfy falls back to the next kind with a warning on stderr
 * (DIMMAP_LOG=error silences it); dimmap_hpmmap_stats() says what was obtained.
 *
 * The allocator is best-fit with immediate coalescing over 64-byte granules, any power-of-
 * two alignment, one lock per arena. All functions are thread-safe. Memory returned by
 * dimmap_hpmmap_alloc() is not zeroed after reuse (fresh arena memory is zero).
 * After fork() the child has its own copy-on-write copy of the arena and its allocator state.
 *
 * Errors: functions returning int give 0 or -errno; dimmap_hpmmap_alloc() returns NULL with
 * errno ENOMEM. dimmap_last_error() (dimmap.h) describes the last failure.
 */
#ifndef DIMMAP_HPMMAP_H
#define DIMMAP_HPMMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dimmap_hpmmap_pages {
	DIMMAP_HPMMAP_AUTO = 0,
	DIMMAP_HPMMAP_HUGETLB = 1,
	DIMMAP_HPMMAP_THP = 2,
	DIMMAP_HPMMAP_SMALL = 3,
};

struct dimmap_hpmmap_options {
	uint64_t bytes;                /* arena size; rounded up to a multiple of 2 MiB */
	enum dimmap_hpmmap_pages pages;
	int lock;                      /* mlock the arena (default 1); failure only warns */
};

struct dimmap_hpmmap_stats {
	uint64_t bytes_reserved;       /* size of the arena (a multiple of 2 MiB) */
	uint64_t huge_pages;           /* 2 MiB pages backing the arena (hugetlb or THP, from smaps) */
	enum dimmap_hpmmap_pages pages;/* what the arena got: HUGETLB, THP or SMALL */
	int locked;                    /* mlock succeeded */
	uint64_t setup_ns;             /* time spent reserving and populating at creation */
	uint64_t bytes_allocated;      /* bytes in live allocations (rounded to 64-byte granules) */
	uint64_t peak_allocated;
	uint64_t largest_free;         /* largest block an allocation could get now */
	uint64_t allocations;          /* successful dimmap_hpmmap_alloc calls */
	uint64_t frees;
	uint64_t failed_allocations;   /* requests the arena could not satisfy */
};

struct dimmap_hpmmap_arena;

/* Fills *opt with defaults: 0 bytes, AUTO pages, lock on. */
void dimmap_hpmmap_options_init(struct dimmap_hpmmap_options *opt);

/* Reserves the arena: maps, populates and locks it. Fails with -EINVAL for a zero size,
 * -ENOMEM when not even small pages can be had. */
int dimmap_hpmmap_create(const struct dimmap_hpmmap_options *opt, struct dimmap_hpmmap_arena **out);
/* Unmaps the arena; every pointer from it becomes invalid. NULL is a no-op. */
void dimmap_hpmmap_destroy(struct dimmap_hpmmap_arena *arena);

/* bytes >= 1; alignment 0 (means 64) or a power of two. NULL + ENOMEM when it does not fit,
 * NULL + EINVAL for a bad alignment. */
void *dimmap_hpmmap_alloc(struct dimmap_hpmmap_arena *arena, size_t bytes, size_t alignment);
/* -EINVAL if p is not a live allocation of this arena (the arena is unchanged then). */
int dimmap_hpmmap_free(struct dimmap_hpmmap_arena *arena, void *p);
/* Usable size of a live allocation (>= the requested size), 0 if p is not one. */
size_t dimmap_hpmmap_usable_size(struct dimmap_hpmmap_arena *arena, const void *p);
/* Nonzero if p lies inside the arena's memory (allocated or not). Lock-free. */
int dimmap_hpmmap_contains(const struct dimmap_hpmmap_arena *arena, const void *p);
/* First byte of the arena and its size, for callers that check ranges themselves. */
void *dimmap_hpmmap_base(const struct dimmap_hpmmap_arena *arena);

int dimmap_hpmmap_stats(struct dimmap_hpmmap_arena *arena, struct dimmap_hpmmap_stats *out);
const char *dimmap_hpmmap_pages_name(enum dimmap_hpmmap_pages pages); /* "hugetlb", ... */
/* "auto", "hugetlb", "thp", "small" (also "none" = small); -EINVAL otherwise. */
int dimmap_hpmmap_parse_pages(const char *text, enum dimmap_hpmmap_pages *out);

#ifdef __cplusplus
}
#endif

#endif /* DIMMAP_HPMMAP_H */
