/*
 * two_instances.c - two DI-MMAP buffers in one program, each with its own budget.
 *
 * A program can keep data it re-reads (an index, a small table) on one buffer and stream a
 * big file through another: the stream then evicts only its own pages. With the Linux page
 * cache, both would compete for the same memory.
 *
 * usage: example-two-instances STREAM_FILE TABLE_FILE
 *   Both files: non-empty, sizes a multiple of 4096, opened read-only.
 *   STREAM_FILE goes on a 1 MiB buffer and is read once; TABLE_FILE goes on a 4 MiB buffer
 *   and is read before and after the stream. With a table of at most 4 MiB, its second read
 *   costs no I/O: the table's counters show it was read from storage once.
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

struct mapped_file {
	const char *name; /* what the output calls it */
	struct dimmap_instance *inst;
	const uint64_t *words;
	size_t size;
};

static int dimmap_failed(const char *path) {
	fprintf(stderr, "example-two-instances: %s: %s\n", path, dimmap_last_error());
	return -1;
}

/* One instance of `buffer_bytes` with the file mapped read-only on it. */
static int map_on_new_instance(struct mapped_file *m, const char *path, uint64_t buffer_bytes) {
	struct dimmap_config cfg;
	if (dimmap_config_init(&cfg) != 0) return dimmap_failed(path);
	cfg.buffer_bytes = buffer_bytes;
	if (dimmap_instance_create(&cfg, &m->inst) != 0) return dimmap_failed(path);

	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "example-two-instances: cannot open %s: %s\n", path, strerror(errno));
		if (fd >= 0) close(fd);
		return -1;
	}
	if (st.st_size == 0 || st.st_size % 4096 != 0) {
		fprintf(stderr, "example-two-instances: %s: size must be a non-zero multiple of 4096\n", path);
		close(fd);
		return -1;
	}
	m->size = (size_t)st.st_size;
	void *p = dimmap_instance_mmap(m->inst, NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd); /* the instance keeps its own descriptors */
	if (p == MAP_FAILED) return dimmap_failed(path);
	m->words = p;
	return 0;
}

static void read_and_report(const struct mapped_file *m, const char *when) {
	printf("%-6s %-11s checksum %016" PRIx64 "\n", m->name, when, example_checksum(m->words, m->size / 8));
}

static void print_stats(const struct mapped_file *m) {
	dimmap_stats_t s;
	if (dimmap_instance_stats(m->inst, &s) != 0) return;
	printf("%s: file %zu bytes, buffer %" PRIu64 " pages, resident %" PRIu64 " pages, misses %" PRIu64
	       ", read ahead %" PRIu64 ", evictions %" PRIu64 ", bytes read %" PRIu64 "\n",
	       m->name, m->size, s.buffer_pages, s.resident_pages, s.misses, s.prefetched, s.evictions,
	       s.bytes_read);
}

static int unmap_and_destroy(struct mapped_file *m) {
	if (dimmap_munmap((void *)m->words, m->size) != 0 || dimmap_instance_destroy(m->inst) != 0) {
		fprintf(stderr, "example-two-instances: %s: %s\n", m->name, dimmap_last_error());
		return -1;
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: example-two-instances STREAM_FILE TABLE_FILE\n");
		return 2;
	}
	struct mapped_file stream = {.name = "stream"}, table = {.name = "table"};
	if (map_on_new_instance(&stream, argv[1], 1u << 20) != 0) return 1;
	if (map_on_new_instance(&table, argv[2], 4u << 20) != 0) return 1;

	read_and_report(&table, "first read");
	read_and_report(&stream, "only read");    /* fills and cycles the 1 MiB buffer only */
	read_and_report(&table, "second read");  /* its pages are still in its own buffer */

	print_stats(&stream);
	print_stats(&table);
	return unmap_and_destroy(&stream) == 0 && unmap_and_destroy(&table) == 0 ? 0 : 1;
}
