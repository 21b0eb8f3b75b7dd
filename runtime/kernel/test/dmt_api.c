// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dimmap-api-vmtest - libdimmap with DIMMAP_ENGINE=kmod inside the VM, through the
 * public C API only (linked statically with libdimmap's sources).
 *
 *   dimmap-api-vmtest --expect-missing   the module is not loaded: a clear error
 *   dimmap-api-vmtest --dir=DIR          map a file of DIR, read, write, msync, unmap
 */
#define _GNU_SOURCE
#include <dimmap/dimmap.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmt.h"

static int dmt_kmod_instance(struct dimmap_instance **inst)
{
	struct dimmap_config cfg;
	int rc = dimmap_config_init(&cfg);

	if (rc)
		return rc;
	cfg.engine = DIMMAP_ENGINE_KMOD;
	return dimmap_instance_create(&cfg, inst);
}

static int dmt_expect_missing(void)
{
	struct dimmap_instance *inst = NULL;
	int rc = dmt_kmod_instance(&inst);

	if (rc != -ENODEV || !strstr(dimmap_last_error(), "/dev/dimmap_ctl"))
		return DMT_FAIL("without dimmap.ko: got %d '%s', want -ENODEV naming /dev/dimmap_ctl", rc,
				dimmap_last_error());
	printf("without the module: %s\n", dimmap_last_error());
	return 0;
}

/* Reads every page of the window, then rewrites one cell in every third page. */
static int dmt_use_window(unsigned char *p, const struct dmt_plan *plan, uint64_t first,
			  uint64_t pages, uint32_t *versions)
{
	uint64_t want[DMT_CELL / 8], i;
	unsigned int c;

	for (i = 0; i < pages; i++) {
		for (c = 0; c < DMT_CELLS; c++) {
			uint64_t page = first + i;

			dmt_fill_cell(plan->seed, page, c, versions[page * DMT_CELLS + c], want);
			if (memcmp(p + i * DMT_PAGE + c * DMT_CELL, want, DMT_CELL))
				return DMT_FAIL("page %llu cell %u reads wrong", (unsigned long long)page, c);
		}
	}
	for (i = 0; i < pages; i += 3) {
		uint64_t page = first + i;
		uint32_t *v = &versions[page * DMT_CELLS + i % DMT_CELLS];

		dmt_fill_cell(plan->seed, page, i % DMT_CELLS, ++*v, want);
		memcpy(p + i * DMT_PAGE + (i % DMT_CELLS) * DMT_CELL, want, DMT_CELL);
	}
	return 0;
}

static int dmt_map_window(struct dimmap_instance *inst, int fd, const struct dmt_plan *plan,
			  uint64_t first, uint64_t pages, uint32_t *versions)
{
	size_t len = pages * DMT_PAGE;
	struct dimmap_stats st;
	unsigned char *p;
	int fails;

	p = dimmap_instance_mmap(inst, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				 (off_t)(first * DMT_PAGE));
	if (p == MAP_FAILED)
		return DMT_FAIL("dimmap_instance_mmap: %s", dimmap_last_error());
	fails = dmt_use_window(p, plan, first, pages, versions);
	if (dimmap_msync(p, len, MS_SYNC))
		fails += DMT_FAIL("dimmap_msync: %s", dimmap_last_error());
	if (dimmap_stats_for(p, &st) || st.faults < pages / 2 ||
	    st.faults != st.misses + st.recoveries + st.hits + st.write_faults)
		fails += DMT_FAIL("dimmap_stats_for: %llu faults for %llu pages",
				  (unsigned long long)st.faults, (unsigned long long)pages);
	if (dimmap_munmap(p, len))
		fails += DMT_FAIL("dimmap_munmap: %s", dimmap_last_error());
	return fails;
}

static int dmt_api(const char *dir)
{
	struct dmt_plan plan = { .seed = 99, .npages = 1024, .threads = 1 };
	uint32_t *versions = dmt_versions_new(&plan);
	struct dimmap_instance *inst = NULL;
	char file[256];
	int fd, fails = 0;
	long long bad;

	snprintf(file, sizeof(file), "%s/dmt-api.img", dir);
	if (!versions || dmt_make_image(file, &plan))
		return 1;
	fd = open(file, O_RDWR);
	if (fd < 0 || dmt_kmod_instance(&inst))
		return DMT_FAIL("kmod instance: %s", dimmap_last_error());
	fails += dmt_map_window(inst, fd, &plan, 0, plan.npages, versions);
	fails += dmt_map_window(inst, fd, &plan, 100, 300, versions);	/* at an offset */
	if (dimmap_instance_destroy(inst))
		fails += DMT_FAIL("dimmap_instance_destroy: %s", dimmap_last_error());
	close(fd);
	if (access("/dev/dimmap0", F_OK) == 0)
		fails += DMT_FAIL("the engine left its link /dev/dimmap0 behind");
	bad = dmt_verify_file(file, &plan, versions);
	if (bad)
		fails += DMT_FAIL("%s: %lld pages differ after dimmap_munmap", file, bad);
	unlink(file);
	free(versions);
	printf("libdimmap kmod engine: %d failures\n", fails);
	return fails;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--expect-missing"))
		return dmt_expect_missing() != 0;
	if (argc == 2 && !strncmp(argv[1], "--dir=", 6))
		return dmt_api(argv[1] + 6) != 0;
	fprintf(stderr, "usage: dimmap-api-vmtest --expect-missing | --dir=DIR\n");
	return 2;
}
