/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * dimmap_uapi.h - the interface of the dimmap.ko kernel module, shared by the module,
 * dimmapctl and libdimmap (DIMMAP_ENGINE=kmod).
 *
 * Loading dimmap.ko allocates one or more fixed page buffers (module parameters
 * buffer_size, buffers, hot_percent, evict_percent, evict_batch) and creates the control
 * device /dev/dimmap_ctl. DIMMAP_IOC_LINK binds an open block device or regular file to a
 * new pseudo-device /dev/dimmapN whose pages are cached by one of the buffers with the
 * DI-MMAP policy; mmap /dev/dimmapN to use it. msync(MS_SYNC) or fsync on /dev/dimmapN
 * writes its dirty pages back. DIMMAP_IOC_UNLINK writes everything back and removes
 * the pseudo-device.
 *
 * Every ioctl below goes to /dev/dimmap_ctl and returns 0 or -1 with errno:
 *   EPERM   LINK, UNLINK and SYNC with DIMMAP_SYNC_DROP need CAP_SYS_ADMIN
 *   EINVAL  a malformed argument: nonzero flags or reserved fields, buffer or id out of
 *           range, unaligned offsets, a file that is neither a block device nor a
 *           regular file, or one smaller than a page
 *   EBADF   the fd of LINK is not open (for reading)
 *   ENOENT  no pseudo-device with that id
 *   EBUSY   UNLINK while /dev/dimmapN is open or mapped; LINK of a file already linked
 *   EFAULT  a bad pointer; ENOTTY an unknown command
 */
#ifndef DIMMAP_UAPI_H
#define DIMMAP_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DIMMAP_CTL_NAME		"dimmap_ctl"	/* /dev/dimmap_ctl */
#define DIMMAP_DEV_PREFIX	"dimmap"	/* /dev/dimmapN */
#define DIMMAP_ABI_VERSION	1
#define DIMMAP_MAX_LINKS	256u		/* ids are 0 .. DIMMAP_MAX_LINKS - 1 */
#define DIMMAP_MAX_BUFFERS	16u

/* DIMMAP_IOC_VERSION: what this load of the module provides. */
struct dimmap_version {
	__u32 abi;		/* DIMMAP_ABI_VERSION */
	__u32 buffers;		/* independent buffers: 0 .. buffers - 1 */
	__u64 buffer_pages;	/* pages per buffer */
	__u32 page_size;
	__u32 hot_percent;	/* share of a buffer for the hot-page FIFO */
	__u32 evict_percent;	/* share of a buffer for the eviction queue */
	__u32 evict_batch;	/* pages per eviction batch */
	__u32 max_links;
	__u32 reserved;
};

/*
 * DIMMAP_IOC_LINK (SETBIND): create /dev/dimmapN for an open file. Open the file
 * read-write for a writable link, and with O_DIRECT to keep its pages out of the page
 * cache (the module reads and writes it through this very open file).
 */
struct dimmap_link_req {
	__s32 fd;		/* in: a block device or regular file */
	__u32 buffer;		/* in: which buffer caches its pages */
	__u32 flags;		/* in: 0 */
	__u32 id;		/* out: N of /dev/dimmapN */
	__u64 size;		/* out: bytes reachable through /dev/dimmapN (whole pages) */
	__u64 reserved[2];	/* in: 0 */
};

/* DIMMAP_IOC_UNLINK: write back and remove /dev/dimmapN. */
struct dimmap_unlink_req {
	__u32 id;		/* in */
	__u32 flags;		/* in: 0 */
};

#define DIMMAP_LINK_WRITABLE	0x1u	/* the backing file was opened for writing */
#define DIMMAP_LINK_DIRECT	0x2u	/* ... with O_DIRECT */
#define DIMMAP_LINK_BLOCKDEV	0x4u	/* the backing file is a block device */
#define DIMMAP_LINK_OVERLAY	0x8u	/* a file of a dimmapfs mount (no /dev node) */

/* DIMMAP_IOC_INFO (GETBIND): what /dev/dimmapN is linked to. */
struct dimmap_link_info {
	__u32 id;		/* in */
	__u32 buffer;		/* out */
	__u32 flags;		/* out: DIMMAP_LINK_* */
	__u32 opens;		/* out: open files of /dev/dimmapN (mappings hold one) */
	__u64 size;		/* out: bytes reachable through /dev/dimmapN */
	__u32 dev_major;	/* out: st_dev of the backing file */
	__u32 dev_minor;
	__u32 rdev_major;	/* out: st_rdev of a backing block device, else 0 */
	__u32 rdev_minor;
	__u64 ino;		/* out: st_ino of the backing file */
	char path[256];		/* out: its path when linked (truncated), "" if unknown */
};

/*
 * Counters of one buffer. The first seventeen fields match struct dimmap_stats of
 * <dimmap/dimmap.h>. faults == misses + recoveries + hits + write_faults; the module
 * learns that a page is dirty from the page tables when the page is unmapped, so
 * write_faults is 0 and dirty_pages counts the pages known to be dirty.
 */
struct dimmap_kstats {
	__u64 faults;
	__u64 misses;
	__u64 recoveries;
	__u64 hits;
	__u64 write_faults;
	__u64 hot_promotions;
	__u64 evictions;
	__u64 eviction_batches;
	__u64 writebacks;
	__u64 write_ios;
	__u64 bytes_read;
	__u64 bytes_written;
	__u64 read_errors;
	__u64 write_errors;
	__u64 buffer_pages;
	__u64 resident_pages;
	__u64 dirty_pages;
	__u64 demotions;	/* pages moved to the eviction queue (and unmapped) */
	__u64 replaced_pages;	/* evicted pages still pinned by someone (e.g. O_DIRECT) */
	__u64 reserved[5];
};

/* DIMMAP_IOC_STATS */
struct dimmap_stats_req {
	__u32 buffer;		/* in */
	__u32 flags;		/* in: 0 */
	struct dimmap_kstats stats;	/* out */
};

#define DIMMAP_SYNC_DROP	0x1u	/* also drop the range's pages from the buffer */

/* DIMMAP_IOC_SYNC: write back (and optionally drop) a range of /dev/dimmapN. */
struct dimmap_sync_req {
	__u32 id;		/* in */
	__u32 flags;		/* in: DIMMAP_SYNC_* */
	__u64 offset;		/* in: page aligned */
	__u64 length;		/* in: page aligned; 0 means to the end */
	__u64 written;		/* out: pages written back */
	__u64 dropped;		/* out: pages dropped */
};

#define DIMMAP_IOC_MAGIC	0xDB
#define DIMMAP_IOC_VERSION	_IOR(DIMMAP_IOC_MAGIC, 0, struct dimmap_version)
#define DIMMAP_IOC_LINK		_IOWR(DIMMAP_IOC_MAGIC, 1, struct dimmap_link_req)
#define DIMMAP_IOC_UNLINK	_IOW(DIMMAP_IOC_MAGIC, 2, struct dimmap_unlink_req)
#define DIMMAP_IOC_INFO		_IOWR(DIMMAP_IOC_MAGIC, 3, struct dimmap_link_info)
#define DIMMAP_IOC_STATS	_IOWR(DIMMAP_IOC_MAGIC, 4, struct dimmap_stats_req)
#define DIMMAP_IOC_SYNC		_IOWR(DIMMAP_IOC_MAGIC, 5, struct dimmap_sync_req)

#endif /* DIMMAP_UAPI_H */
