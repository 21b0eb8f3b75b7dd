// pagecache_priority.cpp - the keeper's share of the CPU.
//
// The keeper does for the mapped files what the kernel's reclaim does under a memory limit,
// but it cannot make a faulting thread wait: where many busy threads share few cores, it keeps
// the buffer's bound only if it wins the CPU when it has work. So it runs at the highest
// priority it may take: nice -20 with CAP_SYS_NICE (as root), else what RLIMIT_NICE allows,
// else unchanged. Its work follows the faults, so it takes CPU only as the program misses.
//
// Nice -20 weighs as much as 87 busy threads at nice 0: beside 128 busy threads on its CPU it
// gets 40% of it, and falls behind the faults. So it measures its own wait in windows of 100 ms
// (/proc/thread-self/schedstat: time spent waiting on a run queue), and after a starved window
// runs real-time (SCHED_FIFO, the lowest priority) for a spell, then at nice -20 again for a
// window that measures whether it is still starved. Not real-time all the time: a keeper that
// always wins the CPU writes each leaving page itself at once, where a keeper a little behind
// leaves some to the kernel's writeback in file order (measured: read-modify-writes 20% slower
// at equal memory). Without the privilege (CAP_SYS_NICE or RLIMIT_RTPRIO) it stays at nice -20.
#include "pagecache_priority.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "log.hpp"

namespace dimmap::detail::pagecache {
namespace {

constexpr auto kWindow = std::chrono::milliseconds(100);  // a measure of starvation
// Real-time after a starved window: a second, twice as long each time the first window after
// it is starved again (a starved keeper measures late: that window lasts as long as it waits),
// up to 16 s.
constexpr std::chrono::milliseconds kFirstRealTime{1000}, kLongestRealTime{16000};

}  // namespace

void KeeperPriority::start() {
  constexpr int kHighest = -20;
  const id_t self = static_cast<id_t>(gettid());
  if (setpriority(PRIO_PROCESS, self, kHighest) == 0) return;
  struct rlimit lim;
  if (getrlimit(RLIMIT_NICE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur > 20) {
    const int allowed = 20 - static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 40));
    if (setpriority(PRIO_PROCESS, self, allowed) == 0) return;
  }
  log(LogLevel::debug, "pagecache keeper: runs at the program's priority (%s)", std::strerror(errno));
}

bool KeeperPriority::read_schedstat(uint64_t* run_ns, uint64_t* wait_ns) const {
  FILE* f = std::fopen("/proc/thread-self/schedstat", "re");
  if (!f) return false;
  unsigned long long run = 0, wait = 0;
  const bool ok = std::fscanf(f, "%llu %llu", &run, &wait) == 2;
  std::fclose(f);
  *run_ns = run;
  *wait_ns = wait;
  return ok;
}

void KeeperPriority::set_real_time(bool on) {
  sched_param param{};
  param.sched_priority = on ? 1 : 0;
  if (const int rc = pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &param); rc != 0) {
    if (on) {
      can_real_time_ = false;
      log(LogLevel::debug, "pagecache keeper: starved of the CPU, and may not run real-time (%s)", std::strerror(rc));
    }
    return;
  }
  real_time_ = on;
  if (!on) start();  // SCHED_OTHER comes back at nice 0
  log(LogLevel::debug, "pagecache keeper: %s", on ? "starved of the CPU: real-time for a while" : "back at nice -20");
}

void KeeperPriority::tick(std::chrono::steady_clock::time_point now) {
  if (!can_real_time_) return;
  if (real_time_) {
    if (now < real_time_until_) return;
    set_real_time(false);
    window_start_ = {};  // a new window starts
    just_back_ = true;
  }
  if (now - window_start_ < kWindow) return;
  uint64_t run = 0, wait = 0;
  if (!read_schedstat(&run, &wait)) {
    can_real_time_ = false;
    return;
  }
  const bool measured = window_start_ != std::chrono::steady_clock::time_point{};
  const uint64_t ran = run - std::min(run, window_run_ns_), waited = wait - std::min(wait, window_wait_ns_);
  const bool starving = measured && starved(ran, waited);
  window_start_ = now;
  window_run_ns_ = run;
  window_wait_ns_ = wait;
  if (measured) {
    real_time_for_ = starving && just_back_ ? std::min(2 * real_time_for_, kLongestRealTime) : kFirstRealTime;
    just_back_ = false;
  }
  if (starving) {
    set_real_time(true);
    real_time_until_ = now + real_time_for_;
  }
}

}  // namespace dimmap::detail::pagecache
