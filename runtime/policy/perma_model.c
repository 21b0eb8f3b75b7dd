// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The PerMA latency model. See perma_model.h.
 * Kernel coding style: this file is also compiled into dimmap.ko.
 */
#include "perma_model.h"

struct perma_preset_row {
	const char *name;
	struct perma_model m;
};

/*
 * PerMA paper, Table I (read characteristics; R = 0 for all generations). PCIe 2.0 at
 * 50% efficiency; P in ps/byte for x8 (lcurr), x16, x32, x64.
 */
static const struct perma_preset_row presets[] = {
	{ "lcurr", { 100000, 0, 500, 50, 420 } },
	{ "lnxt1", { 100000, 0, 250, 50, 420 } },
	{ "lnxt2", { 50000, 0, 125, 50, 210 } },
	{ "lnxt3", { 25000, 0, 62, 50, 105 } },
	{ "sim-opt", { 0, 0, 0, 0, 0 } },
	/*
	 * Not in the paper: this project's machines' disk (2-core Debian VM, virtio NVMe),
	 * fitted by apps/lriot/bench/perma-calibrate: D = 80.6 us, 1680 ps/byte.
	 */
	{ "vm-disk", { 80600, 0, 1680, 100, 0 } },
	{ 0 } /* end */
};

static int same(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int perma_preset(const char *name, struct perma_model *m)
{
	const struct perma_preset_row *row;

	for (row = presets; row->name; row++) {
		if (same(name, row->name)) {
			*m = row->m;
			return 0;
		}
	}
	return -1;
}

dmp_u64 perma_latency_ns(const struct perma_model *m, dmp_u32 concurrent, dmp_u64 bytes)
{
	dmp_u64 per_byte_ps = m->c_ps;

	if (m->e_pct)
		per_byte_ps += (dmp_u64)m->p_ps * 100 / m->e_pct;
	/* Division by a constant: a multiply on 64-bit targets, no libgcc helper needed. */
	return m->d_ns + m->r_ns + (dmp_u64)concurrent * per_byte_ps * bytes / 1000;
}
