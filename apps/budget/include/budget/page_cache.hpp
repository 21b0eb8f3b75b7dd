// page_cache.hpp - starting memory-mapped runs cold.
//
// A memory cgroup only charges page-cache pages to the cgroup that first read them, so a file
// already cached by an earlier run would be served for free to a budgeted mmap run. Runs
// that compare placements on equal budgets therefore start with the file out of the cache.
#pragma once

#include <cstdint>
#include <string>

namespace budget {

// sync(), then drops the whole page cache (/proc/sys/vm/drop_caches = 1; needs root).
// Affects every process on the machine: prefer evict_file on a shared machine.
void drop_page_cache();

// Writes back the file's dirty pages, then drops its pages from the page cache (pages that
// another process keeps mapped or locked stay). Throws dimmap::Error naming the file.
void evict_file(const std::string& path);

// Share of the file's pages that are in the page cache now, in [0, 1] (mincore).
double resident_fraction(const std::string& path);

}  // namespace budget
