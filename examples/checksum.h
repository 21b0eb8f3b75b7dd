/*
 * checksum.h - the checksum the examples print: 64-bit FNV-1a over the file's
 * little-endian 64-bit words. Reading every word is the point (it makes the mapping fault
 * in every page); the tests recompute the same value from the file to check the output.
 */
#ifndef DIMMAP_EXAMPLES_CHECKSUM_H
#define DIMMAP_EXAMPLES_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t example_checksum(const uint64_t *words, size_t count) {
	uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a offset basis */
	for (size_t i = 0; i < count; i++) {
		hash ^= words[i];
		hash *= 0x100000001b3ull; /* FNV prime */
	}
	return hash;
}

#endif /* DIMMAP_EXAMPLES_CHECKSUM_H */
