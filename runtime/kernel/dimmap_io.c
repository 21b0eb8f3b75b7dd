// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_io.c - synchronous page reads and writes of a link's backing file.
 *
 * The backing file is the one user space handed to DIMMAP_IOC_LINK. Opened with
 * O_DIRECT (dimmapctl does so when the file system allows it), the bio_vec iterators
 * below go straight to the device and the pages are not cached a second time in the
 * Linux page cache; a block device and a regular file take the same path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uio.h>

#include "dimmap_compat.h"
#include "dimmap_kmod.h"

static int dm_rw(struct file *file, pgoff_t pgoff, struct bio_vec *bv, unsigned int n,
		 unsigned int dir)
{
	size_t len = (size_t)n << PAGE_SHIFT;
	loff_t pos = (loff_t)pgoff << PAGE_SHIFT;
	struct iov_iter iter;
	ssize_t done;

	iov_iter_bvec(&iter, dir, bv, n, len);
	if (dir == ITER_SOURCE) {
		file_start_write(file);
		done = vfs_iter_write(file, &iter, &pos, 0);
		file_end_write(file);
	} else {
		done = vfs_iter_read(file, &iter, &pos, 0);
	}
	if (done < 0)
		return done;
	/* A regular file that shrank after the link: the missing tail is an I/O error. */
	return (size_t)done == len ? 0 : -EIO;
}

int dm_read_page(struct dm_link *link, pgoff_t pgoff, struct folio *folio)
{
	struct bio_vec bv;

	bvec_set_page(&bv, folio_page(folio, 0), PAGE_SIZE, 0);
	return dm_rw(link->backing, pgoff, &bv, 1, ITER_DEST);
}

int dm_write_pages(struct dm_link *link, pgoff_t pgoff, struct bio_vec *bv, unsigned int n)
{
	if (!link->writable)
		return -EROFS;
	return dm_rw(link->backing, pgoff, bv, n, ITER_SOURCE);
}
