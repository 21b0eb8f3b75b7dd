// The userfaultfd engine's own memory beside its buffer is fixed once it starts: a memory
// budget measured on a calm, short run must hold for a busy, long one. (Benchmarks size a
// memory cgroup from a 4 s calibration run; writeback staging allocated per write grew the
// process by two malloc arenas of ~1 MiB under a busy write load only, and a run beside a
// CPU-heavy test was killed by the cgroup's OOM killer.)
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_files.hpp"

namespace dimmap::test {
namespace {

// Private anonymous memory of this process, KiB (the buffer's memfd is shared, not counted).
// From smaps_rollup, which walks the page tables: /proc/self/status's RssAnon (what the soak's
// memory_probe reads) is a per-CPU counter that may be off by more than this test's margin.
long anonymous_kib() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string key;
  long value = -1;
  while (in >> key) {
    if (key == "Anonymous:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

TEST(EngineMemory, ABusyWriteLoadAddsNothingToTheMemoryTheEngineHadOnceStarted) {
  const size_t pages = 16384;  // 64 MiB file, 16 MiB buffer
  const int threads = 8;
  TempFile f(pages);
  TestInstance in(pages * kPage / 4);
  uint64_t* m = in.map(f, pages);
  // The workers start and touch a page each before the first measure: their stacks and the
  // engine's first fault service count in it.
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(7 + t);
      m[(rng() % pages) * 512] += 1;
      ready++;
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 10000; ++i) m[(rng() % pages) * 512 + rng() % 512] += 1;  // uniform RMW
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const long before = anonymous_kib();
  go = true;
  for (auto& th : pool) th.join();
  const long after = anonymous_kib();
  ASSERT_GT(before, 0) << "no Anonymous line in /proc/self/smaps_rollup";
  const dimmap_stats_t s = in.stats();
  EXPECT_GT(s.writebacks, 1000u) << "the load must write pages back for the check to mean anything";
  EXPECT_LE(after - before, 256) << "KiB of private memory added by " << s.writebacks << " writebacks";
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
}

}  // namespace
}  // namespace dimmap::test
