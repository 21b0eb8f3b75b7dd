// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_io.c - synchronous page reads and writes of a link's backing file.
 *
 * The backing file is the one user space handed to DIMMAP_IOC_LINK. Opened with
 * O_DIRECT (dimmapctl does so when the file system allows it), the bio_vec iterators
 * below go straight to the device and the pages are not cached a second time in the
 * Linux page cache; a block device and a regular file take the same path. A miss reads
 * one page synchronously (the faulting thread needs it); the writes of a writeback
 * pass are all started, then waited for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uio.h>

#include "dimmap_compat.h"
#include "dimmap_kmod.h"

int dm_read_page(struct dm_link *link, pgoff_t pgoff, struct folio *folio)
{
	loff_t pos = (loff_t)pgoff << PAGE_SHIFT;
	struct iov_iter iter;
	struct bio_vec bv;
	ssize_t done;

	u64 due = dm_perma_begin(1);

	bvec_set_page(&bv, folio_page(folio, 0), PAGE_SIZE, 0);
	iov_iter_bvec(&iter, ITER_DEST, &bv, 1, PAGE_SIZE);
	done = vfs_iter_read(link->backing, &iter, &pos, 0);
	dm_perma_end(due, 1);
	if (done < 0)
		return done;
	/* A regular file that shrank after the link: the missing tail is an I/O error. */
	return done == PAGE_SIZE ? 0 : -EIO;
}

void dm_write_batch_init(struct dm_write_batch *batch)
{
	atomic_set(&batch->pending, 1);	/* the submitter's, dropped by dm_write_wait */
	init_completion(&batch->done);
	batch->perma_due = 0;
	batch->perma_requests = 0;
}

static void dm_write_done(struct kiocb *iocb, long ret)
{
	struct dm_write *w = container_of(iocb, struct dm_write, iocb);

	w->err = ret < 0 ? ret : (size_t)ret == w->bytes ? 0 : -EIO;
	if (atomic_dec_and_test(&w->batch->pending))
		complete(&w->batch->done);
}

/*
 * Starts writing n pages at pgoff. On an O_DIRECT file the write is submitted and
 * completes later, so the writes of an eviction batch are in flight together; buffered
 * files complete at once. The bio_vec array must live until dm_write_wait returns.
 * Like the loop driver, this calls ->write_iter directly (a kiocb with a completion).
 */
void dm_write_start(struct dm_link *link, pgoff_t pgoff, struct bio_vec *bv, unsigned int n,
		    struct dm_write *w, struct dm_write_batch *batch)
{
	struct file *file = link->backing;
	struct iov_iter iter;
	ssize_t ret;

	u64 due = dm_perma_begin(n);

	if (due) {
		batch->perma_due = max(batch->perma_due, due);
		batch->perma_requests++;
	}
	w->batch = batch;
	w->bytes = (size_t)n << PAGE_SHIFT;
	atomic_inc(&batch->pending);
	if (!link->writable) {
		dm_write_done(&w->iocb, -EROFS);
		return;
	}
	iov_iter_bvec(&iter, ITER_SOURCE, bv, n, w->bytes);
	init_sync_kiocb(&w->iocb, file);
	w->iocb.ki_pos = (loff_t)pgoff << PAGE_SHIFT;
	w->iocb.ki_flags |= IOCB_WRITE;
	w->iocb.ki_complete = dm_write_done;
	ret = file->f_op->write_iter(&w->iocb, &iter);
	if (ret != -EIOCBQUEUED)
		dm_write_done(&w->iocb, ret);
}

void dm_write_wait(struct dm_write_batch *batch)
{
	if (!atomic_dec_and_test(&batch->pending))
		wait_for_completion(&batch->done);
	dm_perma_end(batch->perma_due, batch->perma_requests);
}
