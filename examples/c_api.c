/*
 * c_api.c - libdimmap's C API from start to end:
 *   configure a buffer, create an instance, map a file on it, read and write through the
 *   mapping, make the writes durable, print the buffer's counters, unmap, destroy.
 *
 * usage: example-c-api FILE
 *   FILE: an existing file whose size is a multiple of 4096 (it is modified: the first 8
 *   bytes of page i become i). Prints the checksum before and after the writes and the
 *   counters of the 1 MiB buffer; a file larger than that makes pages leave the buffer.
 */
#include <dimmap/dimmap.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checksum.h"

#define PAGE 4096u

/* dimmap_* calls return a negative errno; dimmap_last_error() says what went wrong in words
 * (the file, the size, the cause), so that is what a caller should print. */
static int fail(const char *what) {
	fprintf(stderr, "example-c-api: %s: %s\n", what, dimmap_last_error());
	return 1;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: example-c-api FILE\n");
		return 2;
	}
	const char *path = argv[1];

	/* 1. A configuration: the defaults, then the DIMMAP_* environment variables (so a user
	 *    can still tune DIMMAP_HOT_FRACTION and the like), then what this program insists on. */
	struct dimmap_config cfg;
	if (dimmap_config_init(&cfg) != 0) return fail("DIMMAP_* environment");
	cfg.buffer_bytes = 1u << 20; /* 1 MiB = 256 pages: the memory budget of this mapping */
	if (dimmap_config_validate(&cfg) != 0) return fail("configuration");

	/* 2. An instance: one page buffer with its own budget and counters. */
	struct dimmap_instance *inst = NULL;
	if (dimmap_instance_create(&cfg, &inst) != 0) return fail("dimmap_instance_create");

	/* 3. Map the file as with mmap(2). The instance opens the file itself, so our
	 *    descriptor can be closed right after, as with mmap. */
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "example-c-api: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size == 0 || st.st_size % PAGE != 0) {
		fprintf(stderr, "example-c-api: %s: size must be a non-zero multiple of %u\n", path, PAGE);
		close(fd);
		return 1;
	}
	size_t size = (size_t)st.st_size;
	/* MAP_SHARED: writes go back to the file (on eviction, msync or munmap). */
	uint64_t *words = dimmap_instance_mmap(inst, NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (words == MAP_FAILED) return fail("dimmap_instance_mmap");

	/* 4. Read: plain loads. Each first touch of a page not in the buffer is a miss that the
	 *    engine fills from the file; nothing in this loop knows about DI-MMAP. */
	printf("checksum before: %016" PRIx64 "\n", example_checksum(words, size / 8));

	/* 5. Write: plain stores. The first 8 bytes of page i become i. */
	size_t pages = size / PAGE;
	for (size_t i = 0; i < pages; i++) words[i * (PAGE / 8)] = (uint64_t)i;
	printf("checksum after:  %016" PRIx64 "\n", example_checksum(words, size / 8));

	/* 6. Durability: like msync(2), MS_SYNC returns once dirty pages are on storage. */
	if (dimmap_msync(words, size, MS_SYNC) != 0) return fail("dimmap_msync");

	/* 7. Counters of this instance's buffer (dimmap_stats() would sum every buffer). */
	dimmap_stats_t s;
	if (dimmap_instance_stats(inst, &s) != 0) return fail("dimmap_instance_stats");
	printf("buffer pages: %" PRIu64 "  file pages: %zu\n", s.buffer_pages, pages);
	printf("faults: %" PRIu64 "  misses: %" PRIu64 "  hits: %" PRIu64 "  write faults: %" PRIu64 "\n",
	       s.faults, s.misses, s.hits, s.write_faults);
	printf("pages read ahead: %" PRIu64 "  evictions: %" PRIu64 "  writebacks: %" PRIu64 "\n",
	       s.prefetched, s.evictions, s.writebacks);
	printf("bytes read: %" PRIu64 "  bytes written: %" PRIu64 "\n", s.bytes_read, s.bytes_written);

	/* 8. Unmap (writes back what is still dirty; the whole mapping at once), then the
	 *    instance, which refuses with -EBUSY while one of its mappings is still there. */
	if (dimmap_munmap(words, size) != 0) return fail("dimmap_munmap");
	if (dimmap_instance_destroy(inst) != 0) return fail("dimmap_instance_destroy");
	return 0;
}
