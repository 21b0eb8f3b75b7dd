/*
 * dimmap.h - the DI-MMAP runtime's C API.
 *
 * The mmap-compatible calls (dimmap_mmap, dimmap_munmap, dimmap_msync) behave like
 * their libc counterparts, so converting code is a rename: they return MAP_FAILED or
 * -1 and set errno. Every other dimmap_* function returns 0 or a negative errno.
 * After any failure, dimmap_last_error() describes it in words (file, size, cause).
 *
 * A dimmap mapping is cached by a fixed-size page buffer managed with the DI-MMAP
 * policy (primary FIFO, hot-page FIFO, eviction queue) instead of the Linux page cache.
 * Configuration comes from a struct dimmap_config, whose defaults are read from the
 * environment:
 *   DIMMAP_BUFFER        buffer size, e.g. 256M, 4G            (default: half the memory
 *                        limit (cgroup, else MemAvailable), at most 256M; memory_limit.hpp)
 *   DIMMAP_HOT_FRACTION  share of the buffer for hot pages     (default 0.75)
 *   DIMMAP_EVICT_BATCH   pages per bulk eviction                (default 64)
 *   DIMMAP_ENGINE        auto (the default: pagecache, else uffd), pagecache (the policy
 *                        over the kernel's page cache: misses are kernel faults; Linux
 *                        6.7+, no PerMA), uffd (misses served through userfaultfd) or kmod
 *                        (dimmap.ko); kmod maps
 *                        /dev/dimmapN links of a loaded module, whose buffers are sized at
 *                        insmod time (DIMMAP_BUFFER is ignored there)
 *   DIMMAP_KMOD_BUFFER   kmod: which of the module's buffers to use     (default 0)
 *   DIMMAP_IO_DEPTH      reads and writes in flight per buffer  (default 128)
 *   DIMMAP_DIRECT_IO     1 = O_DIRECT on the backing file       (default 1)
 *   DIMMAP_SPIN_US       fault server busy-polls this long before sleeping (default 50)
 *   DIMMAP_READAHEAD     pages read ahead of a run of faults on consecutive pages (uffd: at
 *                        most; pagecache: at first, doubling) (default 64; 0 = only the
 *                        faulting page, as the DI-MMAP paper)
 *   DIMMAP_PERMA         NVRAM latency model: lcurr|lnxt1|lnxt2|lnxt3|sim-opt|vm-disk or D,R,P,E,C
 *   DIMMAP_LOG           error|warn|info|debug                 (default warn)
 */
#ifndef DIMMAP_DIMMAP_H
#define DIMMAP_DIMMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DIMMAP_VERSION_STRING "0.1.0"

/* Counters of one buffer (or, from dimmap_stats, of the default buffer).
 * Invariant: faults == misses + recoveries + hits + write_faults. */
struct dimmap_stats {
	uint64_t faults;           /* fault events handled */
	uint64_t misses;           /* faults that read the page from storage */
	uint64_t recoveries;       /* faults served from the eviction queue, no I/O */
	uint64_t hits;             /* faults on a page already resident or being read */
	uint64_t write_faults;     /* first write to a clean resident page (dirty tracking) */
	uint64_t hot_promotions;   /* pages moved from the primary to the hot FIFO */
	uint64_t evictions;        /* pages that left the buffer */
	uint64_t eviction_batches; /* bulk unmaps (one TLB flush each) */
	uint64_t writebacks;       /* dirty pages written to storage */
	uint64_t write_ios;        /* write requests (writebacks coalesce adjacent pages) */
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t read_errors;      /* failed fills: the faulting thread got SIGBUS */
	uint64_t write_errors;     /* failed writebacks: reported by msync/munmap */
	uint64_t buffer_pages;     /* size of the buffer in pages */
	uint64_t resident_pages;   /* pages holding data now (all queues) */
	uint64_t dirty_pages;      /* resident pages not yet written back (pagecache engine: of the
	                              mapped ranges, whoever wrote them) */
	uint64_t zero_fills;       /* misses on never-written pages of a sparse file: no read */
	uint64_t prefetched;       /* pages read ahead (dimmap_prefetch, sequential faults), not faults */
};
/* The function dimmap_stats() hides the struct tag in C++: use this name there. */
typedef struct dimmap_stats dimmap_stats_t;

enum dimmap_engine {
	DIMMAP_ENGINE_UFFD = 0, /* user-space engine on userfaultfd */
	DIMMAP_ENGINE_KMOD = 1, /* the dimmap.ko kernel module */
	DIMMAP_ENGINE_PAGECACHE = 2, /* the DI-MMAP policy over the kernel's page cache: misses are
	                                kernel faults (Linux 6.7+; no PerMA model) */
	DIMMAP_ENGINE_AUTO = 3, /* the default: pagecache, unless the kernel lacks what it needs or
	                           the configuration asks for what only uffd does (PerMA, in-thread
	                           faults, service threads); then uffd */
};

struct dimmap_config {
	uint64_t buffer_bytes;   /* page buffer size; at least DIMMAP_MIN_BUFFER_PAGES pages */
	double hot_fraction;     /* 0 <= f < 1: share of the buffer for the hot-page FIFO */
	double evict_fraction;   /* 0 < f < 0.5: share of the buffer for the eviction queue */
	unsigned evict_batch;    /* pages per bulk eviction (uffd engine: unmaps up to 4 batches at once) */
	unsigned io_depth;       /* maximum reads + writes in flight */
	int direct_io;           /* open the backing file with O_DIRECT when possible */
	unsigned spin_us;        /* fault server polls this long before sleeping (0 = never spin) */
	unsigned readahead_pages; /* read-ahead window of sequential faults (uffd: at most; pagecache:
	                             the first, doubling) (0 = off) */
	enum dimmap_engine engine;
	char perma[64];          /* latency model: preset name or "D,R,P,E,C"; "" = none */
	unsigned service_threads; /* uffd: fault service threads (0 = by the CPU count) */
	int in_thread_faults;    /* uffd: a faulting thread fills its own miss (see README: system
	                            calls on non-resident mapped memory then fail with EFAULT) */
};

#define DIMMAP_MIN_BUFFER_PAGES 16u

struct dimmap_instance;

/* Fills *cfg with the defaults, then applies the DIMMAP_* environment variables.
 * Returns -EINVAL (and dimmap_last_error() names the variable) if one is malformed. */
int dimmap_config_init(struct dimmap_config *cfg);

/* Checks a configuration; 0 or -EINVAL with dimmap_last_error() set. */
int dimmap_config_validate(const struct dimmap_config *cfg);

/* An independent buffer. Several may exist at once (e.g. graph data and algorithmic data). */
int dimmap_instance_create(const struct dimmap_config *cfg, struct dimmap_instance **out);
/* Fails with -EBUSY while regions of the instance are still mapped. */
int dimmap_instance_destroy(struct dimmap_instance *inst);
void *dimmap_instance_mmap(struct dimmap_instance *inst, void *addr, size_t length, int prot,
			   int flags, int fd, off_t offset);
int dimmap_instance_stats(struct dimmap_instance *inst, struct dimmap_stats *out);
/* The engine the instance runs (DIMMAP_ENGINE_AUTO resolved). */
enum dimmap_engine dimmap_instance_engine(const struct dimmap_instance *inst);

/* mmap-compatible calls on the default instance (created on first use from the
 * environment). fd may be a regular file or a block device; offset must be page aligned
 * and the mapping must lie within the file. MAP_SHARED writes reach the file on eviction
 * or msync; MAP_PRIVATE mappings must be read-only. Mappings are not inherited by fork().
 * While mapped, change the file only through the mapping: the buffer caches its pages
 * (holes of a sparse file are served as zeros without reading it). */
void *dimmap_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
/* Writes dirty pages back, then unmaps. The whole mapping must be unmapped at once.
 * If writeback fails, returns -1 (errno EIO/ENOSPC) and leaves the mapping intact. */
int dimmap_munmap(void *addr, size_t length);
/* MS_SYNC: dirty pages in the range are on stable storage on return. MS_ASYNC: written
 * but not flushed. MS_INVALIDATE: additionally drop the range's clean pages from the buffer. */
int dimmap_msync(void *addr, size_t length, int flags);
/* Drops the pages of a range without writing them back, like MADV_REMOVE on scratch data
 * nobody will read again (the file keeps its old contents). Returns 0 or -errno. */
int dimmap_discard(void *addr, size_t length);
/* Read-ahead hint, like MADV_WILLNEED: starts reading the missing pages of the ranges and
 * returns at once; pages arrive mapped, so touching them later costs no fault. At most a
 * quarter of each buffer is queued per call. All ranges must lie in dimmap mappings.
 * Returns 0 or -errno. */
int dimmap_prefetch(void *addr, size_t length);
int dimmap_prefetchv(const struct iovec *ranges, size_t count);
/* Counters summed over every buffer. */
int dimmap_stats(struct dimmap_stats *out);
/* Stats of the instance owning the mapping that contains addr. */
int dimmap_stats_for(const void *addr, struct dimmap_stats *out);
/* Nonzero if addr lies in a dimmap mapping. */
int dimmap_is_mapped(const void *addr);

/* PerMA latency model (Eq. 1 of the PerMA paper): nanoseconds for one request of `bytes`
 * with `concurrent` requests in flight, for a preset name or "D,R,P,E,C" as DIMMAP_PERMA. */
int dimmap_perma_latency_ns(const char *spec, unsigned concurrent, uint64_t bytes, uint64_t *out_ns);

/* Thread-local description of this thread's last failure ("" if none). */
const char *dimmap_last_error(void);

/* Parses "4096", "256K", "256M", "4G", "1T" (also KiB/MiB/GiB/TiB, case-insensitive;
 * powers of 1024). Rejects empty, negative, fractional, trailing junk and overflow. */
int dimmap_parse_size(const char *text, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* DIMMAP_DIMMAP_H */
