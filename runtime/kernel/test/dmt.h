/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dmt.h - the dimmap VM tests (dimmap-vmtest): deterministic page contents and the
 * random read/write workload, shared by the run inside the VM (through /dev/dimmapN)
 * and the replay on the host that computes what the disk image must hold afterwards.
 *
 * A disk of npages pages is made of 64-byte cells. Cell c of page p at version v holds
 * eight words dmt_word(seed, p, c, v, i); the initial image is version 0 everywhere.
 * Pages [0, shared) are read by every thread and never written; page p >= shared is
 * owned by thread (p - shared) % threads, which alone reads and writes it, so the final
 * contents do not depend on how the threads interleave.
 */
#ifndef DMT_H
#define DMT_H

#include <stdint.h>
#include <stdio.h>

#define DMT_PAGE	4096u
#define DMT_CELL	64u
#define DMT_CELLS	(DMT_PAGE / DMT_CELL)

struct dmt_plan {
	uint64_t seed;
	uint64_t npages;	/* pages of the device */
	uint64_t shared;	/* read-only pages shared by all threads */
	unsigned int threads;
	unsigned int ops;	/* per thread */
	unsigned int write_pct;
};

/* One operation drawn from a thread's generator. */
struct dmt_op {
	uint64_t page;
	unsigned int cell;
	int write;
};

static inline uint64_t dmt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t dmt_word(uint64_t seed, uint64_t page, unsigned int cell,
				uint32_t version, unsigned int i)
{
	return dmt_mix(seed ^ dmt_mix(page * DMT_CELLS + cell) ^
		       ((uint64_t)version << 40) ^ ((uint64_t)i << 56));
}

static inline void dmt_fill_cell(uint64_t seed, uint64_t page, unsigned int cell,
				 uint32_t version, uint64_t *out)
{
	unsigned int i;

	for (i = 0; i < DMT_CELL / 8; i++)
		out[i] = dmt_word(seed, page, cell, version, i);
}

/* Thread t's generator state; dmt_next_op draws the same sequence everywhere. */
static inline uint64_t dmt_rng_init(const struct dmt_plan *plan, unsigned int t)
{
	return dmt_mix(plan->seed * 31 + t + 1);
}

static inline uint64_t dmt_rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return dmt_mix(*state);
}

static inline uint64_t dmt_owned_pages(const struct dmt_plan *plan, unsigned int t)
{
	uint64_t rest = plan->npages - plan->shared;

	return rest > t ? (rest - t + plan->threads - 1) / plan->threads : 0;
}

static inline struct dmt_op dmt_next_op(const struct dmt_plan *plan, unsigned int t,
					uint64_t *rng)
{
	uint64_t r1 = dmt_rng_next(rng), r2 = dmt_rng_next(rng), r3 = dmt_rng_next(rng);
	uint64_t owned = dmt_owned_pages(plan, t);
	struct dmt_op op = { 0, 0, 0 };

	if (plan->shared && (r1 % 4 == 0 || !owned)) {
		op.page = r2 % plan->shared;
		return op;
	}
	op.page = plan->shared + t + (r2 % owned) * plan->threads;
	op.write = (unsigned int)(r3 % 100) < plan->write_pct;
	op.cell = (unsigned int)((r3 >> 8) % DMT_CELLS);
	return op;
}

/* dmt_workload.c */
int dmt_plan_check(const struct dmt_plan *plan);
uint32_t *dmt_versions_new(const struct dmt_plan *plan);
void dmt_replay(const struct dmt_plan *plan, uint32_t *versions);
int dmt_make_image(const char *path, const struct dmt_plan *plan);
long long dmt_verify_file(const char *path, const struct dmt_plan *plan,
			  const uint32_t *versions);
int dmt_run_workload(const char *dev, const struct dmt_plan *plan, unsigned int procs);

/* dmt_checks.c */
int dmt_check_ioctls(const char *blockdev, int buffers);
int dmt_check_file_link(const char *dir, int buffer);
int dmt_check_write_errors(const char *dir, int buffer);
int dmt_check_independent(int quiet_buffer, const char *dev, const struct dmt_plan *plan,
			  unsigned int procs);

/* Prints one line starting with "FAIL" and returns 1, so callers count failures. */
int dmt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define DMT_FAIL(...) dmt_fail(__VA_ARGS__)

#endif /* DMT_H */
