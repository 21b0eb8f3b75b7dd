// Integration tests of LRIOT runs in every mode on a real file: the file is the reference.
// After each run the verifier re-reads the whole file: every page must be intact and the write
// counters must have grown by exactly the writes the run performed.
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>
#include <lriot/lriot.hpp>
#include <lriot/pattern.hpp>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <dimmap/testing/temp_dir.hpp>

namespace lriot {

// Test names and messages say "dimmap", not "4-byte object <03-00 00-00>".
void PrintTo(Mode mode, std::ostream* os) { *os << to_string(mode); }

namespace {

using dimmap::testing::TempDir;


constexpr uint64_t kPages = 4096;  // a 16 MiB file

class LriotRun : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { create_pattern_file(path_, kPages * kPageSize); }

  Config config(Pattern pattern, unsigned procs, unsigned threads, uint64_t ops, double write_fraction) const {
    Config c;
    c.file = path_;
    c.mode = GetParam();
    c.procs = procs;
    c.threads = threads;
    c.sequence.pattern = pattern;
    c.sequence.write_fraction = write_fraction;
    c.ops = ops;
    c.seconds = 0;
    c.buffer_bytes = kPages * kPageSize / 16;  // dimmap: the buffer holds 1/16 of the file
    c.verify = true;
    return c;
  }

  // Writes the run must have made: its processes replay sequence positions [0, share).
  static uint64_t expected_writes(const Config& c) {
    SequenceParams params = c.sequence;
    params.pages = kPages;
    params.procs = c.procs;
    uint64_t writes = 0;
    for (unsigned p = 0; p < c.procs; ++p) {
      PageSequence seq(params, p);
      const uint64_t share = c.ops / c.procs + (p < c.ops % c.procs ? 1 : 0);
      for (uint64_t k = 0; k < share; ++k) writes += seq(k).write;
    }
    return writes;
  }

  static void expect_consistent_dimmap_stats(const Result& r) {
    if (r.config.mode != Mode::dimmap) return;
    ASSERT_TRUE(r.has_dimmap_stats);
    const struct dimmap_stats& s = r.dimmap;
    // Every fault is a miss, a hit or a write fault; the user-space engine counts recoveries
    // without a fault (the kernel maps a demoted page again), the kernel module with one.
    EXPECT_GE(s.faults, s.misses + s.hits + s.write_faults);
    EXPECT_LE(s.faults, s.misses + s.hits + s.write_faults + s.recoveries);
    EXPECT_EQ(s.read_errors, 0u);
    EXPECT_EQ(s.write_errors, 0u);
    // The pagecache engine counts the dirty pages of the mapped file in the page cache, which
    // the processes share: one that is done may count the writes of one still running (the
    // data on storage is checked by --verify).
    if (r.config.procs == 1) {
      EXPECT_EQ(s.dirty_pages, 0u) << "the final msync wrote everything back";
    }
  }

  TempDir dir_;
  std::string path_ = dir_.file("lriot.dat");
};

TEST_P(LriotRun, UniformReadsSeeIntactPagesAndChangeNothing) {
  const Config c = config(Pattern::uniform, 2, 4, kPages, 0.0);
  const Result r = run(c);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_EQ(r.ops, kPages);
  EXPECT_EQ(r.reads, kPages);
  EXPECT_EQ(r.writes, 0u);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.counter_delta, 0u);
  EXPECT_GT(r.iops(), 0.0);
  expect_consistent_dimmap_stats(r);
  if (c.mode == Mode::dimmap) {
    // Every page of the file was read once and the buffer holds 1/16 of it: each must have
    // come from storage, whatever the engine reads ahead.
    EXPECT_GE(r.dimmap.bytes_read, kPages * kPageSize);
    EXPECT_GT(r.dimmap.evictions, 0u);
  }
}

TEST_P(LriotRun, PartitionedReadModifyWritesAllReachTheFile) {
  const Config c = config(Pattern::partitioned, 2, 4, 20000, 0.3);
  const Result r = run(c);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_EQ(r.ops, 20000u);
  EXPECT_EQ(r.writes, expected_writes(c));
  EXPECT_EQ(r.counter_delta, r.writes) << "every increment is in the file after the final sync";
  EXPECT_EQ(r.bad_pages_after, 0u);
  expect_consistent_dimmap_stats(r);
  if (c.mode == Mode::dimmap) {
    EXPECT_GT(r.dimmap.writebacks, 0u);
  }
}

TEST_P(LriotRun, ManyProcessesWritingEveryPageLoseNothing) {
  const Config c = config(Pattern::uniform, 3, 3, 6000, 1.0);
  const Result r = run(c);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_EQ(r.writes, 6000u);
  EXPECT_EQ(r.counter_delta, 6000u);
  expect_consistent_dimmap_stats(r);
}

TEST_P(LriotRun, StopsAfterTheGivenSeconds) {
  Config c = config(Pattern::uniform, 1, 2, 0, 0.0);
  c.seconds = 0.3;
  c.verify = false;
  const Result r = run(c);
  EXPECT_GT(r.ops, 0u);
  EXPECT_GE(r.run_seconds, 0.3);
  EXPECT_LT(r.run_seconds, 3.0);
  // Two threads ran for 0.3 s: the machine was busy or waited for I/O meanwhile, and in
  // seconds, not in clock ticks (no more CPU time than the CPUs had).
  ASSERT_TRUE(r.has_host);
  EXPECT_GT(r.host.busy_seconds + r.host.iowait_seconds, 0.05);
  EXPECT_LE(r.host.busy_seconds + r.host.iowait_seconds,
            (r.seconds + 0.1) * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)));
}

TEST_P(LriotRun, AWarmUpIsRunButNotCounted) {
  Config c = config(Pattern::uniform, 2, 2, 0, 0.5);
  c.warmup_seconds = 1.0;
  c.seconds = 0.3;
  const Result r = run(c);
  EXPECT_TRUE(r.ok()) << "the file must hold exactly the warm-up's and the measured part's writes";
  EXPECT_GT(r.warmup_reads + r.warmup_writes, 0u);
  EXPECT_GT(r.ops, 0u);
  EXPECT_GE(r.run_seconds, 0.3);
  EXPECT_LT(r.run_seconds, 1.3) << "the warm-up's second counted as measured time";
  EXPECT_EQ(r.counter_delta, r.writes + r.warmup_writes);
  expect_consistent_dimmap_stats(r);
}

INSTANTIATE_TEST_SUITE_P(Modes, LriotRun, ::testing::Values(Mode::direct, Mode::stdio, Mode::mmap, Mode::dimmap),
                         [](const ::testing::TestParamInfo<Mode>& info) { return std::string(to_string(info.param)); });

class LriotBadInput : public ::testing::Test {
 protected:
  Config base(const std::string& path) const {
    Config c;
    c.file = path;
    c.ops = 100;
    c.seconds = 0;
    c.threads = 2;
    return c;
  }
  static void expect_error(const Config& c, const std::string& words) {
    try {
      run(c);
      ADD_FAILURE() << "expected an error mentioning '" << words << "'";
    } catch (const dimmap::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  TempDir dir_;
};

TEST_F(LriotBadInput, MissingAndTooSmallFiles) {
  expect_error(base(dir_.file("nope.dat")), "cannot open");
  const std::string small = dir_.file("small.dat");
  std::ofstream(small) << "less than a page";
  expect_error(base(small), "smaller than one 4 KiB page");
}

TEST_F(LriotBadInput, BuffersTooSmallAndBadNumbers) {
  const std::string path = dir_.file("f.dat");
  create_pattern_file(path, 64 * kPageSize);
  Config c = base(path);
  c.mode = Mode::dimmap;
  c.buffer_bytes = 8 * kPageSize;
  expect_error(c, "--buffer");
  c = base(path);
  c.procs = 0;
  expect_error(c, "--procs");
  c = base(path);
  c.sequence.write_fraction = -0.1;
  expect_error(c, "--write-fraction");
  c = base(path);
  c.ops = 0;
  expect_error(c, "--ops or --seconds");
  c = base(path);
  c.procs = 8;
  c.sequence.pattern = Pattern::partitioned;  // 6 hot pages for 8 processes
  expect_error(c, "bigger file");
  EXPECT_THROW(parse_mode("fast"), dimmap::Error);
  EXPECT_THROW(parse_pattern("zipf"), dimmap::Error);
}

// A buffer bigger than the file: a warm-up that touches every page leaves nothing to miss, and
// the measured counters start after it. On the userfaultfd engine, whose buffer is memory of its
// own: the pagecache engine's pages are page cache, which the kernel reclaims when the cgroup
// the suite runs in is short of memory (a page it takes before the keeper has seen it mapped
// counts as a miss when it comes back), so a busy machine would make misses after the warm-up.
TEST(LriotWarmUp, DimmapCountersStartAfterIt) {
  setenv("DIMMAP_ENGINE", "uffd", 1);
  struct Unset {
    ~Unset() { unsetenv("DIMMAP_ENGINE"); }
  } unset;
  TempDir dir;
  const std::string path = dir.file("small.dat");
  create_pattern_file(path, 512 * kPageSize);
  Config c;
  c.file = path;
  c.mode = Mode::dimmap;
  c.threads = 2;
  c.buffer_bytes = 2048 * kPageSize;
  c.seconds = 0.3;
  c.sequence.pattern = Pattern::uniform;
  const Result cold = run(c);
  ASSERT_TRUE(cold.has_dimmap_stats);
  EXPECT_GT(cold.dimmap.misses, 0u) << "a cold run must miss";
  // A uniform sequence walks a permutation of the pages: its first 512 operations touch every
  // page once, and twice that leaves none of them still under way at the warm-up's end. A
  // sanitizer build beside a busy suite has done as few as 64 in a second: it gets longer.
  Result warm;
  for (const double seconds : {1.0, 4.0, 16.0}) {
    c.warmup_seconds = seconds;
    warm = run(c);
    if (warm.warmup_reads >= 2 * 512u) break;
  }
  ASSERT_TRUE(warm.has_dimmap_stats);
  ASSERT_GE(warm.warmup_reads, 2 * 512u) << "too few warm-up operations to have touched every page";
  EXPECT_EQ(warm.dimmap.misses, 0u) << "the warm-up's misses were counted";
  EXPECT_EQ(warm.dimmap.buffer_pages, 2048u) << "gauges are the buffer's, not differences";
}

TEST_F(LriotBadInput, WarmUpNeedsARunBoundedBySeconds) {
  const std::string path = dir_.file("f.dat");
  create_pattern_file(path, 64 * kPageSize);
  Config c = base(path);  // bounded by --ops
  c.warmup_seconds = 1;
  expect_error(c, "--warmup");
  c.ops = 0;
  c.seconds = 1;
  c.warmup_seconds = -1;
  expect_error(c, "--warmup");
}

TEST_F(LriotBadInput, VerifyRefusesAFileWithoutThePattern) {
  const std::string path = dir_.file("zeros.dat");
  std::ofstream(path) << std::string(8 * kPageSize, '\0');
  Config c = base(path);
  c.verify = true;
  expect_error(c, "does not hold the LRIOT pattern");
}

TEST_F(LriotBadInput, WritesToAnUnwritableFileAreRefusedInEveryMode) {
  const std::string path = dir_.file("ro.dat");
  create_pattern_file(path, 64 * kPageSize);
  // Root ignores permission bits; the immutable attribute stops even root.
  if (std::system(("chattr +i '" + path + "' 2>/dev/null").c_str()) != 0 && access(path.c_str(), W_OK) == 0)
    GTEST_SKIP() << "cannot make a file unwritable here";
  for (Mode mode : {Mode::direct, Mode::stdio, Mode::mmap, Mode::dimmap}) {
    Config c = base(path);
    c.mode = mode;
    c.sequence.write_fraction = 0.5;
    expect_error(c, "for writing");
  }
  std::system(("chattr -i '" + path + "' 2>/dev/null").c_str());
  EXPECT_EQ(verify_pattern_file(path).counter_sum, 0u) << "nothing was written";
}

}  // namespace
}  // namespace lriot
