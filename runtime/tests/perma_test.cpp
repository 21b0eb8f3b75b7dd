// PerMA latency model: the formula, spec parsing, and the delay it puts on engine reads.
#include <dimmap/dimmap.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "sanitizers.hpp"

namespace {

uint64_t latency(const char* spec, unsigned n, uint64_t bytes = 4096) {
  uint64_t ns = 0;
  EXPECT_EQ(dimmap_perma_latency_ns(spec, n, bytes, &ns), 0) << dimmap_last_error();
  return ns;
}

TEST(PermaModel, FollowsEquationOneOnTableOnePresets) {
  // lcurr: D = 100 us, P = 500 ps/B at E = 50 %, C = 420 ps/B: (500/0.5 + 420) * 4096 B = 5816 ns per request.
  EXPECT_EQ(latency("lcurr", 1), 100000u + 1420u * 4096u / 1000u);
  EXPECT_EQ(latency("lcurr", 4), 100000u + 4u * 1420u * 4096u / 1000u);
  EXPECT_EQ(latency("lnxt1", 1), 100000u + (500u + 420u) * 4096u / 1000u);
  EXPECT_EQ(latency("lnxt2", 1), 50000u + (250u + 210u) * 4096u / 1000u);
  EXPECT_EQ(latency("lnxt3", 1), 25000u + (124u + 105u) * 4096u / 1000u);
  EXPECT_EQ(latency("sim-opt", 64), 0u);
  EXPECT_EQ(latency("vm-disk", 64), 80600u + 64u * 1680u * 4096u / 1000u);  // E = 100%, C = 0
  // Each generation is faster than the one before.
  EXPECT_GT(latency("lcurr", 16), latency("lnxt1", 16));
  EXPECT_GT(latency("lnxt1", 16), latency("lnxt2", 16));
  EXPECT_GT(latency("lnxt2", 16), latency("lnxt3", 16));
}

TEST(PermaModel, ExplicitValues) {
  // D = 10 us, R = 2 us, P = 100 ps/B, E = 0.25, C = 50 ps/B.
  EXPECT_EQ(latency("10,2,100,0.25,50", 2), 12000u + 2u * 450u * 4096u / 1000u);
  EXPECT_EQ(latency("5,0,1000,0,0", 3), 5000u) << "E = 0 means unlimited bus bandwidth";
}

TEST(PermaModel, RejectsBadSpecsWithAReason) {
  uint64_t ns;
  for (const char* bad : {"lfuture", "1,2,3", "1,2,3,4,5,6", "-1,0,0,0,0", "1,0,0,1.5,0", "x,0,0,0,0",
                          "2000000,0,0,0.5,0", ""}) {
    EXPECT_EQ(dimmap_perma_latency_ns(bad, 1, 4096, &ns), -EINVAL) << bad;
    EXPECT_STRNE(dimmap_last_error(), "") << bad;
  }
}

TEST(PermaModel, BadEnvironmentFailsConfiguration) {
  setenv("DIMMAP_PERMA", "warp-drive", 1);
  dimmap_config cfg;
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("warp-drive"), std::string::npos);
  unsetenv("DIMMAP_PERMA");
}

// A RAM-backed file read through the engine: the model, not the medium, sets the latency.
double seconds_per_miss(const char* perma, int fd, size_t pages, bool in_thread = false) {
  dimmap_config cfg;
  EXPECT_EQ(dimmap_config_init(&cfg), 0);
  cfg.in_thread_faults = in_thread ? 1 : 0;
  cfg.buffer_bytes = 64 * 4096;
  cfg.readahead_pages = 0;  // every page a miss
  std::snprintf(cfg.perma, sizeof cfg.perma, "%s", perma);
  dimmap_instance* inst = nullptr;
  EXPECT_EQ(dimmap_instance_create(&cfg, &inst), 0) << dimmap_last_error();
  auto* m = static_cast<volatile char*>(dimmap_instance_mmap(inst, nullptr, pages * 4096, PROT_READ, MAP_SHARED, fd, 0));
  EXPECT_NE(m, MAP_FAILED);
  auto t0 = std::chrono::steady_clock::now();
  long sum = 0;
  for (size_t p = 0; p < pages; ++p) sum += m[p * 4096];  // one thread: one request in flight
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(sum, 0);
  dimmap_stats_t st;
  dimmap_instance_stats(inst, &st);
  EXPECT_EQ(st.misses, pages);
  dimmap_munmap(const_cast<char*>(m), pages * 4096);
  dimmap_instance_destroy(inst);
  return s / pages;
}

class PermaEngine : public ::testing::TestWithParam<bool> {};

// With service threads the model holds completions in their I/O queue; with in-thread faults
// the faulting thread waits out the latency itself. Both must add it.
TEST_P(PermaEngine, ReadsTakeAtLeastTheModelledLatency) {
  const bool in_thread = GetParam();
  if (in_thread && kThreadSanitizer) GTEST_SKIP() << kInThreadUnderTsan;
  char path[] = "/dev/shm/dimmap-perma-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  const size_t pages = 200;
  ASSERT_EQ(ftruncate(fd, pages * 4096), 0);
  const double lcurr = seconds_per_miss("lcurr", fd, pages, in_thread);
  const double simopt = seconds_per_miss("sim-opt", fd, pages, in_thread);
  // A model slower than any page read here (2 ms) shows that the delay is added at all.
  const double slow = seconds_per_miss("2000,0,0,0,0", fd, 20, in_thread);
  // Lower bounds only (the model only ever adds delay), so a busy machine cannot break them;
  // which model is faster is a property of the models, not of this run's timings.
  EXPECT_GE(lcurr, latency("lcurr", 1) * 1e-9) << "lcurr " << lcurr * 1e6 << " us per miss";
  EXPECT_GE(simopt, latency("sim-opt", 1) * 1e-9) << "sim-opt " << simopt * 1e6 << " us per miss";
  EXPECT_GE(slow, 2e-3) << "2 ms model: " << slow * 1e6 << " us per miss";
  EXPECT_LT(latency("sim-opt", 1), latency("lcurr", 1));
  std::printf("%s, per miss: lcurr %.1f us (model %.1f us), sim-opt %.1f us, 2 ms model %.1f us\n",
              in_thread ? "in-thread" : "service threads", lcurr * 1e6, latency("lcurr", 1) / 1000.0, simopt * 1e6,
              slow * 1e6);
  close(fd);
}

INSTANTIATE_TEST_SUITE_P(FaultService, PermaEngine, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "InThread" : "ServiceThreads");
                         });

}  // namespace
