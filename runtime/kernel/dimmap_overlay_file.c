// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_overlay_file.c - the regular files of dimmapfs (dimmap_overlay.c: the mount and
 * directories). Each open opens the file in DIR; the first open also gives the file a link,
 * so that its mappings go through the mount's buffer. read and write pass to DIR's file and
 * stay coherent with the mappings; a file that is not a page multiple is mapped by DIR's own
 * file system.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "dimmap_compat.h"
#include "dimmap_overlay.h"

struct dmfs_open {
	struct file *real;	/* this open of the file in DIR */
};

/* The file's link, created on its first open; NULL if it is mapped through DIR instead. */
static int dmfs_get_link(struct inode *inode, struct dm_link **out)
{
	struct dmfs_mount *m = inode->i_sb->s_fs_info;
	struct dmfs_node *node = dmfs_node(inode);
	struct file *file;
	loff_t size;
	int err = 0;

	mutex_lock(&node->lock);
	size = i_size_read(d_inode(node->backing.dentry));
	if (node->link || size < PAGE_SIZE || (size & ~PAGE_MASK))
		goto out;
	/* O_DIRECT where DIR's file system allows it: the pages are not cached twice. */
	file = dentry_open(&node->backing, O_RDWR | O_LARGEFILE | O_DIRECT, current_cred());
	if (IS_ERR(file))
		file = dentry_open(&node->backing, O_RDWR | O_LARGEFILE, current_cred());
	if (IS_ERR(file))
		file = dentry_open(&node->backing, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto out;
	}
	err = dm_link_create_file(file, m->buf, false, &node->link);
out:
	*out = node->link;
	mutex_unlock(&node->lock);
	return err;
}

static int dmfs_open(struct inode *inode, struct file *file)
{
	struct dmfs_node *node = dmfs_node(inode);
	struct dmfs_open *o;
	struct dm_link *link;
	int err;

	err = dmfs_get_link(inode, &link);
	if (err)
		return err;
	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	o->real = dentry_open(&node->backing, file->f_flags & (O_ACCMODE | O_LARGEFILE | O_APPEND |
							       O_SYNC | O_DSYNC),
			      current_cred());
	if (IS_ERR(o->real)) {
		err = PTR_ERR(o->real);
		kfree(o);
		return err;
	}
	file->private_data = o;
	if (link)
		file->f_mapping = dm_link_mapping(link);	/* unmap reaches this file's vmas */
	return 0;
}

static int dmfs_release(struct inode *inode, struct file *file)
{
	struct dmfs_open *o = file->private_data;

	fput(o->real);
	kfree(o);
	return 0;
}

/* The link covers the file's whole pages: after the file grew or shrank. */
static void dmfs_resize_link(struct dmfs_node *node)
{
	if (node->link)
		WRITE_ONCE(node->link->npages,
			   i_size_read(d_inode(node->backing.dentry)) >> PAGE_SHIFT);
}

/*
 * chmod, chown, utimes and truncate go to the file in DIR. A truncate first writes the
 * buffer's pages of the file back and drops them; it is refused while the file is mapped.
 */
static int dmfs_setattr(dm_idmap_t *idmap, struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct dmfs_node *node = dmfs_node(inode);
	struct dentry *real = node->backing.dentry;
	struct iattr fwd = *attr;
	int err;

	err = setattr_prepare(idmap, dentry, attr);
	if (err)
		return err;
	if ((attr->ia_valid & ATTR_SIZE) && node->link) {
		if (mapping_mapped(dm_link_mapping(node->link)))
			return -EBUSY;
		err = dm_buffer_sync(node->link, 0, node->link->npages - 1, true, NULL, NULL);
		if (err)
			return err;
	}
	fwd.ia_valid &= ~ATTR_FILE;
	if (fwd.ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		fwd.ia_valid &= ~ATTR_MODE;	/* notify_change works the mode out itself */
	err = mnt_want_write(node->backing.mnt);
	if (err)
		return err;
	inode_lock(d_inode(real));
	err = notify_change(DM_NOP_IDMAP, real, &fwd, NULL);
	inode_unlock(d_inode(real));
	mnt_drop_write(node->backing.mnt);
	if (!err) {
		dmfs_copy_attr(inode, d_inode(real));
		dmfs_resize_link(node);
	}
	return err;
}

const struct inode_operations dmfs_file_iops = {
	.setattr = dmfs_setattr,
};

/* The buffer pages of [pos, pos + len): written back, or also dropped. */
static int dmfs_sync_range(struct inode *inode, loff_t pos, size_t len, bool drop)
{
	struct dm_link *link = dmfs_node(inode)->link;

	if (!link || !len)
		return 0;
	return dm_buffer_sync(link, pos >> PAGE_SHIFT, (pos + len - 1) >> PAGE_SHIFT, drop,
			      NULL, NULL);
}

static ssize_t dmfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct dmfs_open *o = iocb->ki_filp->private_data;
	struct inode *inode = file_inode(iocb->ki_filp);
	int err = dmfs_sync_range(inode, iocb->ki_pos, iov_iter_count(to), false);

	if (err)
		return err;
	return vfs_iter_read(o->real, to, &iocb->ki_pos, 0);
}

static ssize_t dmfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct dmfs_open *o = iocb->ki_filp->private_data;
	struct inode *inode = file_inode(iocb->ki_filp);
	struct inode *real = file_inode(o->real);
	size_t len = iov_iter_count(from);
	ssize_t done;
	int err;

	if (iocb->ki_flags & IOCB_APPEND)
		iocb->ki_pos = i_size_read(real);
	err = dmfs_sync_range(inode, iocb->ki_pos, len, true);	/* dirty pages go first */
	if (err)
		return err;
	done = vfs_iter_write(o->real, from, &iocb->ki_pos, 0);
	if (done > 0) {
		err = dmfs_sync_range(inode, iocb->ki_pos - done, done, true);	/* refaulted meanwhile */
		i_size_write(inode, i_size_read(real));
		dmfs_resize_link(dmfs_node(inode));
	}
	return err ?: done;
}

static int dmfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dmfs_open *o = file->private_data;
	struct dm_link *link = dmfs_node(file_inode(file))->link;

	if (link && !(i_size_read(file_inode(o->real)) & ~PAGE_MASK))
		return dm_link_mmap_vma(link, vma);
	/* Not page-aligned: DIR's own file system maps it (as overlayfs does). */
	if (!o->real->f_op->mmap)
		return -ENODEV;
	vma_set_file(vma, o->real);
	return o->real->f_op->mmap(o->real, vma);
}

static int dmfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct dmfs_open *o = file->private_data;
	struct dm_link *link = dmfs_node(file_inode(file))->link;
	int err = 0, wb = 0;

	if (start < 0 || end < start)
		return -EINVAL;
	if (link) {
		err = dm_buffer_sync(link, start >> PAGE_SHIFT, end >> PAGE_SHIFT, false, NULL, NULL);
		wb = xchg(&link->wb_err, 0);
	}
	return err ?: wb ?: vfs_fsync_range(o->real, start, end, datasync);
}

static loff_t dmfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct dmfs_open *o = file->private_data;

	i_size_write(file_inode(file), i_size_read(file_inode(o->real)));
	return generic_file_llseek(file, offset, whence);
}

const struct file_operations dmfs_file_fops = {
	.owner = THIS_MODULE,
	.open = dmfs_open,
	.release = dmfs_release,
	.read_iter = dmfs_read_iter,
	.write_iter = dmfs_write_iter,
	.mmap = dmfs_mmap,
	.fsync = dmfs_fsync,
	.llseek = dmfs_llseek,
};
