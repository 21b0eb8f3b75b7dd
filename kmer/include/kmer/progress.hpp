// progress.hpp - a progress bar on stderr for long work.
//
// On a terminal it redraws one line; otherwise (logs, CI) it prints a line every 10%.
// Thread-safe: add() may be called from OpenMP threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace kmer {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled);
  ~Progress();  // finishes the line
  void add(uint64_t amount);
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
  void draw(uint64_t done, bool final);
};

}  // namespace kmer
