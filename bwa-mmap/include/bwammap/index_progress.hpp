// index_progress.hpp - progress lines while libbwa's bwa_idx_build() runs.
//
// bwa_idx_build() prints a line as each step starts and one with its time as it ends, and
// nothing in between: on a slow placement the BWT construction and the suffix-array sampling
// run for minutes in silence. IndexProgress runs a thread that prints the current step every
// few seconds, with the percent done where it can be observed (SA sampling) and the time
// spent. The steps are known from libbwa calls wrapped at link time (src/index_progress.cpp).
#pragma once

#include <memory>

namespace bwammap {

class IndexProgress {
 public:
  // A line every `interval_seconds` while a step runs; 0 or less: no thread, no lines.
  explicit IndexProgress(double interval_seconds);
  ~IndexProgress();
  IndexProgress(const IndexProgress&) = delete;
  IndexProgress& operator=(const IndexProgress&) = delete;

  struct Ticker;

 private:
  std::unique_ptr<Ticker> ticker_;
};

// The interval from BWA_MMAP_PROGRESS_SECONDS (seconds, fractions allowed; 0 turns the lines
// off), else 10. Throws dimmap::Error on a value that is not a number.
double progress_interval_from_env();

}  // namespace bwammap
