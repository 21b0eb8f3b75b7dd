// run_summary.hpp - kmer classify's and kmer lookup's --json summaries (dimmap/json_summary.hpp):
// one JSON object per command with its numbers and, on DI-MMAP, the buffer's counters.
#pragma once

#include <kmer/lookup_bench.hpp>

#include <dimmap/dimmap.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kmer {

struct ClassifySummary {
  uint64_t reads = 0, classified = 0, bases = 0;
  double seconds = 0;       // classification: reads in, results out (the slowest rank)
  double load_seconds = 0;  // opening the DB
  double wall_seconds = 0;  // the whole command
  int ranks = 1;
  std::string placement;
  std::optional<struct dimmap_stats> dimmap_stats;
};
// rate: reads/s of classification, as the text summary prints it.
std::string classify_summary_json(const ClassifySummary& summary);

struct LookupRun {
  unsigned threads = 0, run = 0;
  LookupResult result;
  std::optional<struct dimmap_stats> dimmap_stats;
};
struct LookupSummary {
  std::string index, placement;
  uint64_t db_bytes = 0;
  double wall_seconds = 0;
  std::vector<LookupRun> runs;  // in the order run
};
// rate: lookups/s over all runs (all lookups over all their seconds); "runs" has each run's
// numbers, "dimmap_stats" the last run's buffer counters.
std::string lookup_summary_json(const LookupSummary& summary);

}  // namespace kmer
