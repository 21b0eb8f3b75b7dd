// The TLB shootdown count the measuring tools read: an unmap while another CPU runs a thread
// of this process must show up in it.
#include <dimmap/support/tlb_shootdowns.hpp>
#include <dimmap/testing/pin_to_cpu.hpp>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

namespace {

using dimmap::testing::pin_to_cpu;

TEST(TlbShootdowns, CountsTheFlushesOfUnmapsWhileAnotherCpuRunsThisProcess) {
  const auto before = dimmap::support::tlb_shootdowns();
  if (!before) GTEST_SKIP() << "/proc/interrupts has no TLB line here (not x86)";
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: no other CPU to flush";
  cpu_set_t allowed;
  pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed);
  pin_to_cpu(0);
  std::atomic<bool> started{false}, stop{false};
  std::thread spinner([&] {
    pin_to_cpu(1);
    started = true;
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (!started) std::this_thread::yield();
  // A flush reaches the other CPU only while it runs the spinner (a busy machine may run
  // something else there for a while): unmap until one is counted, for up to 5 s.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::optional<uint64_t> after = before;
  while (after && *after == *before && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 100; ++i) {
      auto* p = static_cast<volatile char*>(
          mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      ASSERT_NE(p, MAP_FAILED);
      p[0] = 1;
      munmap(const_cast<char*>(p), page);
    }
    after = dimmap::support::tlb_shootdowns();
  }
  stop = true;
  spinner.join();
  pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);  // the other tests of this binary
  ASSERT_TRUE(after.has_value());
  EXPECT_GT(*after, *before) << "unmaps of touched pages while another CPU ran this process for 5 s: no flush counted";
}

}  // namespace
