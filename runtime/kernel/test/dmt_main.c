// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dimmap-vmtest - the checks the qemu harness runs inside the VM, and the image maker
 * and checker it runs on the host. Static, so it needs nothing from the initramfs.
 *
 *   dimmap-vmtest mkimage --image=F --pages=N --seed=S          (host: initial disk)
 *   dimmap-vmtest verify --image=F PLAN                         (expected after workload)
 *   dimmap-vmtest workload --dev=/dev/dimmapN [--procs=N] PLAN   (random reads and writes)
 *   dimmap-vmtest independent --dev=/dev/dimmapN --quiet-buffer=B [--procs=N] PLAN
 *   dimmap-vmtest ioctls --blockdev=/dev/vdX --buffers=N
 *   dimmap-vmtest filelink --dir=DIR --buffer=B
 *   dimmap-vmtest writeerrors --dir=DIR --buffer=B              (mounts a tiny tmpfs)
 *   dimmap-vmtest latency --dev=/dev/dimmapN --pages=N --min-ns=T  (N cold reads take >= N*T)
 *   dimmap-vmtest hold --dev=F --seconds=S   (maps F, closes it, touches it, sleeps: a
 *                                             mapping without an open descriptor)
 *   dimmap-vmtest hold --dev=F --until-eof   (the same, held until stdin reaches end of
 *                                             file: as long as the caller needs, however
 *                                             slowly a loaded host runs the VM)
 * PLAN: --pages=N --seed=S [--shared=N] [--threads=N] [--ops=N] [--write-pct=P]
 * Exit status 0 when every check passed; failures print lines starting with FAIL.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dmt.h"

struct dmt_args {
	struct dmt_plan plan;
	const char *image, *dev, *blockdev, *dir;
	int buffers, buffer, quiet_buffer;
	unsigned int procs;
	unsigned long long min_ns;
	unsigned int seconds;
	int until_eof;
};

static int dmt_parse(int argc, char **argv, struct dmt_args *a)
{
	static const struct option opts[] = {
		{ "image", required_argument, 0, 'i' },	{ "pages", required_argument, 0, 'p' },
		{ "seed", required_argument, 0, 's' },	{ "shared", required_argument, 0, 'S' },
		{ "threads", required_argument, 0, 't' }, { "ops", required_argument, 0, 'o' },
		{ "write-pct", required_argument, 0, 'w' }, { "dev", required_argument, 0, 'd' },
		{ "blockdev", required_argument, 0, 'b' }, { "buffers", required_argument, 0, 'B' },
		{ "buffer", required_argument, 0, 'u' }, { "dir", required_argument, 0, 'D' },
		{ "quiet-buffer", required_argument, 0, 'q' }, { "procs", required_argument, 0, 'P' },
		{ "min-ns", required_argument, 0, 'L' }, { "seconds", required_argument, 0, 'T' },
		{ "until-eof", no_argument, 0, 'E' },	{ 0, 0, 0, 0 },
	};
	int c;

	*a = (struct dmt_args){ .plan = { .threads = 4, .ops = 1000, .write_pct = 30 },
				.buffers = 1, .dir = "/tmp", .procs = 1 };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			a->image = optarg;
			break;
		case 'L':
			a->min_ns = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			a->plan.npages = strtoull(optarg, NULL, 0);
			break;
		case 's':
			a->plan.seed = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			a->plan.shared = strtoull(optarg, NULL, 0);
			break;
		case 't':
			a->plan.threads = (unsigned int)atoi(optarg);
			break;
		case 'o':
			a->plan.ops = (unsigned int)atoi(optarg);
			break;
		case 'w':
			a->plan.write_pct = (unsigned int)atoi(optarg);
			break;
		case 'd':
			a->dev = optarg;
			break;
		case 'b':
			a->blockdev = optarg;
			break;
		case 'B':
			a->buffers = atoi(optarg);
			break;
		case 'u':
			a->buffer = atoi(optarg);
			break;
		case 'D':
			a->dir = optarg;
			break;
		case 'P':
			a->procs = (unsigned int)atoi(optarg);
			break;
		case 'q':
			a->quiet_buffer = atoi(optarg);
			break;
		case 'T':
			a->seconds = (unsigned int)atoi(optarg);
			break;
		case 'E':
			a->until_eof = 1;
			break;
		default: return DMT_FAIL("unknown option; see the comment in dmt_main.c");
		}
	}
	return 0;
}

static int dmt_verify(const struct dmt_args *a)
{
	uint32_t *versions = dmt_versions_new(&a->plan);
	long long bad;

	if (!a->image || !versions)
		return DMT_FAIL("verify needs --image");
	dmt_replay(&a->plan, versions);
	bad = dmt_verify_file(a->image, &a->plan, versions);
	free(versions);
	printf("verify %s: %lld of %llu pages differ from the replayed workload\n", a->image,
	       bad, (unsigned long long)a->plan.npages);
	return bad != 0;
}

/*
 * The PerMA model only ever adds delay: one thread reading pages it has never touched
 * (each a miss) cannot be faster than pages * the model's latency for one request.
 */
static int dmt_check_latency(const char *dev, unsigned long long pages, unsigned long long min_ns)
{
	volatile const char *m;
	struct timespec t0, t1;
	unsigned long long i, ns;
	long sum = 0;
	int fd = open(dev, O_RDONLY);

	if (fd < 0 || !pages) {
		printf("FAIL latency: cannot open %s\n", dev);
		return 1;
	}
	m = mmap(NULL, pages * 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		printf("FAIL latency: cannot map %s\n", dev);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < pages; i++)
		sum += m[i * 4096];
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (t1.tv_sec - t0.tv_sec) * 1000000000ull + t1.tv_nsec - t0.tv_nsec;
	printf("latency: %llu misses in %llu ns: %llu ns each (model %llu) [%ld]\n", pages, ns, ns / pages,
	       min_ns, sum & 1);
	munmap((void *)m, pages * 4096);
	close(fd);
	if (ns < pages * min_ns) {
		printf("FAIL latency: faster than the model allows\n");
		return 1;
	}
	return 0;
}

static int dmt_hold(const char *path, unsigned int seconds, int until_eof)
{
	char sink[64];
	int fd = open(path, O_RDWR);
	volatile char *m;

	if (fd < 0)
		return DMT_FAIL("hold: cannot open %s", path);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return DMT_FAIL("hold: cannot map %s", path);
	(void)m[0];
	printf("hold: %s mapped\n", path);
	if (until_eof)
		while (read(STDIN_FILENO, sink, sizeof(sink)) > 0)
			;
	else
		sleep(seconds);
	munmap((void *)m, 4096);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	struct dmt_args a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dmt_parse(argc - 1, argv + 1, &a))
		return 2;
	if (!strcmp(cmd, "mkimage"))
		return a.image && a.plan.npages ? dmt_make_image(a.image, &a.plan) != 0 : 2;
	if (!strcmp(cmd, "ioctls") && a.blockdev)
		return dmt_check_ioctls(a.blockdev, a.buffers) != 0;
	if (!strcmp(cmd, "filelink"))
		return dmt_check_file_link(a.dir, a.buffer) != 0;
	if (!strcmp(cmd, "writeerrors"))
		return dmt_check_write_errors(a.dir, a.buffer) != 0;
	if (!strcmp(cmd, "hold") && a.dev)
		return dmt_hold(a.dev, a.seconds, a.until_eof) != 0;
	if (!strcmp(cmd, "latency") && a.dev)
		return dmt_check_latency(a.dev, a.plan.npages, a.min_ns);
	if (dmt_plan_check(&a.plan))
		return 2;
	if (!strcmp(cmd, "verify"))
		return dmt_verify(&a);
	if (!strcmp(cmd, "workload") && a.dev)
		return dmt_run_workload(a.dev, &a.plan, a.procs) != 0;
	if (!strcmp(cmd, "independent") && a.dev)
		return dmt_check_independent(a.quiet_buffer, a.dev, &a.plan, a.procs) != 0;
	fprintf(stderr, "usage: see the comment at the top of dmt_main.c\n");
	return 2;
}
