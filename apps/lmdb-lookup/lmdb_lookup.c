/* lmdb-lookup - makes an LMDB database of known records and reads it back with random key
 * lookups, through the system's liblmdb: a program that knows nothing of dimmap, for
 * comparing Linux mmap with dimmap-run --files (LMDB reads a database by mapping it).
 *
 *   lmdb-lookup build DIR --records N [--value-size B]
 *       DIR/data.mdb with N records: key "k%015llu" (i), value B bytes that depend only on i.
 *   lmdb-lookup lookup DIR --lookups N [--seed S] [--value-size B]
 *       N lookups of uniformly random keys (xorshift from S) in a read-only environment
 *       (MDB_RDONLY, MDB_NORDAHEAD: readahead only wastes memory on random reads). Every value
 *       is checked against what build wrote. stdout: the counts and a checksum of every value
 *       read (the same on any placement); stderr: the time and lookups/s.
 * Exit status: 0, 1 if the database is missing, unreadable or holds a wrong value, 2 for bad
 * usage. */
#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define TOOL "lmdb-lookup"
#define KEY_LEN 16

static void usage_error(const char *fmt, const char *arg) {
	fprintf(stderr, TOOL ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: " TOOL " build DIR --records N [--value-size B]\n"
			"       " TOOL " lookup DIR --lookups N [--seed S] [--value-size B]\n");
	exit(2);
}

static void fail(const char *what, const char *dir, int rc) {
	fprintf(stderr, TOOL ": %s '%s': %s\n", what, dir, rc ? mdb_strerror(rc) : strerror(errno));
	exit(1);
}

/* A whole decimal number from 1 to max, or a usage error naming the option. */
static uint64_t parse_count(const char *opt, const char *text, uint64_t max) {
	char *end = NULL;
	if (!text || text[0] < '0' || text[0] > '9')
		usage_error("%s needs a whole number", opt);
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end || v == 0 || v > max)
		usage_error("bad value for %s (a whole number from 1)", opt);
	return v;
}

static uint64_t mix(uint64_t x) { /* splitmix64: the value bytes of record i */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void make_key(uint64_t i, char key[32]) { snprintf(key, 32, "k%015llu", (unsigned long long)i); }

static void make_value(uint64_t i, unsigned char *v, size_t len) {
	uint64_t s = mix(i);
	for (size_t k = 0; k < len; k += 8) {
		s = mix(s);
		memcpy(v + k, &s, len - k < 8 ? len - k : 8);
	}
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int build(const char *dir, uint64_t records, size_t value_size) {
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		fail("cannot create the directory", dir, 0);
	/* Leaf pages hold a few records each; twice the raw size covers branch pages and slack. */
	const size_t map = (size_t)(records * (value_size + KEY_LEN + 16) * 2) + (64u << 20);
	if ((rc = mdb_env_create(&env)) || (rc = mdb_env_set_mapsize(env, map)) ||
	    (rc = mdb_env_open(env, dir, MDB_NOSYNC, 0644)))
		fail("cannot create the database in", dir, rc);
	unsigned char *value = malloc(value_size);
	char key[32]; /* record numbers stay below 2^40: 15 digits */
	if (!value)
		fail("out of memory for", dir, ENOMEM);
	for (uint64_t i = 0; i < records;) {
		if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) || (rc = mdb_dbi_open(txn, NULL, 0, &dbi)))
			fail("cannot write the database in", dir, rc);
		for (uint64_t end = i + 65536; i < records && i < end; ++i) {
			make_key(i, key);
			make_value(i, value, value_size);
			MDB_val k = {KEY_LEN, key}, v = {value_size, value};
			if ((rc = mdb_put(txn, dbi, &k, &v, MDB_APPEND)))
				fail("cannot write the database in", dir, rc);
		}
		if ((rc = mdb_txn_commit(txn)))
			fail("cannot write the database in", dir, rc);
	}
	if ((rc = mdb_env_sync(env, 1)))
		fail("cannot write the database in", dir, rc);
	mdb_env_close(env);
	free(value);
	printf("records\t%llu\nvalue_size\t%zu\n", (unsigned long long)records, value_size);
	return 0;
}

static int lookup(const char *dir, uint64_t lookups, uint64_t seed, size_t value_size) {
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_stat st;
	int rc;
	if ((rc = mdb_env_create(&env)) || (rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NORDAHEAD, 0644)))
		fail("cannot open the database in", dir, rc);
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) || (rc = mdb_dbi_open(txn, NULL, 0, &dbi)) ||
	    (rc = mdb_stat(txn, dbi, &st)))
		fail("cannot read the database in", dir, rc);
	const uint64_t records = st.ms_entries;
	if (records == 0) {
		fprintf(stderr, TOOL ": the database in '%s' has no records\n", dir);
		return 1;
	}
	unsigned char *expect = malloc(value_size);
	if (!expect)
		fail("out of memory for", dir, ENOMEM);
	uint64_t x = seed ? seed : 1, found = 0, wrong = 0, checksum = 0xcbf29ce484222325ull;
	char key[32]; /* record numbers stay below 2^40: 15 digits */
	const double t0 = now();
	for (uint64_t n = 0; n < lookups; ++n) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		const uint64_t i = x % records;
		make_key(i, key);
		MDB_val k = {KEY_LEN, key}, v;
		rc = mdb_get(txn, dbi, &k, &v);
		if (rc == MDB_NOTFOUND)
			continue;
		if (rc)
			fail("cannot read the database in", dir, rc);
		++found;
		make_value(i, expect, value_size);
		if (v.mv_size != value_size || memcmp(v.mv_data, expect, value_size) != 0) {
			if (wrong++ == 0)
				fprintf(stderr, TOOL ": record %s in '%s' does not hold what build wrote\n", key, dir);
		}
		const unsigned char *p = v.mv_data;
		for (size_t b = 0; b < v.mv_size; ++b)
			checksum = (checksum ^ p[b]) * 0x100000001b3ull; /* FNV-1a over every value read */
	}
	const double secs = now() - t0;
	mdb_txn_abort(txn);
	mdb_env_close(env);
	free(expect);
	printf("records\t%llu\nlookups\t%llu\nfound\t%llu\nwrong\t%llu\nchecksum\t%016llx\n", (unsigned long long)records,
	       (unsigned long long)lookups, (unsigned long long)found, (unsigned long long)wrong,
	       (unsigned long long)checksum);
	fprintf(stderr, TOOL ": %llu lookups in %.3f s: %.1f lookups/s\n", (unsigned long long)lookups, secs,
		secs > 0 ? lookups / secs : 0.0);
	return wrong || found != lookups ? 1 : 0;
}

int main(int argc, char **argv) {
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: " TOOL " build DIR --records N [--value-size B]\n"
		       "       " TOOL " lookup DIR --lookups N [--seed S] [--value-size B]\n"
		       "Makes an LMDB database of N known records in DIR, or reads it with N random key lookups\n"
		       "through the system liblmdb, checking every value; stdout: counts and a checksum of the\n"
		       "values read, stderr: lookups/s.\n");
		return 0;
	}
	if (argc < 3)
		usage_error("%s", argc < 2 ? "no command given" : "no database directory given");
	const char *cmd = argv[1], *dir = argv[2];
	uint64_t records = 0, lookups = 0, seed = 1, value_size = 1000;
	for (int i = 3; i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(opt, "--records"))
			records = parse_count(opt, val, 1ull << 40);
		else if (!strcmp(opt, "--lookups"))
			lookups = parse_count(opt, val, 1ull << 50);
		else if (!strcmp(opt, "--seed"))
			seed = parse_count(opt, val, UINT64_MAX);
		else if (!strcmp(opt, "--value-size"))
			value_size = parse_count(opt, val, 1u << 20);
		else
			usage_error("unknown option '%s'", opt);
	}
	if (!strcmp(cmd, "build")) {
		if (!records)
			usage_error("%s needs --records", cmd);
		return build(dir, records, value_size);
	}
	if (!strcmp(cmd, "lookup")) {
		if (!lookups)
			usage_error("%s needs --lookups", cmd);
		return lookup(dir, lookups, seed, value_size);
	}
	usage_error("unknown command '%s' (build or lookup)", cmd);
	return 2;
}
