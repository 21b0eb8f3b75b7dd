// run_stats.hpp - timing and memory figures for the progress lines on stderr.
#pragma once

#include <dimmap/dimmap.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace bwammap {

class RunClock {
 public:
  RunClock();
  double wall_seconds() const;
  double cpu_seconds() const;  // user + system of this process since construction

 private:
  std::chrono::steady_clock::time_point start_;
  double cpu_start_;
};

// Peak resident set size of this process so far, in bytes (getrusage ru_maxrss).
uint64_t peak_rss_bytes();

}  // namespace bwammap
