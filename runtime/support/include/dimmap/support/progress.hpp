// progress.hpp - one progress reporter on stderr for every long step of the tools.
//
// On a terminal it redraws one line ("label [######....]  42.0%   12.3s  ETA 17s") at most
// five times a second. Otherwise (logs, CI) it prints sparse lines: one when the run crosses
// each tenth of the total, or when a minute passed without one, so a log grows by a dozen lines
// however long the step. Runs shorter than a second print nothing in that mode. Thread-safe:
// advance() and set() may be called from many threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace dimmap::support {

class ProgressReporter {
 public:
  // Where the lines go and how: by default stderr, as a terminal if isatty(stderr) says so.
  struct Output {
    FILE* stream = stderr;
    enum class Mode { detect, terminal, log } mode = Mode::detect;
  };
  ProgressReporter(std::string label, uint64_t total, bool enabled = true);
  ProgressReporter(std::string label, uint64_t total, bool enabled, Output output);
  ~ProgressReporter();  // finish()
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // `amount` more units done.
  void advance(uint64_t amount);
  // `done` units done in all (for callers that count themselves; never moves backwards).
  void set(uint64_t done);
  // Ends the line (terminal) or prints the closing line (log, if it printed anything).
  void finish();
  uint64_t done() const { return done_.load(std::memory_order_relaxed); }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  uint64_t total_;
  bool enabled_, terminal_, finished_ = false;
  FILE* out_;
  std::atomic<uint64_t> done_{0};
  std::mutex mu_;
  Clock::time_point start_, last_line_;
  int last_tenth_ = 0;  // log mode: tenths of the total already reported
  bool printed_ = false;
  void maybe_draw(uint64_t done);
  void draw(uint64_t done, bool final);
};

}  // namespace dimmap::support
