// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dmt_workload.c - the verifiable random read/write workload over a memory-mapped
 * /dev/dimmapN, its replay, and the image maker and checker used on both sides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dmt.h"

int dmt_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("FAIL ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int dmt_plan_check(const struct dmt_plan *plan)
{
	if (!plan->threads || plan->shared >= plan->npages || plan->write_pct > 100)
		return DMT_FAIL("plan: need threads > 0, shared < pages, write-pct <= 100");
	if (plan->npages - plan->shared < plan->threads)
		return DMT_FAIL("plan: fewer private pages than threads");
	return 0;
}

uint32_t *dmt_versions_new(const struct dmt_plan *plan)
{
	return calloc(plan->npages * DMT_CELLS, sizeof(uint32_t));
}

void dmt_replay(const struct dmt_plan *plan, uint32_t *versions)
{
	unsigned int t, i;

	for (t = 0; t < plan->threads; t++) {
		uint64_t rng = dmt_rng_init(plan, t);

		for (i = 0; i < plan->ops; i++) {
			struct dmt_op op = dmt_next_op(plan, t, &rng);

			if (op.write)
				versions[op.page * DMT_CELLS + op.cell]++;
		}
	}
}

static void dmt_fill_page(const struct dmt_plan *plan, uint64_t page, const uint32_t *versions,
			  uint64_t *out)
{
	unsigned int c;

	for (c = 0; c < DMT_CELLS; c++)
		dmt_fill_cell(plan->seed, page, c, versions ? versions[page * DMT_CELLS + c] : 0,
			      out + c * (DMT_CELL / 8));
}

int dmt_make_image(const char *path, const struct dmt_plan *plan)
{
	uint64_t page[DMT_PAGE / 8];
	uint64_t p;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return DMT_FAIL("cannot create %s: %s", path, strerror(errno));
	for (p = 0; p < plan->npages; p++) {
		dmt_fill_page(plan, p, NULL, page);
		if (pwrite(fd, page, DMT_PAGE, (off_t)(p * DMT_PAGE)) != DMT_PAGE) {
			close(fd);
			return DMT_FAIL("cannot write %s: %s", path, strerror(errno));
		}
	}
	if (fsync(fd) || close(fd))
		return DMT_FAIL("cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* Opens for checking, bypassing the page cache when possible. */
static int dmt_open_direct(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECT);

	return fd >= 0 ? fd : open(path, O_RDONLY);
}

/* Returns the number of pages that differ from the expected contents, or -1. */
long long dmt_verify_file(const char *path, const struct dmt_plan *plan,
			  const uint32_t *versions)
{
	static uint64_t want[DMT_PAGE / 8];
	long long bad = 0;
	uint64_t *got, p;
	int fd = dmt_open_direct(path);

	if (fd < 0) {
		DMT_FAIL("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (posix_memalign((void **)&got, DMT_PAGE, DMT_PAGE)) {
		close(fd);
		return -1;
	}
	for (p = 0; p < plan->npages; p++) {
		if (pread(fd, got, DMT_PAGE, (off_t)(p * DMT_PAGE)) != DMT_PAGE) {
			DMT_FAIL("cannot read page %llu of %s", (unsigned long long)p, path);
			bad = -1;
			break;
		}
		dmt_fill_page(plan, p, versions, want);
		if (memcmp(got, want, DMT_PAGE) && bad++ < 5)
			fprintf(stderr, "mismatch: %s page %llu\n", path, (unsigned long long)p);
	}
	free(got);
	close(fd);
	return bad;
}

/* ---- the workload through a mapping ---- */

struct dmt_worker {
	const struct dmt_plan *plan;
	unsigned int t;
	unsigned char *base;
	uint32_t *versions;
	long long mismatches;
};

static int dmt_page_ok(const struct dmt_worker *w, uint64_t page)
{
	uint64_t want[DMT_PAGE / 8];

	dmt_fill_page(w->plan, page, w->versions, want);
	return !memcmp(w->base + page * DMT_PAGE, want, DMT_PAGE);
}

static void *dmt_worker_run(void *arg)
{
	struct dmt_worker *w = arg;
	uint64_t rng = dmt_rng_init(w->plan, w->t);
	unsigned int i;

	for (i = 0; i < w->plan->ops; i++) {
		struct dmt_op op = dmt_next_op(w->plan, w->t, &rng);
		uint32_t *ver = &w->versions[op.page * DMT_CELLS + op.cell];

		if (op.write) {
			uint64_t cell[DMT_CELL / 8];

			dmt_fill_cell(w->plan->seed, op.page, op.cell, ++*ver, cell);
			memcpy(w->base + op.page * DMT_PAGE + op.cell * DMT_CELL, cell, DMT_CELL);
		} else if (!dmt_page_ok(w, op.page) && w->mismatches++ < 5) {
			fprintf(stderr, "mismatch: thread %u read page %llu\n", w->t,
				(unsigned long long)op.page);
		}
	}
	return NULL;
}

static double dmt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs workers first, first + step, ... of the plan as threads of this process. */
static long long dmt_run_threads(const struct dmt_plan *plan, unsigned char *base,
				 uint32_t *versions, unsigned int first, unsigned int step)
{
	struct dmt_worker *w = calloc(plan->threads, sizeof(*w));
	pthread_t *tid = calloc(plan->threads, sizeof(*tid));
	long long bad = 0;
	unsigned int t;

	for (t = first; t < plan->threads; t += step) {
		w[t] = (struct dmt_worker){ plan, t, base, versions, 0 };
		pthread_create(&tid[t], NULL, dmt_worker_run, &w[t]);
	}
	for (t = first; t < plan->threads; t += step) {
		pthread_join(tid[t], NULL);
		bad += w[t].mismatches;
	}
	free(w);
	free(tid);
	return bad;
}

/* One process's share: its own mapping of dev, its workers, a final msync. */
static int dmt_run_process(const char *dev, const struct dmt_plan *plan, unsigned int proc,
			   unsigned int procs, long long *bad)
{
	size_t len = plan->npages * DMT_PAGE;
	uint32_t *versions = dmt_versions_new(plan);
	unsigned char *base;
	int fd, err = 0;

	fd = open(dev, O_RDWR);
	if (fd < 0 || !versions)
		return DMT_FAIL("workload: cannot open %s: %s", dev, strerror(errno));
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return DMT_FAIL("workload: cannot map %s: %s", dev, strerror(errno));
	*bad = dmt_run_threads(plan, base, versions, proc, procs);
	if (msync(base, len, MS_SYNC))
		err = DMT_FAIL("workload: msync %s: %s", dev, strerror(errno));
	if (munmap(base, len) || close(fd))
		err = DMT_FAIL("workload: munmap/close %s: %s", dev, strerror(errno));
	free(versions);
	return err;
}

/* The plan's workers spread over procs processes, each mapping dev on its own. */
int dmt_run_workload(const char *dev, const struct dmt_plan *plan, unsigned int procs)
{
	long long bad = 0;
	double t0 = dmt_now();
	unsigned int p;
	int err = 0;

	for (p = 1; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0) {
			long long mine = 0;

			_exit(dmt_run_process(dev, plan, p, procs, &mine) || mine ? 1 : 0);
		}
		if (pid < 0)
			return DMT_FAIL("workload: fork: %s", strerror(errno));
	}
	err = dmt_run_process(dev, plan, 0, procs ? procs : 1, &bad);
	for (p = 1; p < procs; p++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			err = DMT_FAIL("workload: a worker process failed");
	}
	printf("workload %s: %u processes, %u threads x %u ops, %llu pages, %lld read mismatches, %.2f s\n",
	       dev, procs, plan->threads, plan->ops, (unsigned long long)plan->npages, bad,
	       dmt_now() - t0);
	if (bad)
		err = DMT_FAIL("workload: %lld pages read back wrong through %s", bad, dev);
	return err;
}
