// memory_limit_test.cpp - the memory limit read from fake cgroup v1/v2 trees and from this
// machine, and the buffer and placement-threshold defaults derived from it.
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

const char* const kV1Mount =
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";
const char* const kV2Mount = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
const char* const kMeminfo = "MemTotal:        8388608 kB\nMemFree:         1000 kB\nMemAvailable:    4194304 kB\n";

// A fake root with /proc/self/{cgroup,mountinfo}, /proc/meminfo and cgroup files.
class FakeRoot : public ::testing::Test {
 protected:
  void put(const std::string& path, const std::string& text) {
    const fs::path p = root_ + path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void proc(const std::string& cgroup, const std::string& mountinfo, const std::string& meminfo = kMeminfo) {
    put("/proc/self/cgroup", cgroup);
    put("/proc/self/mountinfo", mountinfo);
    put("/proc/meminfo", meminfo);
  }

  dimmap::testing::TempDir dir_{"memory-limit-test"};
  std::string root_ = dir_.path();
};

// The flat keyed files of a cgroup: a key is a whole word at the start of a line, and a value
// that is not a number is not taken for one.
TEST(CgroupKeyedValue, FindsWholeKeysOfOomControlMemoryEventsAndMemoryStat) {
  using dimmap::cgroup_keyed_value;
  EXPECT_EQ(cgroup_keyed_value("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
  EXPECT_EQ(cgroup_keyed_value("low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 0\n", "max"), 17u);
  EXPECT_EQ(cgroup_keyed_value("low 0\nhigh 0\n", "oom_kill"), std::nullopt);
  EXPECT_EQ(cgroup_keyed_value("inactive_file 5\nactive_file 6", "active_file"), 6u) << "not inactive_file's";
  EXPECT_EQ(cgroup_keyed_value("total_dirty 8\ndirty 3\n", "dirty"), 3u) << "not total_dirty's";
  EXPECT_EQ(cgroup_keyed_value("max 18446744073709551615\n", "max"), 18446744073709551615u);
  EXPECT_EQ(cgroup_keyed_value("max lots\n", "max"), std::nullopt);
  EXPECT_EQ(cgroup_keyed_value("max\n", "max"), std::nullopt);
  EXPECT_EQ(cgroup_keyed_value("", "max"), std::nullopt);
}

TEST_F(FakeRoot, V1TakesTheSmallestLimitOnTheWayUp) {
  proc("9:cpu:/\n4:memory:/jobs/a/b\n", kV1Mount);
  put("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put("/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes", "9223372036854771712\n");
  put("/sys/fs/cgroup/memory/jobs/a/memory.limit_in_bytes", std::to_string(100 * kMiB) + "\n");
  put("/sys/fs/cgroup/memory/jobs/a/b/memory.limit_in_bytes", std::to_string(200 * kMiB) + "\n");
  const dimmap::MemoryLimit limit = dimmap::memory_limit(root_);
  EXPECT_EQ(limit.bytes, 100 * kMiB);
  EXPECT_EQ(limit.source, "cgroup v1 memory.limit_in_bytes of /sys/fs/cgroup/memory/jobs/a");
  // The usage to watch is that of the cgroup whose limit it is.
  EXPECT_EQ(limit.usage_file, root_ + "/sys/fs/cgroup/memory/jobs/a/memory.usage_in_bytes");
  EXPECT_EQ(limit.stat_file, root_ + "/sys/fs/cgroup/memory/jobs/a/memory.stat");
  EXPECT_FALSE(limit.v2);
}

TEST_F(FakeRoot, V1OwnCgroupLimitWhenItIsTheSmallest) {
  proc("4:memory:/jobs/a/\n", kV1Mount);
  put("/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes", std::to_string(1 * kGiB));
  put("/sys/fs/cgroup/memory/jobs/a/memory.limit_in_bytes", std::to_string(48 * kMiB));
  EXPECT_EQ(dimmap::memory_limit(root_).bytes, 48 * kMiB);
}

TEST_F(FakeRoot, V2ReadsMemoryMaxAndSkipsMax) {
  proc("0::/user.slice/job.scope\n", kV2Mount);
  put("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n");
  put("/sys/fs/cgroup/user.slice/memory.max", "52428800\n");
  const dimmap::MemoryLimit limit = dimmap::memory_limit(root_);
  EXPECT_EQ(limit.bytes, 50 * kMiB);
  EXPECT_EQ(limit.source, "cgroup v2 memory.max of /sys/fs/cgroup/user.slice");
  EXPECT_EQ(limit.usage_file, root_ + "/sys/fs/cgroup/user.slice/memory.current");
  EXPECT_EQ(limit.stat_file, root_ + "/sys/fs/cgroup/user.slice/memory.stat");
  EXPECT_TRUE(limit.v2);
}

TEST_F(FakeRoot, NoLimitFallsBackToMemAvailable) {
  proc("0::/a\n", kV2Mount);
  put("/sys/fs/cgroup/a/memory.max", "max\n");
  const dimmap::MemoryLimit limit = dimmap::memory_limit(root_);
  EXPECT_EQ(limit.bytes, 4 * kGiB);
  EXPECT_NE(limit.source.find("MemAvailable"), std::string::npos) << limit.source;
  EXPECT_EQ(limit.usage_file, "");  // no cgroup's usage to watch
  EXPECT_EQ(limit.stat_file, "");
}

TEST_F(FakeRoot, LimitAboveTheMachinesMemoryLimitsNothing) {
  proc("4:memory:/a\n", kV1Mount);
  put("/sys/fs/cgroup/memory/a/memory.limit_in_bytes", std::to_string(16 * kGiB));  // MemTotal is 8G
  EXPECT_EQ(dimmap::memory_limit(root_).bytes, 4 * kGiB);
}

TEST_F(FakeRoot, LimitBetweenAvailableAndTotalIsKept) {
  // The limit binds even when it is above what is free now: it is what the user was given.
  proc("0::/a\n", kV2Mount);
  put("/sys/fs/cgroup/a/memory.max", std::to_string(6 * kGiB));
  EXPECT_EQ(dimmap::memory_limit(root_).bytes, 6 * kGiB);
}

TEST_F(FakeRoot, HybridTakesTheSmallerOfV1AndV2) {
  proc("4:memory:/x\n0::/y\n",
       std::string(kV1Mount) + "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  put("/sys/fs/cgroup/memory/x/memory.limit_in_bytes", std::to_string(300 * kMiB));
  put("/sys/fs/cgroup/unified/y/memory.max", std::to_string(200 * kMiB));
  const dimmap::MemoryLimit limit = dimmap::memory_limit(root_);
  EXPECT_EQ(limit.bytes, 200 * kMiB);
  EXPECT_NE(limit.source.find("cgroup v2"), std::string::npos) << limit.source;
}

TEST_F(FakeRoot, MountOfPartOfTheHierarchy) {
  // A container sees its own cgroup mounted at /sys/fs/cgroup/memory (mount root /docker/c1).
  proc("4:memory:/docker/c1/job\n",
       "35 31 0:32 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  put("/sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(64 * kMiB));
  put("/sys/fs/cgroup/memory/job/memory.limit_in_bytes", "9223372036854771712");
  EXPECT_EQ(dimmap::memory_limit(root_).bytes, 64 * kMiB);
}

TEST_F(FakeRoot, UnreadableOrGarbledFilesAreSkipped) {
  proc("garbage\n4:memory:/a\n", kV1Mount + std::string("short line\n"));
  put("/sys/fs/cgroup/memory/a/memory.limit_in_bytes", "not a number");
  EXPECT_EQ(dimmap::memory_limit(root_).bytes, 4 * kGiB);  // MemAvailable
}

TEST_F(FakeRoot, NothingReadable) {
  const dimmap::MemoryLimit limit = dimmap::memory_limit(root_);
  EXPECT_EQ(limit.bytes, 0u);
  EXPECT_EQ(limit.source, "unknown");
}

TEST(MemoryLimit, ThisMachineIsSane) {
  const dimmap::MemoryLimit limit = dimmap::memory_limit();
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_GE(limit.bytes, 16 * kMiB) << limit.source;
  EXPECT_LE(limit.bytes, physical) << limit.source;
  EXPECT_FALSE(limit.source.empty());
}

TEST(MemoryLimit, BufferOfItsOwnMemoryDefaultsToHalfTheLimitAtMost256M) {
  EXPECT_EQ(dimmap::default_buffer_bytes(48 * kMiB, false), 24 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(300 * kMiB, false), 150 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(100 * kGiB, false), 256 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(49 * kMiB + 12345, false), 24 * kMiB);  // whole MiB
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(dimmap::default_buffer_bytes(0, false), 16 * page);  // the smallest buffer there is
}

TEST(MemoryLimit, PageCacheBufferDefaultsToSevenEighthsOfTheLimitAtMost256M) {
  EXPECT_EQ(dimmap::default_buffer_bytes(32 * kMiB, true), 28 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(48 * kMiB, true), 42 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(100 * kGiB, true), 256 * kMiB);
  EXPECT_EQ(dimmap::default_buffer_bytes(49 * kMiB + 12345, true), 42 * kMiB);  // whole MiB
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(dimmap::default_buffer_bytes(0, true), 16 * page);
}

TEST(MemoryLimit, MinAllocIsAThirtySecondBetween1MAnd64M) {
  EXPECT_EQ(dimmap::default_min_alloc(48 * kMiB), 1 * kMiB);
  EXPECT_EQ(dimmap::default_min_alloc(0), 1 * kMiB);
  EXPECT_EQ(dimmap::default_min_alloc(512 * kMiB), 16 * kMiB);
  EXPECT_EQ(dimmap::default_min_alloc(2 * kGiB), 64 * kMiB);
  EXPECT_EQ(dimmap::default_min_alloc(100 * kGiB), 64 * kMiB);
}

class ChooseBuffer : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("DIMMAP_BUFFER"); }
  const dimmap::MemoryLimit limit_{48 * kMiB, "cgroup v1 memory.limit_in_bytes of /x", "", "", false};
};

TEST_F(ChooseBuffer, OptionWinsOverEnvironment) {
  setenv("DIMMAP_BUFFER", "8M", 1);
  const dimmap::BufferChoice c = dimmap::choose_buffer("16M", limit_);
  EXPECT_EQ(c.bytes, 16 * kMiB);
  EXPECT_EQ(c.why, "--buffer");
  EXPECT_TRUE(c.warning.empty()) << c.warning;
}

TEST_F(ChooseBuffer, EnvironmentWinsOverTheDefault) {
  setenv("DIMMAP_BUFFER", "8M", 1);
  const dimmap::BufferChoice c = dimmap::choose_buffer("", limit_);
  EXPECT_EQ(c.bytes, 8 * kMiB);
  EXPECT_EQ(c.why, "DIMMAP_BUFFER");
}

TEST_F(ChooseBuffer, DefaultFollowsTheLimitAndSaysWhy) {
  unsetenv("DIMMAP_BUFFER");
  const dimmap::BufferChoice c = dimmap::choose_buffer("", limit_);
  EXPECT_EQ(c.bytes, 42 * kMiB);  // 7/8: the default engine's buffer is page cache
  EXPECT_NE(c.why.find("48M"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("/x"), std::string::npos) << c.why;
  EXPECT_TRUE(c.warning.empty());
}

TEST_F(ChooseBuffer, MoreThanTheLimitWarnsNamingBothSizes) {
  const dimmap::BufferChoice c = dimmap::choose_buffer("64M", limit_);
  EXPECT_EQ(c.bytes, 64 * kMiB);
  EXPECT_NE(c.warning.find("--buffer=64M"), std::string::npos) << c.warning;
  EXPECT_NE(c.warning.find("48M"), std::string::npos) << c.warning;
  setenv("DIMMAP_BUFFER", "1G", 1);
  const dimmap::BufferChoice e = dimmap::choose_buffer("", limit_);
  EXPECT_NE(e.warning.find("DIMMAP_BUFFER=1G"), std::string::npos) << e.warning;
}

TEST_F(ChooseBuffer, BadSizesNameTheirSource) {
  try {
    dimmap::choose_buffer("lots", limit_);
    FAIL() << "a bad --buffer was accepted";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--buffer"), std::string::npos) << e.what();
  }
  setenv("DIMMAP_BUFFER", "plenty", 1);
  try {
    dimmap::choose_buffer("", limit_);
    FAIL() << "a bad DIMMAP_BUFFER was accepted";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("DIMMAP_BUFFER"), std::string::npos) << e.what();
  }
}

}  // namespace
