// lookup.hpp - the micro-benchmark kernel: many threads looking keys up in a mapped
// structure, and its verifier against an independent std:: container.
#pragma once

#include <cstdint>
#include <string>

#include "microbench/structure_file.hpp"

namespace microbench {

struct LookupOptions {
  uint64_t queries = 1 << 20;  // in total; threads take them in chunks from a shared counter
  unsigned threads = 1;
  uint64_t seed = 1;           // of the query stream (see keys.hpp)
  double max_seconds = 0;      // > 0: stop handing out queries after this long
};

struct LookupResult {
  uint64_t queries = 0;   // answered (fewer than asked if max_seconds ran out)
  uint64_t found = 0;
  uint64_t wrong = 0;     // answers that contradict the data set (must be 0)
  uint64_t checksum = 0;  // sum of the values found: for all queries, the same for any placement
                          // and thread count
  double seconds = 0;
  double lookups_per_second() const { return seconds > 0 ? queries / seconds : 0; }
};

// Runs the lookups; every answer is checked on the fly against what the key generator
// says (present or absent, and the value), so a placement that returns wrong bytes shows as
// wrong > 0 at any data-set size.
LookupResult run_lookups(const StructureFile& file, const LookupOptions& opt);

struct VerifyResult {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::string first_mismatch;  // "" if none
};

// Builds the data set again in memory as the matching std:: container (std::vector + binary
// search, std::map, std::unordered_map) and compares every answer of the file's structure
// for the queries of one thread stream. Needs memory for the whole data set: for tests and
// small files. Checks queries [0, queries) of the run with this seed.
VerifyResult verify_against_std(const StructureFile& file, uint64_t queries, uint64_t seed);

}  // namespace microbench
