// soak.hpp - the soak test: many threads, a buffer much smaller than the file, minutes.
//
// Threads read and write random pages of a pattern file (pattern.hpp) through one dimmap
// mapping. Page p belongs to thread p % threads: only its owner writes it (a whole new
// version), so the owner knows what every one of its pages must hold; any thread may read any
// page and checks the words' tags. Half of the operations go to a hot range half the size of
// the buffer, the rest anywhere, so hits, recoveries, misses and writebacks all happen.
// A monitor samples the runtime's counters and the process's memory, and declares a deadlock
// when no operation completes for stall_seconds. At the end the file is checked page by page.
#pragma once

#include <dimmap/dimmap.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dimmap::reliability {

struct SoakConfig {
  std::string dir = "/var/tmp";  // where the scratch file goes (must support O_DIRECT for realism)
  uint64_t file_bytes = 256ull << 20;
  uint64_t buffer_ratio = 64;     // buffer = file / ratio
  unsigned threads = 256;
  double seconds = 180;
  double write_fraction = 0.25;
  double sample_seconds = 10;
  double stall_seconds = 60;      // no completed operation for this long = deadlock
  uint64_t seed = 1;
  bool progress = true;           // one line per sample on stderr
};

struct SoakSample {
  double t = 0;
  uint64_t ops = 0;
  struct dimmap_stats stats = {};
  uint64_t rss_anon = 0, rss_shmem = 0, buffer_bytes = 0;
};

struct SoakResult {
  uint64_t ops = 0, reads = 0, writes = 0;
  uint64_t read_mismatches = 0;  // wrong tag, or an owner's page not at its last version
  uint64_t wrong_pages_after = 0;
  std::string first_mismatch;
  std::vector<SoakSample> samples;
  struct dimmap_stats final_stats = {};
  double seconds = 0;
  uint64_t max_pending_faults = 0;  // faults waiting for a free page, seen in samples
  uint64_t max_buffer_bytes = 0;
  int64_t rss_anon_growth = 0;      // last third's peak minus the first third's (after warm-up)
  std::vector<std::string> failures;  // empty = pass
};

// Runs the soak. Throws dimmap::Error on bad configuration or if the file cannot be made.
// A deadlock is reported (thread stacks on stderr) and ends the process with status 3.
SoakResult run_soak(const SoakConfig& config);

// The result as a few lines of text (numbers, then PASS or the failures).
std::string to_text(const SoakConfig& config, const SoakResult& result);

}  // namespace dimmap::reliability
