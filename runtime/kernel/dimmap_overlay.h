/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dimmap_overlay.h - what the two halves of dimmapfs share: dimmap_overlay.c (the mount,
 * the super block, directories) and dimmap_overlay_file.c (regular files).
 */
#ifndef DIMMAP_OVERLAY_H
#define DIMMAP_OVERLAY_H

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/path.h>

#include "dimmap_kmod.h"

#define DMFS_MAGIC 0x646d6673	/* "dmfs" */

struct dmfs_mount {
	struct dm_buffer *buf;
};

/* An inode of the overlay: the file or directory it shows, and its link once opened. */
struct dmfs_node {
	struct path backing;
	struct mutex lock;	/* creating the link */
	struct dm_link *link;	/* NULL until the first open, or when not page-aligned */
};

extern const struct inode_operations dmfs_file_iops;
extern const struct file_operations dmfs_file_fops;

static inline struct dmfs_node *dmfs_node(struct inode *inode)
{
	return inode->i_private;
}

void dmfs_copy_attr(struct inode *inode, const struct inode *from);

#endif /* DIMMAP_OVERLAY_H */
