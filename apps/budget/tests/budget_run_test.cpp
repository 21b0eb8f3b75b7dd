// Integration tests of budget::run on this machine's real memory cgroups (needs root).
#include <budget/budget.hpp>
#include <budget/page_cache.hpp>
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace budget {
namespace {

constexpr uint64_t MiB = 1ull << 20;

bool gone(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

class BudgetRun : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      default_cgroup_parent();
    } catch (const std::exception& e) {
      GTEST_SKIP() << "no usable memory cgroup here: " << e.what();
    }
  }
  static Options budget(uint64_t bytes) {
    Options o;
    o.memory_bytes = bytes;
    o.name = "test";
    o.forward_signals = false;
    return o;
  }
  const std::string helper_ = BUDGET_TEST_HELPER;
};

TEST_F(BudgetRun, ProgramOverBudgetIsOomKilledAndReported) {
  Report r = run(budget(64 * MiB), {helper_, "alloc", "256"});
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exit_status, 128 + SIGKILL);
  EXPECT_TRUE(r.oom_killed());
  EXPECT_GE(r.oom_kills, 1u);
  EXPECT_EQ(r.limit_bytes, 64 * MiB);
  ASSERT_TRUE(r.peak_bytes.has_value());
  EXPECT_LE(*r.peak_bytes, 64 * MiB);
  EXPECT_GE(*r.peak_bytes, 48 * MiB) << "it was killed while pressing against the limit";
  EXPECT_TRUE(gone(r.cgroup)) << r.cgroup;
}

TEST_F(BudgetRun, ProgramUnderBudgetSucceedsAndItsPeakIsWhatItTouched) {
  Report r = run(budget(256 * MiB), {helper_, "alloc", "64"});
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.oom_killed());
  ASSERT_TRUE(r.peak_bytes.has_value());
  EXPECT_GE(*r.peak_bytes, 64 * MiB) << "every touched page is charged";
  EXPECT_LE(*r.peak_bytes, 64 * MiB + 48 * MiB) << "a small program adds only a few MiB";
  EXPECT_TRUE(gone(r.cgroup)) << r.cgroup;
}

TEST_F(BudgetRun, ExitStatusPassesThrough) {
  Report r = run(budget(64 * MiB), {"/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_status, 7);
  EXPECT_EQ(r.signal, 0);
  EXPECT_TRUE(gone(r.cgroup));
}

TEST_F(BudgetRun, LeftoverProcessesAreKilledAndTheCgroupRemoved) {
  Report r = run(budget(64 * MiB), {helper_, "orphan"});
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_EQ(r.stragglers_killed, 1u);
  EXPECT_TRUE(gone(r.cgroup)) << r.cgroup;
}

TEST_F(BudgetRun, PageCacheCountsAgainstTheBudget) {
  // Reading a cold file three times the budget must succeed (page cache is reclaimable) while
  // the charged page cache fills the budget and never exceeds it: the budget really constrains
  // the page cache. (memory.failcnt is not a reliable witness: recent v1 kernels reclaim first.)
  const std::string path = std::string(BUDGET_TEST_DIR) + "/pagecache." + std::to_string(getpid());
  {
    int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    std::vector<char> chunk(MiB, 'x');
    for (int i = 0; i < 96; ++i) ASSERT_EQ(write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(MiB));
    close(fd);
  }
  Options o = budget(32 * MiB);
  o.evict_files = {path};
  Report r = run(o, {"/bin/sh", "-c", "cat '" + path + "' > /dev/null"});
  unlink(path.c_str());
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_FALSE(r.oom_killed());
  ASSERT_TRUE(r.peak_bytes.has_value());
  EXPECT_LE(*r.peak_bytes, 32 * MiB);
  EXPECT_GE(*r.peak_bytes, 28 * MiB) << "the page cache is charged to the budget";
}

TEST_F(BudgetRun, EvictingAFileEmptiesItsPageCache) {
  const std::string path = std::string(BUDGET_TEST_DIR) + "/evict." + std::to_string(getpid());
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  std::vector<char> data(8 * MiB, 'y');
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
  EXPECT_GT(resident_fraction(path), 0.9) << "just written through the page cache";
  evict_file(path);
  EXPECT_LT(resident_fraction(path), 0.05);
  unlink(path.c_str());
}

TEST_F(BudgetRun, BadBudgetsAndCommandsAreRejected) {
  EXPECT_THROW(run(budget(0), {"/bin/true"}), dimmap::Error);
  EXPECT_THROW(run(budget(512 * 1024), {"/bin/true"}), dimmap::Error);
  EXPECT_THROW(run(budget(64 * MiB), {}), dimmap::Error);
  try {
    run(budget(64 * MiB), {"/nonexistent/program"});
    ADD_FAILURE() << "a missing program must not run";
  } catch (const LaunchError& e) {
    EXPECT_EQ(e.error_number(), ENOENT);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program"), std::string::npos);
  }
  Options bad_name = budget(64 * MiB);
  bad_name.name = "../escape";
  EXPECT_THROW(run(bad_name, {"/bin/true"}), dimmap::Error);
}

}  // namespace
}  // namespace budget
