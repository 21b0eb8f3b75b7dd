// progress.hpp - a progress line on stderr for long runs ("label  42%  1.2G/2.9G  ETA 12s").
// On a terminal it redraws one line; otherwise it prints a line every ~10 s. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace graph {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled = true);
  ~Progress();
  void advance(uint64_t amount);
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  bool enabled_, tty_, finished_ = false;
  std::atomic<uint64_t> done_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
  void draw(uint64_t done, bool final);
};

}  // namespace graph
