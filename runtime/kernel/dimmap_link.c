// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_link.c - the pseudo-devices /dev/dimmapN and their memory mappings.
 *
 * A link redirects to a backing block device or regular file. Every open of
 * /dev/dimmapN shares one anonymous inode's address_space (as DRM does), so
 * unmap_mapping_pages() reaches every process that maps the link, whichever device
 * node it was opened through. The fault handler follows drivers/uio/uio.c: it hands
 * the core a referenced page and lets it install the page-table entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/idr.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "dimmap_compat.h"
#include "dimmap_kmod.h"

static DEFINE_MUTEX(dm_links_lock);
static DEFINE_IDR(dm_links);

static void dm_link_free(struct kref *ref)
{
	struct dm_link *link = container_of(ref, struct dm_link, ref);

	iput(link->inode);
	fput(link->backing);
	kfree(link);
}

void dm_link_put(struct dm_link *link)
{
	kref_put(&link->ref, dm_link_free);
}

/* A reference to a live link (not being unlinked), or NULL. */
struct dm_link *dm_link_get(u32 id)
{
	struct dm_link *link;

	mutex_lock(&dm_links_lock);
	link = idr_find(&dm_links, id);
	if (link && (!link->ready || link->dying))
		link = NULL;
	if (link)
		kref_get(&link->ref);
	mutex_unlock(&dm_links_lock);
	return link;
}

/* ---- memory mappings of /dev/dimmapN ---- */

static vm_fault_t dm_vm_fault(struct vm_fault *vmf)
{
	struct dm_link *link = vmf->vma->vm_private_data;
	struct folio *folio;
	int err;

	if (vmf->pgoff >= link->npages)
		return VM_FAULT_SIGBUS;
	err = dm_buffer_fault(link, vmf->pgoff, &folio);
	if (err == -EINTR)
		return VM_FAULT_NOPAGE;	/* fatal signal: the task dies on the way out */
	if (err)
		return err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
	vmf->page = folio_page(folio, 0);
	return VM_FAULT_LOCKED;
}

static const struct vm_operations_struct dm_vm_ops = {
	.fault = dm_vm_fault,
};

/* Maps vma through the link's buffer (/dev/dimmapN and the files of a dimmapfs mount). */
int dm_link_mmap_vma(struct dm_link *link, struct vm_area_struct *vma)
{
	if ((vma->vm_flags & VM_SHARED) && (vma->vm_flags & VM_WRITE) && !link->writable)
		return -EACCES;
	vma->vm_ops = &dm_vm_ops;
	vma->vm_private_data = link;
	dm_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

static int dm_link_mmap(struct file *file, struct vm_area_struct *vma)
{
	return dm_link_mmap_vma(file->private_data, vma);
}

static int dm_link_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct dm_link *link = container_of(misc, struct dm_link, misc);
	int err = 0;

	if ((file->f_mode & FMODE_WRITE) && !link->writable)
		return -EACCES;
	mutex_lock(&dm_links_lock);
	if (!link->ready || link->dying)
		err = -ENODEV;
	else
		link->opens++;
	mutex_unlock(&dm_links_lock);
	if (err)
		return err;
	file->private_data = link;
	file->f_mapping = dm_link_mapping(link);
	return 0;
}

static int dm_link_release(struct inode *inode, struct file *file)
{
	struct dm_link *link = file->private_data;

	mutex_lock(&dm_links_lock);
	link->opens--;
	mutex_unlock(&dm_links_lock);
	return 0;
}

/* msync(MS_SYNC) and fsync: write the range's dirty pages back, then flush the device. */
static int dm_link_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct dm_link *link = file->private_data;
	int err, wb, flush;

	if (start < 0 || end < start)
		return -EINVAL;
	err = dm_buffer_sync(link, start >> PAGE_SHIFT, end >> PAGE_SHIFT, false, NULL, NULL);
	flush = link->writable ? vfs_fsync_range(link->backing, start, end, datasync) : 0;
	wb = xchg(&link->wb_err, 0);
	return err ?: wb ?: flush;
}

static const struct file_operations dm_link_fops = {
	.owner = THIS_MODULE,
	.open = dm_link_open,
	.release = dm_link_release,
	.mmap = dm_link_mmap,
	.fsync = dm_link_fsync,
	.llseek = noop_llseek,
};

/* ---- link and unlink ---- */

/* The file behind a link must be a readable block device or regular file. */
static int dm_check_backing(struct file *file, pgoff_t *npages)
{
	umode_t mode = file_inode(file)->i_mode;
	loff_t size;

	if (!S_ISREG(mode) && !S_ISBLK(mode))
		return -EINVAL;
	if (!(file->f_mode & FMODE_READ) || !file->f_op->read_iter)
		return -EBADF;
	/* For a block device f_mapping->host is the device inode, which knows its size. */
	size = i_size_read(file->f_mapping->host);
	if (size < PAGE_SIZE)
		return -EINVAL;
	if ((u64)size >> PAGE_SHIFT > DM_MAX_PGOFF)
		return -EFBIG;
	*npages = size >> PAGE_SHIFT;
	return 0;
}

static bool dm_backing_linked(struct file *file)
{
	struct dm_link *link;
	int id;

	lockdep_assert_held(&dm_links_lock);
	idr_for_each_entry(&dm_links, link, id)
		if (link->backing->f_mapping->host == file->f_mapping->host)
			return true;
	return false;
}

static struct dm_link *dm_link_alloc(struct file *file, struct dm_buffer *buf,
				     pgoff_t npages)
{
	struct dm_link *link = kzalloc(sizeof(*link), GFP_KERNEL);

	if (!link)
		return ERR_PTR(-ENOMEM);
	link->inode = alloc_anon_inode(dm_mnt->mnt_sb);
	if (IS_ERR(link->inode)) {
		struct inode *err = link->inode;

		kfree(link);
		return ERR_CAST(err);
	}
	kref_init(&link->ref);
	link->buf = buf;
	link->backing = file;
	link->npages = npages;
	link->writable = (file->f_mode & FMODE_WRITE) && file->f_op->write_iter;
	return link;
}

static int dm_link_register(struct dm_link *link, bool device)
{
	int id;

	mutex_lock(&dm_links_lock);
	id = dm_backing_linked(link->backing) ? -EBUSY :
		idr_alloc(&dm_links, link, 0, DIMMAP_MAX_LINKS, GFP_KERNEL);
	mutex_unlock(&dm_links_lock);
	if (id < 0)
		return id;
	link->id = id;
	if (!device) {		/* a dimmapfs file: its mount owns it, no /dev node */
		link->fs_owned = true;
		snprintf(link->name, sizeof(link->name), "dimmapfs%d", id);
		return 0;
	}
	snprintf(link->name, sizeof(link->name), DIMMAP_DEV_PREFIX "%d", id);
	link->misc.minor = MISC_DYNAMIC_MINOR;
	link->misc.name = link->name;
	link->misc.fops = &dm_link_fops;
	link->misc.mode = 0600;
	return misc_register(&link->misc);
}

/*
 * Links file (whose reference the link takes over, also on failure) to buf: with device,
 * as /dev/dimmapN; without, for a dimmapfs file, which drops it with dm_link_drop_owned.
 */
int dm_link_create_file(struct file *file, struct dm_buffer *buf, bool device,
			struct dm_link **out)
{
	struct dm_link *link;
	pgoff_t npages;
	int err;

	err = dm_check_backing(file, &npages);
	if (err)
		goto put_file;
	link = dm_link_alloc(file, buf, npages);
	if (IS_ERR(link)) {
		err = PTR_ERR(link);
		goto put_file;
	}
	err = dm_link_register(link, device);
	if (err)
		goto unregister;
	mutex_lock(&dm_links_lock);
	link->ready = true;
	mutex_unlock(&dm_links_lock);
	if (device)
		pr_info("%s: linked to %pD (%lu pages, buffer %u%s)\n", link->name, file, npages,
			buf->index, link->writable ? "" : ", read-only");
	*out = link;
	return 0;

unregister:
	mutex_lock(&dm_links_lock);
	if (idr_find(&dm_links, link->id) == link)
		idr_remove(&dm_links, link->id);
	mutex_unlock(&dm_links_lock);
	dm_link_put(link);	/* drops the file reference too */
	return err;
put_file:
	fput(file);
	return err;
}

int dm_link_create(int fd, struct dm_buffer *buf, struct dm_link **out)
{
	struct file *file = fget(fd);

	if (!file)
		return -EBADF;
	return dm_link_create_file(file, buf, true, out);
}

/* Writes back and frees every page of a dimmapfs file's link, then drops the link. */
int dm_link_drop_owned(struct dm_link *link)
{
	int err;

	mutex_lock(&dm_links_lock);
	link->dying = true;
	mutex_unlock(&dm_links_lock);
	err = dm_buffer_sync(link, 0, link->npages - 1, true, NULL, NULL);
	if (!err && link->writable)
		err = vfs_fsync(link->backing, 0);
	if (err) {
		pr_err("%s: writeback of %pD failed (%d): its dirty pages are lost\n", link->name,
		       link->backing, err);
		dm_buffer_discard(link);
	}
	mutex_lock(&dm_links_lock);
	idr_remove(&dm_links, link->id);
	mutex_unlock(&dm_links_lock);
	dm_link_put(link);
	return err;
}

/* Writes everything back and removes /dev/dimmapN; -EBUSY while it is open. */
int dm_link_unlink(u32 id)
{
	struct dm_link *link;
	int err;

	mutex_lock(&dm_links_lock);
	link = idr_find(&dm_links, id);
	err = !link || !link->ready ? -ENOENT :
	      link->dying || link->opens || link->fs_owned ? -EBUSY : 0;
	if (!err)
		link->dying = true;	/* no new opens from here on */
	mutex_unlock(&dm_links_lock);
	if (err)
		return err;

	err = dm_buffer_sync(link, 0, link->npages - 1, true, NULL, NULL);
	if (!err && link->writable)
		err = vfs_fsync(link->backing, 0);
	mutex_lock(&dm_links_lock);
	if (err)
		link->dying = false;	/* keep it: its dirty pages could not be written */
	else
		idr_remove(&dm_links, id);
	mutex_unlock(&dm_links_lock);
	if (err)
		return err;
	misc_deregister(&link->misc);
	pr_info("%s: unlinked\n", link->name);
	dm_link_put(link);
	return 0;
}

/* Module unload: nothing can be open (each open file pins the module). */
void dm_link_unlink_all(void)
{
	struct dm_link *link;
	int id;

	idr_for_each_entry(&dm_links, link, id) {
		if (!dm_link_unlink(id))
			continue;
		pr_err("%s: writeback failed at unload: its dirty pages are lost\n", link->name);
		idr_remove(&dm_links, id);
		if (!link->fs_owned)
			misc_deregister(&link->misc);
		dm_buffer_discard(link);
		dm_link_put(link);
	}
	idr_destroy(&dm_links);
}

static void dm_link_path(struct file *file, char *out, size_t len)
{
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	char *path = buf ? d_path(&file->f_path, buf, PATH_MAX) : ERR_PTR(-ENOMEM);

	if (!IS_ERR(path))
		strscpy(out, path, len);
	kfree(buf);
}

int dm_link_info(u32 id, struct dimmap_link_info *info)
{
	struct dm_link *link = dm_link_get(id);
	struct inode *inode;
	struct file *file;

	if (!link)
		return -ENOENT;
	file = link->backing;
	inode = file_inode(file);
	info->buffer = link->buf->index;
	info->flags = (link->writable ? DIMMAP_LINK_WRITABLE : 0) |
		      (file->f_flags & O_DIRECT ? DIMMAP_LINK_DIRECT : 0) |
		      (S_ISBLK(inode->i_mode) ? DIMMAP_LINK_BLOCKDEV : 0) |
		      (link->fs_owned ? DIMMAP_LINK_OVERLAY : 0);
	mutex_lock(&dm_links_lock);
	info->opens = link->opens;
	mutex_unlock(&dm_links_lock);
	info->size = (u64)link->npages << PAGE_SHIFT;
	info->dev_major = MAJOR(inode->i_sb->s_dev);
	info->dev_minor = MINOR(inode->i_sb->s_dev);
	info->rdev_major = S_ISBLK(inode->i_mode) ? MAJOR(inode->i_rdev) : 0;
	info->rdev_minor = S_ISBLK(inode->i_mode) ? MINOR(inode->i_rdev) : 0;
	info->ino = inode->i_ino;
	dm_link_path(file, info->path, sizeof(info->path));
	dm_link_put(link);
	return 0;
}
