// The pagecache keeper's scheduling: starved of its CPU, it runs real-time for a while.
#include <dimmap/testing/pin_to_cpu.hpp>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <time.h>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <thread>
#include <vector>

#include "pagecache_priority.hpp"

namespace {

using dimmap::testing::pin_to_cpu;

using dimmap::detail::pagecache::KeeperPriority;
using dimmap::detail::pagecache::starved;
using Clock = std::chrono::steady_clock;

TEST(Starved, WaitingMoreThanThirtyPercentOfTheTimeItWantedTheCpu) {
  EXPECT_FALSE(starved(0, 0));
  EXPECT_FALSE(starved(630, 120));  // beside 64 threads of a mostly-hit load: 16%
  EXPECT_FALSE(starved(70, 30));
  EXPECT_TRUE(starved(69, 31));
  EXPECT_TRUE(starved(289, 737));  // beside 256 busy threads on 2 cores: 72%
}

// Spins for `ms` milliseconds of this thread's own CPU time (more of the clock's when it waits).
void work(int ms) {
  auto cpu_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  };
  const int64_t until = cpu_ns() + int64_t{ms} * 1000000;
  while (cpu_ns() < until) {
  }
}

// A thread at nice 0 that shares its CPU with six busy ones waits most of the time it wants
// the CPU; ticking as a keeper would, it must go real-time, and then win the CPU.
TEST(KeeperPriority, GoesRealTimeWhenStarvedOfItsCpuAndThenGetsIt) {
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  pin_to_cpu(cpu);
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < 6; ++i)
    busy.emplace_back([&] {
      pin_to_cpu(cpu);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  KeeperPriority priority;  // not start()ed: it competes at nice 0, as the busy threads do
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!priority.real_time() && Clock::now() < deadline) {
    work(1);
    priority.tick(Clock::now());
  }
  // Real-time now: 20 ms of work take about 20 ms of the clock (at nice 0 beside six busy
  // threads, 140).
  const auto t0 = Clock::now();
  if (priority.real_time()) work(20);
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  const bool went = priority.real_time();
  sched_param normal{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
  stop = true;
  for (auto& t : busy) t.join();
  if (!went) {
    sched_param lowest{};
    lowest.sched_priority = 1;
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &lowest) != 0)
      GTEST_SKIP() << "this process may not run real-time threads (no CAP_SYS_NICE or RLIMIT_RTPRIO)";
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
  }
  ASSERT_TRUE(went) << "it waited for its CPU and did not go real-time";
  EXPECT_LT(elapsed_ms, 80) << "real-time, it still waited for its CPU";
}

}  // namespace
