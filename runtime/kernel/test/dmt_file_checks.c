// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dmt_file_checks.c - a regular file linked to dimmap.ko, checked inside the VM: a
 * read-only link, two processes sharing pages, a private (copy-on-write) mapping, a page
 * pinned by someone else while it leaves the buffer, SYNC with DROP, and writebacks
 * that fail because the file system is full.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dmt.h"
#include "dmt_ctl.h"

/* ---- a regular file shared by two processes ---- */

static void dmt_put_cell(unsigned char *base, uint64_t seed, uint64_t page, unsigned int cell,
			 uint32_t version)
{
	uint64_t words[DMT_CELL / 8];

	dmt_fill_cell(seed, page, cell, version, words);
	memcpy(base + page * DMT_PAGE + cell * DMT_CELL, words, DMT_CELL);
}

static int dmt_cell_is(const unsigned char *base, uint64_t seed, uint64_t page,
		       unsigned int cell, uint32_t version)
{
	uint64_t words[DMT_CELL / 8];

	dmt_fill_cell(seed, page, cell, version, words);
	return !memcmp(base + page * DMT_PAGE + cell * DMT_CELL, words, DMT_CELL);
}

/* The child writes through its own mapping and the parent sees it; the parent's own
 * write must survive the page leaving the buffer (written back) and coming back.
 */
static int dmt_two_processes(const char *path, const struct dmt_plan *plan,
			     uint32_t *versions)
{
	size_t len = plan->npages * DMT_PAGE;
	int fd = open(path, O_RDWR), status, fails = 0;
	volatile unsigned char sink = 0;
	unsigned char *base;
	pid_t pid;
	uint64_t p;

	base = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return DMT_FAIL("map %s: %s", path, strerror(errno));
	sink += base[5 * DMT_PAGE];	/* the parent maps page 5 before the child writes */
	pid = fork();
	if (pid == 0) {
		unsigned char *mine = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (mine == MAP_FAILED)
			_exit(1);
		dmt_put_cell(mine, plan->seed, 5, 3, 1);
		_exit(munmap(mine, len) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fails += DMT_FAIL("child writer failed");
	versions[5 * DMT_CELLS + 3] = 1;
	if (!dmt_cell_is(base, plan->seed, 5, 3, 1))
		fails += DMT_FAIL("parent does not see the child's write");
	dmt_put_cell(base, plan->seed, 7, 9, 1);
	versions[7 * DMT_CELLS + 9] = 1;
	for (p = 0; p < plan->npages; p++)	/* pushes pages 5 and 7 out of the buffer */
		sink += base[p * DMT_PAGE];
	if (!dmt_cell_is(base, plan->seed, 5, 3, 1) || !dmt_cell_is(base, plan->seed, 7, 9, 1))
		fails += DMT_FAIL("writes lost after the pages left the buffer");
	munmap(base, len);
	close(fd);
	return fails;
}

/* A MAP_PRIVATE write lands in a private copy: other mappings and the file keep the
 * page as it was.
 */
static int dmt_private_copy(const char *path, const struct dmt_plan *plan,
			    const uint32_t *versions)
{
	size_t len = plan->npages * DMT_PAGE;
	int fd = open(path, O_RDONLY), fails = 0;
	unsigned char *priv, *shared;

	priv = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	shared = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (priv == MAP_FAILED || shared == MAP_FAILED)
		return DMT_FAIL("map %s privately: %s", path, strerror(errno));
	dmt_put_cell(priv, plan->seed, 3, 4, 99);
	if (!dmt_cell_is(priv, plan->seed, 3, 4, 99))
		fails += DMT_FAIL("a private mapping does not keep its own write");
	if (!dmt_cell_is(shared, plan->seed, 3, 4, versions[3 * DMT_CELLS + 4]))
		fails += DMT_FAIL("a private write leaked into a shared mapping");
	munmap(priv, len);
	munmap(shared, len);
	close(fd);
	return fails;
}

/* A page someone else holds (here a pipe, through vmsplice) while it leaves the buffer
 * must not be reused: the slot gets a fresh page and the holder keeps the old data.
 */
static int dmt_pinned_page(int ctl, unsigned int buffer, const char *path,
			   const struct dmt_plan *plan, const uint32_t *versions)
{
	size_t len = plan->npages * DMT_PAGE;
	struct dimmap_kstats before, after;
	volatile unsigned char sink = 0;
	static unsigned char got[DMT_PAGE];
	unsigned char *base;
	int fd = open(path, O_RDONLY), pipefd[2], fails = 0;
	struct iovec iov;
	uint64_t p;

	base = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED || pipe(pipefd))
		return DMT_FAIL("map %s: %s", path, strerror(errno));
	fcntl(pipefd[1], F_SETPIPE_SZ, 2 * DMT_PAGE);
	iov = (struct iovec){ .iov_base = base + 11 * DMT_PAGE, .iov_len = DMT_PAGE };
	dmt_stats(ctl, buffer, &before);
	if (vmsplice(pipefd[1], &iov, 1, 0) != DMT_PAGE)
		fails += DMT_FAIL("vmsplice: %s", strerror(errno));
	for (p = 0; p < plan->npages; p++)	/* pushes page 11 out of the buffer */
		sink += base[((p + 12) % plan->npages) * DMT_PAGE];
	dmt_stats(ctl, buffer, &after);
	if (after.replaced_pages <= before.replaced_pages)
		fails += DMT_FAIL("a pinned page left the buffer but was not replaced");
	if (read(pipefd[0], got, DMT_PAGE) != DMT_PAGE ||
	    !dmt_cell_is(base, plan->seed, 11, 0, versions[11 * DMT_CELLS]) ||
	    memcmp(got, base + 11 * DMT_PAGE, DMT_PAGE))
		fails += DMT_FAIL("the pinned page or its reloaded copy reads wrong");
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(base, len);
	close(fd);
	return fails;
}

/* SYNC with DROP writes a dirty page and frees every page; the file then holds it. */
static int dmt_sync_drop(int ctl, unsigned int id, unsigned int buffer, const char *path,
			 const char *file, const struct dmt_plan *plan, uint32_t *versions)
{
	struct dimmap_sync_req sync = { .id = id, .flags = DIMMAP_SYNC_DROP };
	int fd = open(path, O_RDWR);
	struct dimmap_kstats st;
	unsigned char *base;
	long long bad;

	base = fd < 0 ? MAP_FAILED : mmap(NULL, DMT_PAGE * 16, PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return DMT_FAIL("map %s: %s", path, strerror(errno));
	dmt_put_cell(base, plan->seed, 9, 1, 1);
	versions[9 * DMT_CELLS + 1] = 1;
	munmap(base, DMT_PAGE * 16);	/* leaves page 9 dirty in the buffer */
	close(fd);
	if (ioctl(ctl, DIMMAP_IOC_SYNC, &sync))
		return DMT_FAIL("SYNC+DROP: %s", strerror(errno));
	if (sync.written < 1 || sync.dropped < 1 || dmt_stats(ctl, buffer, &st))
		return DMT_FAIL("SYNC+DROP wrote %llu and dropped %llu pages",
				(unsigned long long)sync.written, (unsigned long long)sync.dropped);
	if (st.resident_pages != 0)
		return DMT_FAIL("SYNC+DROP left %llu pages in buffer %u",
				(unsigned long long)st.resident_pages, buffer);
	bad = dmt_verify_file(file, plan, versions);
	return bad ? DMT_FAIL("after SYNC+DROP %s has %lld wrong pages", file, bad) : 0;
}

static int dmt_read_only_link(int ctl, const char *file, unsigned int buffer)
{
	struct dimmap_link_req req;
	char path[64];
	int fd = open(file, O_RDONLY), fails = 0;

	if (fd < 0 || dmt_link(ctl, fd, buffer, &req))
		return DMT_FAIL("read-only LINK %s: %s", file, strerror(errno));
	close(fd);
	dmt_dev_path(req.id, path, sizeof(path));
	fails += dmt_errno("open a read-only link for writing", open(path, O_RDWR), EACCES);
	fails += dmt_ok("UNLINK read-only link", dmt_unlink(ctl, req.id));
	return fails;
}

int dmt_check_file_link(const char *dir, int buffer)
{
	struct dmt_plan plan = { .seed = 77, .npages = 512, .threads = 1 };
	uint32_t *versions = dmt_versions_new(&plan);
	struct dimmap_link_req req;
	char file[256], path[64];
	int ctl, fd, fails = 0;

	snprintf(file, sizeof(file), "%s/dmt-file.img", dir);
	if (!versions || dmt_make_image(file, &plan))
		return 1;
	ctl = open(CTL_PATH, O_RDONLY);
	fails += dmt_read_only_link(ctl, file, buffer);
	fd = open(file, O_RDWR);
	if (fd < 0 || dmt_link(ctl, fd, buffer, &req))
		return DMT_FAIL("LINK %s: %s", file, strerror(errno));
	close(fd);
	dmt_dev_path(req.id, path, sizeof(path));
	fails += dmt_two_processes(path, &plan, versions);
	fails += dmt_private_copy(path, &plan, versions);
	fails += dmt_pinned_page(ctl, buffer, path, &plan, versions);
	fails += dmt_sync_drop(ctl, req.id, buffer, path, file, &plan, versions);
	fails += dmt_ok("UNLINK file link", dmt_unlink(ctl, req.id));
	close(ctl);
	unlink(file);
	free(versions);
	printf("file link checks: %d failures\n", fails);
	return fails;
}


/* ---- writebacks that fail ---- */

/* Dirties every page of the mapped file (twice the buffer), forcing evictions. */
static void dmt_dirty_all(unsigned char *base, uint64_t pages)
{
	uint64_t p;

	for (p = 0; p < pages; p++)
		base[p * DMT_PAGE] = (unsigned char)(p | 1);
}

static int dmt_full_fs(int ctl, const char *path, unsigned int id, unsigned int buffer,
		       const char *mnt)
{
	size_t len = 512 * DMT_PAGE;
	struct dimmap_kstats st;
	int fd = open(path, O_RDWR), fails = 0;
	unsigned char *base;

	base = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return DMT_FAIL("map %s: %s", path, strerror(errno));
	dmt_dirty_all(base, 512);
	fails += dmt_errno("msync with the file system full", msync(base, len, MS_SYNC), ENOSPC);
	if (dmt_stats(ctl, buffer, &st) || !st.write_errors)
		fails += DMT_FAIL("no write errors counted on a full file system");
	munmap(base, len);
	close(fd);
	fails += dmt_errno("UNLINK with unwritable dirty pages", dmt_unlink(ctl, id), ENOSPC);
	if (mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=4m"))
		return fails + DMT_FAIL("remount %s: %s", mnt, strerror(errno));
	fails += dmt_ok("UNLINK once there is room", dmt_unlink(ctl, id));
	return fails;
}

/* A file system too small for the file: writebacks fail with ENOSPC. msync reports it,
 * faults keep going (pages that cannot be written leave the buffer anyway, like the
 * page cache's), and unlink refuses to drop dirty pages until they can be written.
 */
int dmt_check_write_errors(const char *dir, int buffer)
{
	struct dimmap_link_req req;
	char mnt[256], file[300], path[64];
	int ctl, fd, fails;

	snprintf(mnt, sizeof(mnt), "%s/dmt-small", dir);
	snprintf(file, sizeof(file), "%s/sparse.img", mnt);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k"))
		return DMT_FAIL("mount a small tmpfs on %s: %s", mnt, strerror(errno));
	ctl = open(CTL_PATH, O_RDONLY);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (ctl < 0 || fd < 0 || ftruncate(fd, 512 * DMT_PAGE) || dmt_link(ctl, fd, buffer, &req))
		return DMT_FAIL("LINK %s: %s", file, strerror(errno));
	close(fd);
	dmt_dev_path(req.id, path, sizeof(path));
	fails = dmt_full_fs(ctl, path, req.id, buffer, mnt);
	close(ctl);
	unlink(file);
	umount(mnt);
	printf("write error checks: %d failures\n", fails);
	return fails;
}
