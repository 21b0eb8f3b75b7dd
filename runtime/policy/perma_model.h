/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The PerMA NVRAM latency model (PerMA 2012 paper, Eq. 1):
 *
 * IO latency = D + R + N * (P / E + C) * S
 *
 * D device latency, R driver latency, P peripheral-bus time per byte, E bus efficiency,
 * C controller time per byte, N requests in flight (this one included), S bytes moved.
 * Integer arithmetic (nanoseconds, picoseconds, percent) so the kernel module can use it.
 */
#ifndef DIMMAP_PERMA_MODEL_H
#define DIMMAP_PERMA_MODEL_H

#include "dimmap_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

struct perma_model {
	dmp_u64 d_ns;  /* device access latency */
	dmp_u64 r_ns;  /* driver latency */
	dmp_u32 p_ps;  /* peripheral bus, picoseconds per byte */
	dmp_u32 e_pct; /* bus efficiency in percent (1-100); 0 = unlimited bandwidth */
	dmp_u32 c_ps;  /* device controller, picoseconds per byte */
};

/* Table I of the paper (lcurr, lnxt1, lnxt2, lnxt3, sim-opt) and vm-disk. 0, or -1 if unknown. */
int perma_preset(const char *name, struct perma_model *m);

/* Nanoseconds one request of `bytes` takes with `concurrent` requests in flight. */
dmp_u64 perma_latency_ns(const struct perma_model *m, dmp_u32 concurrent, dmp_u64 bytes);

#ifdef __cplusplus
}
#endif

#endif /* DIMMAP_PERMA_MODEL_H */
