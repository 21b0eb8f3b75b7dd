// pagecache_priority.hpp - how the pagecache engine's keeper gets the CPU (why: the .cpp).
#pragma once

#include <chrono>
#include <cstdint>

namespace dimmap::detail::pagecache {

// Whether a thread that ran `run_ns` and waited `wait_ns` on a run queue was starved of the
// CPU: it waited for more than 30% of the time it wanted the CPU. (Measured on 2 cores: a
// keeper beside 64 threads of reads, mostly-hit or read-modify-write loads waits 10-20% of it
// and keeps the buffer; beside 256 busy threads, 40-72%, and the page cache grows to four
// times the buffer.)
inline bool starved(uint64_t run_ns, uint64_t wait_ns) { return wait_ns * 10 > (run_ns + wait_ns) * 3; }

// The keeper's scheduling: nice -20 (or the highest priority it may take), and real-time
// (SCHED_FIFO) for a spell of a second or more after a window of its own showed it starved.
// Used by the keeper thread alone: start() once, tick() after every round.
class KeeperPriority {
 public:
  void start();  // nice -20, or the highest priority it may take
  void tick(std::chrono::steady_clock::time_point now);
  bool real_time() const { return real_time_; }

 private:
  bool read_schedstat(uint64_t* run_ns, uint64_t* wait_ns) const;
  void set_real_time(bool on);

  bool can_real_time_ = true;  // false once the kernel refused it
  bool real_time_ = false;
  std::chrono::steady_clock::time_point window_start_{}, real_time_until_{};
  uint64_t window_run_ns_ = 0, window_wait_ns_ = 0;
  std::chrono::milliseconds real_time_for_{1000};  // the next real-time spell
  bool just_back_ = false;  // the window being measured is the first after a real-time spell
};

}  // namespace dimmap::detail::pagecache
