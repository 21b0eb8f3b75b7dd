/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dimmap_compat.h - the few kernel interfaces dimmap.ko uses that changed during 6.x.
 * The module targets 6.1 (Debian 12) and later.
 */
#ifndef DIMMAP_COMPAT_H
#define DIMMAP_COMPAT_H

#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/version.h>

/* 6.3 made vma->vm_flags read-only behind vm_flags_set() and friends. */
#if KERNEL_VERSION(6, 3, 0) > LINUX_VERSION_CODE
static inline void dm_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vma->vm_flags |= flags;
}
#else
static inline void dm_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vm_flags_set(vma, flags);
}
#endif

/* ITER_DEST/ITER_SOURCE replaced READ/WRITE as iov_iter directions in 6.2 (and 6.1.y). */
#ifndef ITER_DEST
#define ITER_DEST	READ
#define ITER_SOURCE	WRITE
#endif

#endif /* DIMMAP_COMPAT_H */
