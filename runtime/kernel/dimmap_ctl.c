// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_ctl.c - the control device /dev/dimmap_ctl (SETBIND/GETBIND in the manner of
 * the Linux raw driver and FastMap). Anyone may open it to read information and
 * statistics; changing links needs CAP_SYS_ADMIN. Every argument is checked here
 * before anything else looks at it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "dimmap_kmod.h"

static long dm_ioc_version(void __user *arg)
{
	struct dimmap_version v = {};

	dm_fill_version(&v);
	return copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long dm_ioc_link(void __user *arg)
{
	struct dimmap_link_req req;
	struct dm_link *link;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved[0] || req.reserved[1] || req.buffer >= dm_nr_buffers)
		return -EINVAL;
	err = dm_link_create(req.fd, dm_buffers[req.buffer], &link);
	if (err)
		return err;
	req.id = link->id;
	req.size = (u64)link->npages << PAGE_SHIFT;
	if (copy_to_user(arg, &req, sizeof(req))) {
		dm_link_unlink(req.id);
		return -EFAULT;
	}
	return 0;
}

static long dm_ioc_unlink(void __user *arg)
{
	struct dimmap_unlink_req req;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.id >= DIMMAP_MAX_LINKS)
		return -EINVAL;
	return dm_link_unlink(req.id);
}

static long dm_ioc_info(void __user *arg)
{
	struct dimmap_link_info info = {};
	int err;

	if (get_user(info.id, (__u32 __user *)arg))	/* id is the first field */
		return -EFAULT;
	if (info.id >= DIMMAP_MAX_LINKS)
		return -EINVAL;
	err = dm_link_info(info.id, &info);
	if (err)
		return err;
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long dm_ioc_stats(void __user *arg)
{
	struct dimmap_stats_req req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.buffer >= dm_nr_buffers)
		return -EINVAL;
	dm_buffer_stats(dm_buffers[req.buffer], &req.stats);
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long dm_ioc_sync(void __user *arg)
{
	struct dimmap_sync_req req;
	struct dm_link *link;
	bool drop;
	int err;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~DIMMAP_SYNC_DROP) || req.id >= DIMMAP_MAX_LINKS ||
	    !PAGE_ALIGNED(req.offset) || !PAGE_ALIGNED(req.length) ||
	    req.offset + req.length < req.offset)
		return -EINVAL;
	drop = req.flags & DIMMAP_SYNC_DROP;
	if (drop && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	link = dm_link_get(req.id);
	if (!link)
		return -ENOENT;
	req.written = 0;
	req.dropped = 0;
	err = dm_buffer_sync(link, req.offset >> PAGE_SHIFT,
			     req.length ? ((req.offset + req.length) >> PAGE_SHIFT) - 1 : ULONG_MAX,
			     drop, &req.written, &req.dropped);
	if (!err && link->writable)
		err = vfs_fsync(link->backing, 0);
	dm_link_put(link);
	if (err)
		return err;
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long dm_ctl_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case DIMMAP_IOC_VERSION:
		return dm_ioc_version(uarg);
	case DIMMAP_IOC_LINK:
		return dm_ioc_link(uarg);
	case DIMMAP_IOC_UNLINK:
		return dm_ioc_unlink(uarg);
	case DIMMAP_IOC_INFO:
		return dm_ioc_info(uarg);
	case DIMMAP_IOC_STATS:
		return dm_ioc_stats(uarg);
	case DIMMAP_IOC_SYNC:
		return dm_ioc_sync(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations dm_ctl_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = dm_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,	/* the structures have the same layout */
	.llseek = noop_llseek,
};

static struct miscdevice dm_ctl_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = DIMMAP_CTL_NAME,
	.fops = &dm_ctl_fops,
	.mode = 0644,
};

int dm_ctl_register(void)
{
	return misc_register(&dm_ctl_misc);
}

void dm_ctl_unregister(void)
{
	misc_deregister(&dm_ctl_misc);
}
