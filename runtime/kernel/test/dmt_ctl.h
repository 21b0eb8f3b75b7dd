/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dmt_ctl.h - small helpers of the VM tests around /dev/dimmap_ctl's ioctls.
 */
#ifndef DMT_CTL_H
#define DMT_CTL_H

#include <dimmap/dimmap_uapi.h>
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dmt.h"

#define CTL_PATH "/dev/" DIMMAP_CTL_NAME

static inline int dmt_errno(const char *what, int rc, int want)
{
	if (rc == -1 && errno == want)
		return 0;
	return DMT_FAIL("%s: got %d (%s), want errno %s", what, rc, rc ? strerror(errno) : "ok",
			strerror(want));
}

static inline int dmt_ok(const char *what, int rc)
{
	return rc ? DMT_FAIL("%s: %s", what, strerror(errno)) : 0;
}

static inline int dmt_link(int ctl, int fd, unsigned int buffer, struct dimmap_link_req *req)
{
	memset(req, 0, sizeof(*req));
	req->fd = fd;
	req->buffer = buffer;
	return ioctl(ctl, DIMMAP_IOC_LINK, req);
}

static inline int dmt_unlink(int ctl, unsigned int id)
{
	struct dimmap_unlink_req req = { .id = id };

	return ioctl(ctl, DIMMAP_IOC_UNLINK, &req);
}

static inline int dmt_stats(int ctl, unsigned int buffer, struct dimmap_kstats *out)
{
	struct dimmap_stats_req req = { .buffer = buffer };
	int rc = ioctl(ctl, DIMMAP_IOC_STATS, &req);

	*out = req.stats;
	return rc;
}

static inline void dmt_dev_path(unsigned int id, char *out, size_t len)
{
	snprintf(out, len, "/dev/" DIMMAP_DEV_PREFIX "%u", id);
}

#endif /* DMT_CTL_H */
