// SPDX-License-Identifier: GPL-2.0
/*
 * Optional PerMA NVRAM latency model (runtime/policy/perma_model.c) on the module's page
 * reads and writes: each completes no earlier than the model's latency for the requests
 * then in flight. The wait is a spin, a yield or a sleep depending on its length, as the
 * PerMA simulator did.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#include "dimmap_kmod.h"
#include "perma_model.h"

static char *perma = "";
module_param(perma, charp, 0444);
MODULE_PARM_DESC(perma,
		 "PerMA latency model: lcurr, lnxt1, lnxt2, lnxt3, sim-opt, vm-disk, or D_NS,R_NS,P_PS,E_PCT,C_PS ('' = off)");

static struct perma_model dm_perma_model;
static bool dm_perma_on;
static atomic_t dm_perma_inflight = ATOMIC_INIT(0);

int dm_perma_init(void)
{
	unsigned long long d, r, p, e, c;

	if (!perma || !*perma)
		return 0;
	if (!perma_preset(perma, &dm_perma_model)) {
		dm_perma_on = true;
	} else if (sscanf(perma, "%llu,%llu,%llu,%llu,%llu", &d, &r, &p, &e, &c) == 5 &&
		   d <= NSEC_PER_SEC && r <= NSEC_PER_SEC && p <= 1000000 && e <= 100 &&
		   c <= 1000000) {
		dm_perma_model.d_ns = d;
		dm_perma_model.r_ns = r;
		dm_perma_model.p_ps = p;
		dm_perma_model.e_pct = e;
		dm_perma_model.c_ps = c;
		dm_perma_on = true;
	} else {
		pr_err("perma=%s: not a preset (lcurr, lnxt1, lnxt2, lnxt3, sim-opt, vm-disk) nor D_NS,R_NS,P_PS,E_PCT,C_PS within range\n",
		       perma);
		return -EINVAL;
	}
	pr_info("PerMA model %s: %llu ns per page alone\n", perma,
		perma_latency_ns(&dm_perma_model, 1, PAGE_SIZE));
	return 0;
}

u64 dm_perma_begin(unsigned int pages)
{
	unsigned int n;

	if (!dm_perma_on)
		return 0;
	n = atomic_inc_return(&dm_perma_inflight);
	return ktime_get_ns() + perma_latency_ns(&dm_perma_model, n, (u64)pages << PAGE_SHIFT);
}

void dm_perma_end(u64 due, unsigned int requests)
{
	s64 left;

	if (!due)
		return;
	while ((left = (s64)(due - ktime_get_ns())) > 0) {
		if (left < 10 * NSEC_PER_USEC)
			ndelay(left);				/* spin */
		else if (left < 100 * NSEC_PER_USEC)
			cond_resched();				/* yield */
		else
			usleep_range(left / NSEC_PER_USEC - 50, left / NSEC_PER_USEC);	/* sleep */
	}
	atomic_sub(requests, &dm_perma_inflight);
}
