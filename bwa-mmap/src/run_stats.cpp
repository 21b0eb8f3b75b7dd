// run_stats.cpp - wall and CPU clocks, peak RSS, DI-MMAP counters in words.
#include <bwammap/run_stats.hpp>
#include <dimmap/placement.hpp>
#include <sys/resource.h>

namespace bwammap {
namespace {

double cpu_now() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

RunClock::RunClock() : start_(std::chrono::steady_clock::now()), cpu_start_(cpu_now()) {}

double RunClock::wall_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double RunClock::cpu_seconds() const { return cpu_now() - cpu_start_; }

uint64_t peak_rss_bytes() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

}  // namespace bwammap
