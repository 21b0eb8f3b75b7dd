// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dmt_checks.c - checks of dimmap.ko's control interface run inside the VM: argument
 * validation, capabilities, busy links and bounds of a linked block device, and the
 * independence of two buffers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dimmap/dimmap_uapi.h>

#include "dmt.h"
#include "dmt_ctl.h"

/* ---- malformed arguments ---- */

static int dmt_check_link_args(int ctl, int blk, int buffers)
{
	struct dimmap_link_req req;
	int pipefd[2], tiny, fails = 0;

	dmt_link(ctl, -1, 0, &req);	/* fills req; fails with EBADF */
	req.fd = blk;
	req.flags = 1;
	fails += dmt_errno("LINK flags=1", ioctl(ctl, DIMMAP_IOC_LINK, &req), EINVAL);
	req.flags = 0;
	req.reserved[1] = 7;
	fails += dmt_errno("LINK reserved!=0", ioctl(ctl, DIMMAP_IOC_LINK, &req), EINVAL);
	fails += dmt_errno("LINK buffer out of range", dmt_link(ctl, blk, buffers, &req), EINVAL);
	fails += dmt_errno("LINK fd=-1", dmt_link(ctl, -1, 0, &req), EBADF);
	if (pipe(pipefd) == 0) {
		fails += dmt_errno("LINK of a pipe", dmt_link(ctl, pipefd[0], 0, &req), EINVAL);
		close(pipefd[0]);
		close(pipefd[1]);
	}
	tiny = open("/tmp/dmt-tiny", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (tiny >= 0 && write(tiny, "x", 1) == 1)
		fails += dmt_errno("LINK of a 1-byte file", dmt_link(ctl, tiny, 0, &req), EINVAL);
	close(tiny);
	unlink("/tmp/dmt-tiny");
	fails += dmt_errno("LINK bad pointer", ioctl(ctl, DIMMAP_IOC_LINK, (void *)16), EFAULT);
	fails += dmt_errno("unknown command", ioctl(ctl, _IO(DIMMAP_IOC_MAGIC, 99), 0), ENOTTY);
	return fails;
}

static int dmt_check_other_args(int ctl, int buffers)
{
	struct dimmap_unlink_req ureq = { .id = 0, .flags = 1 };
	struct dimmap_link_info info = { .id = DIMMAP_MAX_LINKS };
	struct dimmap_stats_req sreq = { .buffer = (unsigned int)buffers };
	struct dimmap_sync_req sync = { .id = 0, .offset = 1 };
	int fails = 0;

	fails += dmt_errno("UNLINK id out of range", dmt_unlink(ctl, DIMMAP_MAX_LINKS), EINVAL);
	fails += dmt_errno("UNLINK flags=1", ioctl(ctl, DIMMAP_IOC_UNLINK, &ureq), EINVAL);
	fails += dmt_errno("UNLINK of an unused id", dmt_unlink(ctl, DIMMAP_MAX_LINKS - 1), ENOENT);
	fails += dmt_errno("INFO id out of range", ioctl(ctl, DIMMAP_IOC_INFO, &info), EINVAL);
	fails += dmt_errno("STATS buffer out of range", ioctl(ctl, DIMMAP_IOC_STATS, &sreq), EINVAL);
	sreq.buffer = 0;
	sreq.flags = 2;
	fails += dmt_errno("STATS flags=2", ioctl(ctl, DIMMAP_IOC_STATS, &sreq), EINVAL);
	fails += dmt_errno("SYNC unaligned offset", ioctl(ctl, DIMMAP_IOC_SYNC, &sync), EINVAL);
	sync.offset = 0;
	sync.flags = 0x80;
	fails += dmt_errno("SYNC unknown flag", ioctl(ctl, DIMMAP_IOC_SYNC, &sync), EINVAL);
	return fails;
}

/* ---- a linked block device: info, busy, privileges, bounds ---- */

static int dmt_check_info(int ctl, unsigned int id, int blk)
{
	struct dimmap_link_info info = { .id = id };
	uint64_t bytes = 0;
	struct stat st;

	if (ioctl(ctl, DIMMAP_IOC_INFO, &info) || fstat(blk, &st) ||
	    ioctl(blk, BLKGETSIZE64, &bytes))
		return DMT_FAIL("INFO %u: %s", id, strerror(errno));
	if (info.size != bytes / DMT_PAGE * DMT_PAGE || info.buffer != 0 ||
	    info.rdev_major != major(st.st_rdev) || info.rdev_minor != minor(st.st_rdev) ||
	    info.flags != (DIMMAP_LINK_BLOCKDEV | DIMMAP_LINK_WRITABLE | DIMMAP_LINK_DIRECT))
		return DMT_FAIL("INFO %u: size %llu flags %#x rdev %u:%u do not match the device",
				id, (unsigned long long)info.size, info.flags, info.rdev_major,
				info.rdev_minor);
	return 0;
}

/* In a child without privileges: changes are refused, reading is allowed. */
static int dmt_unprivileged(int ctl, int blk, unsigned int id)
{
	struct dimmap_sync_req sync = { .id = id, .flags = DIMMAP_SYNC_DROP };
	struct dimmap_link_req req;
	struct dimmap_kstats st;
	char path[64];
	int fails = 0;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534) || geteuid() != 65534)
		return DMT_FAIL("cannot become nobody: %s", strerror(errno));
	fails += dmt_errno("LINK as nobody", dmt_link(ctl, blk, 0, &req), EPERM);
	fails += dmt_errno("UNLINK as nobody", dmt_unlink(ctl, id), EPERM);
	fails += dmt_errno("SYNC+DROP as nobody", ioctl(ctl, DIMMAP_IOC_SYNC, &sync), EPERM);
	fails += dmt_ok("STATS as nobody", dmt_stats(ctl, 0, &st));
	dmt_dev_path(id, path, sizeof(path));
	fails += dmt_errno("open /dev/dimmapN as nobody", open(path, O_RDONLY), EACCES);
	return fails;
}

static int dmt_check_privileges(int ctl, int blk, unsigned int id)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(dmt_unprivileged(ctl, blk, id) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return DMT_FAIL("fork: %s", strerror(errno));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static sigjmp_buf dmt_jump;

static void dmt_on_sigbus(int sig)
{
	siglongjmp(dmt_jump, sig);
}

/* A page past the end of the device raises SIGBUS, as past the end of a file. */
static int dmt_check_bounds(const char *path, uint64_t size)
{
	struct sigaction sa = { .sa_handler = dmt_on_sigbus }, old;
	volatile unsigned char *p;
	int fd = open(path, O_RDONLY), fails = 0;

	if (fd < 0)
		return DMT_FAIL("open %s: %s", path, strerror(errno));
	p = mmap(NULL, size + DMT_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return DMT_FAIL("mmap %s: %s", path, strerror(errno));
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(dmt_jump, 1) == 0) {
		(void)p[0];
		(void)p[size - 1];
		(void)p[size];
		fails = DMT_FAIL("reading past the end of %s did not raise SIGBUS", path);
	}
	sigaction(SIGBUS, &old, NULL);
	munmap((void *)p, size + DMT_PAGE);
	close(fd);
	return fails;
}

static int dmt_check_linked(int ctl, int blk, const char *blockdev)
{
	struct dimmap_link_req req, again;
	char path[64];
	int fails = 0, dev;

	if (dmt_link(ctl, blk, 0, &req))
		return DMT_FAIL("LINK %s: %s", blockdev, strerror(errno));
	dmt_dev_path(req.id, path, sizeof(path));
	fails += dmt_errno("LINK of a linked device", dmt_link(ctl, blk, 0, &again), EBUSY);
	fails += dmt_check_info(ctl, req.id, blk);
	fails += dmt_check_privileges(ctl, blk, req.id);
	fails += dmt_check_bounds(path, req.size);
	dev = open(path, O_RDONLY);
	fails += dmt_errno("UNLINK while open", dmt_unlink(ctl, req.id), EBUSY);
	close(dev);
	fails += dmt_errno("rmmod while in use",
			   (int)syscall(SYS_delete_module, "dimmap", O_NONBLOCK), EWOULDBLOCK);
	fails += dmt_ok("UNLINK", dmt_unlink(ctl, req.id));
	fails += dmt_errno("device node after UNLINK", access(path, F_OK), ENOENT);
	return fails;
}

int dmt_check_ioctls(const char *blockdev, int buffers)
{
	struct dimmap_version v;
	int ctl, blk, fails = 0;

	ctl = open(CTL_PATH, O_RDONLY);
	blk = open(blockdev, O_RDWR | O_DIRECT);
	if (ctl < 0 || blk < 0)
		return DMT_FAIL("open %s / %s: %s", CTL_PATH, blockdev, strerror(errno));
	if (ioctl(ctl, DIMMAP_IOC_VERSION, &v) || v.abi != DIMMAP_ABI_VERSION ||
	    (int)v.buffers != buffers || v.page_size != DMT_PAGE)
		fails += DMT_FAIL("VERSION: abi %u buffers %u page %u", v.abi, v.buffers,
				  v.page_size);
	fails += dmt_check_link_args(ctl, blk, buffers);
	fails += dmt_check_other_args(ctl, buffers);
	fails += dmt_check_linked(ctl, blk, blockdev);
	close(blk);
	close(ctl);
	printf("ioctl checks: %d failures\n", fails);
	return fails;
}

/* ---- two buffers ---- */

static int dmt_buffer_of(int ctl, const char *dev, unsigned int *buffer)
{
	const char *digits = dev + strcspn(dev, "0123456789");
	struct dimmap_link_info info = { .id = (unsigned int)atoi(digits) };

	if (ioctl(ctl, DIMMAP_IOC_INFO, &info))
		return DMT_FAIL("INFO %s: %s", dev, strerror(errno));
	*buffer = info.buffer;
	return 0;
}

static int dmt_check_counters(const struct dimmap_kstats *st, const struct dmt_plan *plan)
{
	if (st->faults != st->misses + st->recoveries + st->hits + st->write_faults)
		return DMT_FAIL("faults %llu != misses + recoveries + hits",
				(unsigned long long)st->faults);
	if (st->resident_pages > st->buffer_pages)
		return DMT_FAIL("resident %llu > buffer %llu",
				(unsigned long long)st->resident_pages,
				(unsigned long long)st->buffer_pages);
	if (plan->npages > 2 * st->buffer_pages && (!st->evictions || !st->eviction_batches))
		return DMT_FAIL("no evictions with a buffer much smaller than the device");
	if (plan->write_pct && !st->writebacks)
		return DMT_FAIL("no writebacks after writes");
	return 0;
}

int dmt_check_independent(int quiet, const char *dev, const struct dmt_plan *plan,
			  unsigned int procs)
{
	struct dimmap_kstats quiet0, quiet1, busy0, busy1;
	unsigned int busy = 0;
	int ctl = open(CTL_PATH, O_RDONLY), fails;

	if (ctl < 0 || dmt_buffer_of(ctl, dev, &busy))
		return 1;
	if ((int)busy == quiet)
		return DMT_FAIL("%s is in buffer %d itself", dev, quiet);
	if (dmt_stats(ctl, quiet, &quiet0) || dmt_stats(ctl, busy, &busy0))
		return DMT_FAIL("STATS: %s", strerror(errno));
	fails = dmt_run_workload(dev, plan, procs);
	if (dmt_stats(ctl, quiet, &quiet1) || dmt_stats(ctl, busy, &busy1))
		return DMT_FAIL("STATS: %s", strerror(errno));
	if (memcmp(&quiet0, &quiet1, sizeof(quiet0)))
		fails += DMT_FAIL("buffer %d changed while only buffer %u was used", quiet, busy);
	if (busy1.faults <= busy0.faults)
		fails += DMT_FAIL("buffer %u counted no faults", busy);
	fails += dmt_check_counters(&busy1, plan);
	printf("buffer %u: faults %llu misses %llu recoveries %llu hits %llu hot %llu evictions %llu batches %llu writebacks %llu (%llu writes)\n",
	       busy, (unsigned long long)busy1.faults, (unsigned long long)busy1.misses,
	       (unsigned long long)busy1.recoveries, (unsigned long long)busy1.hits,
	       (unsigned long long)busy1.hot_promotions, (unsigned long long)busy1.evictions,
	       (unsigned long long)busy1.eviction_batches, (unsigned long long)busy1.writebacks,
	       (unsigned long long)busy1.write_ios);
	close(ctl);
	return fails;
}
