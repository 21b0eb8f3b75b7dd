/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dimmap_compat.h - the few kernel interfaces dimmap.ko uses that changed during 6.x.
 * The module targets 6.1 (Debian 12) and later.
 */
#ifndef DIMMAP_COMPAT_H
#define DIMMAP_COMPAT_H

#include <linux/fs.h>
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

/* 6.3 replaced the user namespace of setattr and notify_change with a mount idmap. */
#if KERNEL_VERSION(6, 3, 0) > LINUX_VERSION_CODE
#define dm_idmap_t	struct user_namespace
#define DM_NOP_IDMAP	(&init_user_ns)
#else
#define dm_idmap_t	struct mnt_idmap
#define DM_NOP_IDMAP	(&nop_mnt_idmap)
#endif

/* 6.6 hid i_ctime behind accessors, 6.7 i_atime and i_mtime too. */
static inline void dm_inode_copy_times(struct inode *to, const struct inode *from)
{
#if KERNEL_VERSION(6, 7, 0) > LINUX_VERSION_CODE
	to->i_atime = from->i_atime;
	to->i_mtime = from->i_mtime;
#else
	inode_set_atime_to_ts(to, inode_get_atime(from));
	inode_set_mtime_to_ts(to, inode_get_mtime(from));
#endif
#if KERNEL_VERSION(6, 6, 0) > LINUX_VERSION_CODE
	to->i_ctime = from->i_ctime;
#else
	inode_set_ctime_to_ts(to, inode_get_ctime(from));
#endif
}

#endif /* DIMMAP_COMPAT_H */
