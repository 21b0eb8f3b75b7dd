// random_access.hpp - the memory-heavy kernel of the HPMMAP experiment: allocate a table
// with malloc, initialise it, then apply random XOR updates (GUPS-style) from N threads.
//
// The table comes from plain malloc, so the same binary measures glibc's heap (demand
// paging), glibc with transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) and
// the HPMMAP arena (under dimmap-run --placement=hpmmap), unmodified.
#pragma once

#include <cstdint>

namespace microbench {

struct RandomAccessOptions {
  uint64_t bytes = 256ull << 20;  // table size
  uint64_t updates = 1 << 24;     // in total, split over the threads
  unsigned threads = 1;
  uint64_t seed = 1;
};

struct RandomAccessResult {
  double alloc_seconds = 0;   // malloc
  double init_seconds = 0;    // first touch of every page
  double update_seconds = 0;  // the random updates
  double total_seconds = 0;
  long minor_faults_init = 0, minor_faults_update = 0;  // this process, per phase
  long major_faults = 0;
  uint64_t huge_kib = 0;      // of the table: AnonHugePages or hugetlb, from /proc/self/smaps
  bool verified = false;      // the table's XOR matches the updates applied
};

// Throws dimmap::Error if the table cannot be allocated.
RandomAccessResult run_random_access(const RandomAccessOptions& opt);

}  // namespace microbench
