// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_main.c - dimmap.ko: the data-intensive memory-map runtime (DI-MMAP) as a
 * loadable module. At load it allocates its page buffers, then serves /dev/dimmap_ctl.
 *
 *   insmod dimmap.ko buffer_size=256M buffers=2 hot_percent=75 evict_percent=6
 *
 * buffer_size   pages per buffer, as bytes with an optional K/M/G suffix (default 64M)
 * buffers       independent buffers, e.g. one for graph data, one for algorithmic data
 * hot_percent   share of each buffer for the hot-page FIFO (default 75, as in the paper)
 * evict_percent share of each buffer for the eviction queue (default 6)
 * evict_batch   pages leaving the eviction queue together (default 64)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "dimmap_kmod.h"

#define DM_FS_MAGIC 0x64696d6d	/* "dimm" */

static char *buffer_size = "64M";
module_param(buffer_size, charp, 0444);
MODULE_PARM_DESC(buffer_size, "Bytes per buffer, e.g. 64M or 4G (default 64M)");

static unsigned int buffers = 1;
module_param(buffers, uint, 0444);
MODULE_PARM_DESC(buffers, "Number of independent buffers (1-16, default 1)");

static unsigned int hot_percent = 75;
module_param(hot_percent, uint, 0444);
MODULE_PARM_DESC(hot_percent, "Share of a buffer for the hot-page FIFO (0-99, default 75)");

static unsigned int evict_percent = 6;
module_param(evict_percent, uint, 0444);
MODULE_PARM_DESC(evict_percent, "Share of a buffer for the eviction queue (1-49, default 6)");

static unsigned int evict_batch = 64;
module_param(evict_batch, uint, 0444);
MODULE_PARM_DESC(evict_batch, "Pages that leave the eviction queue together (default 64)");

struct vfsmount *dm_mnt;
unsigned int dm_nr_buffers;
struct dm_buffer *dm_buffers[DIMMAP_MAX_BUFFERS];
static u32 dm_buffer_pages;

void dm_fill_version(struct dimmap_version *v)
{
	v->abi = DIMMAP_ABI_VERSION;
	v->buffers = dm_nr_buffers;
	v->buffer_pages = dm_buffer_pages;
	v->page_size = PAGE_SIZE;
	v->hot_percent = hot_percent;
	v->evict_percent = evict_percent;
	v->evict_batch = dm_buffers[0]->pol.par.batch;
	v->max_links = DIMMAP_MAX_LINKS;
}

/* ---- the pseudo file system that owns each link's shared inode ---- */

static int dm_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, DM_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * Never registered, only kern_mount()ed from dm_init and unmounted in dm_exit: no .owner,
 * or the mount itself would pin the module and rmmod could never succeed.
 */
static struct file_system_type dm_fs_type = {
	.name = "dimmap_inodes",
	.init_fs_context = dm_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

/* ---- load and unload ---- */

static int dm_check_params(void)
{
	char *end;
	u64 bytes = memparse(buffer_size, &end);

	if (*end || !bytes) {
		pr_err("buffer_size=%s is not a size like 64M\n", buffer_size);
		return -EINVAL;
	}
	if (bytes >> PAGE_SHIFT < DMP_MIN_PAGES || bytes >> PAGE_SHIFT > U32_MAX / 2) {
		pr_err("buffer_size=%s must hold %u to %u pages\n", buffer_size, DMP_MIN_PAGES,
		       U32_MAX / 2);
		return -EINVAL;
	}
	if (!buffers || buffers > DIMMAP_MAX_BUFFERS || hot_percent > 99 || !evict_percent ||
	    evict_percent > 49 || !evict_batch) {
		pr_err("buffers must be 1-%u, hot_percent 0-99, evict_percent 1-49, evict_batch > 0\n",
		       DIMMAP_MAX_BUFFERS);
		return -EINVAL;
	}
	dm_buffer_pages = bytes >> PAGE_SHIFT;
	return 0;
}

static void dm_destroy_buffers(void)
{
	while (dm_nr_buffers)
		dm_buffer_destroy(dm_buffers[--dm_nr_buffers]);
}

static int dm_create_buffers(void)
{
	unsigned int i;

	for (i = 0; i < buffers; i++) {
		struct dm_buffer *buf = dm_buffer_create(i, dm_buffer_pages, hot_percent * 10,
							 evict_percent * 10, evict_batch);

		if (IS_ERR(buf)) {
			pr_err("cannot allocate buffer %u of %u pages: %ld\n", i, dm_buffer_pages,
			       PTR_ERR(buf));
			dm_destroy_buffers();
			return PTR_ERR(buf);
		}
		dm_buffers[dm_nr_buffers++] = buf;
	}
	return 0;
}

static int __init dm_init(void)
{
	int err;

	err = dm_check_params();
	if (err)
		return err;
	err = dm_perma_init();
	if (err)
		return err;
	dm_mnt = kern_mount(&dm_fs_type);
	if (IS_ERR(dm_mnt))
		return PTR_ERR(dm_mnt);
	err = dm_create_buffers();
	if (err)
		goto unmount;
	err = dm_ctl_register();
	if (err)
		goto free_buffers;
	err = dm_overlay_register();
	if (err) {
		dm_ctl_unregister();
		goto free_buffers;
	}
	pr_info("%u buffer(s) of %u pages, hot FIFO %u%%, eviction queue %u%%, batch %u\n",
		dm_nr_buffers, dm_buffer_pages, hot_percent, evict_percent,
		dm_buffers[0]->pol.par.batch);
	return 0;

free_buffers:
	dm_destroy_buffers();
unmount:
	kern_unmount(dm_mnt);
	return err;
}

static void __exit dm_exit(void)
{
	dm_overlay_unregister();	/* nothing is mounted: a mount pins the module */
	dm_ctl_unregister();
	dm_link_unlink_all();
	dm_destroy_buffers();
	kern_unmount(dm_mnt);
	pr_info("unloaded\n");
}

module_init(dm_init);
module_exit(dm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DI-MMAP: a fixed page buffer with FIFO/hot-FIFO/eviction-queue policy for memory-mapped storage");
MODULE_AUTHOR("dimmap project");
