// dimmap-run and libdimmap-preload.so end to end: preload-probe (a program that knows nothing
// of dimmap) runs under each placement; /proc/self/smaps and libdimmap, asked from inside
// the probe, say where its allocations went; bad requests fail with clear messages.
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.hpp"

#ifndef DIMMAP_RUN
#error "DIMMAP_RUN (path of dimmap-run) must be defined"
#endif

namespace {

using dimmap::test::Outcome;
using dimmap::test::run;

const std::string kRun = DIMMAP_RUN;
const std::string kProbe = PRELOAD_PROBE;

// A scratch directory on disk, removed with its contents at the end of each test.
using TempDir = dimmap::testing::TempDir;

// A small tmpfs mounted for the test (root only), unmounted at the end.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& where, bool read_only, const std::string& size) : path_(where) {
    mkdir(path_.c_str(), 0755);
    const std::string data = "size=" + size;
    ok_ = mount("tmpfs", path_.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, data.c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (ok_) umount(path_.c_str());
    rmdir(path_.c_str());
  }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct WhereLine {
  std::string size;
  int page_aligned = -1, dimmap = -1, locked = -1;
  std::string path;
};

WhereLine parse_where(const std::string& line) {
  WhereLine w;
  std::istringstream in(line);
  in >> w.size >> w.page_aligned >> w.dimmap >> w.locked;
  std::getline(in, w.path);
  if (!w.path.empty() && w.path[0] == ' ') w.path.erase(0, 1);
  return w;
}

// Flags giving each placement a small, quick configuration.
std::vector<std::string> run_with(const std::string& placement, const std::string& dir,
                                  const std::vector<std::string>& command) {
  std::vector<std::string> argv = {kRun, "--placement=" + placement, "--min-alloc=1M"};
  if (placement == "mmap" || placement == "dimmap") argv.push_back("--dir=" + dir);
  if (placement == "dimmap") argv.push_back("--buffer=16M");
  if (placement == "hpmmap") argv.push_back("--buffer=64M");
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

class EveryPlacement : public testing::TestWithParam<std::string> {
 protected:
  TempDir dir_;
};

TEST_P(EveryPlacement, BigAllocationsLandOnThePlacementSmallOnesStayOnTheHeap) {
  const Outcome o = run(run_with(GetParam(), dir_.path(), {kProbe, "where", "512K", "2M"}));
  ASSERT_EQ(o.status, 0) << o.err;
  const auto l = lines(o.out);
  ASSERT_EQ(l.size(), 2u) << o.out;
  const WhereLine small = parse_where(l[0]), big = parse_where(l[1]);
  // glibc serves 512K with a mapping of its own whose user pointer is 16 bytes in.
  EXPECT_EQ(small.page_aligned, 0) << l[0];
  EXPECT_EQ(small.dimmap, 0) << l[0];
  EXPECT_EQ(big.page_aligned, 1) << l[1];
  const std::string& p = GetParam();
  if (p == "memory") {
    EXPECT_EQ(big.path, "[anon]");
  }
  if (p == "mmap") {
    EXPECT_EQ(big.path.rfind(dir_.path() + "/", 0), 0u) << "not a file in --dir: " << big.path;
    EXPECT_NE(big.path.find("(deleted)"), std::string::npos) << "the file must be unlinked: " << big.path;
  }
  EXPECT_EQ(big.dimmap, p == "dimmap" ? 1 : 0) << l[1];
  if (p == "hpmmap") {
    EXPECT_EQ(big.locked, 1) << "arena memory is locked: " << l[1];
  }
  // The scratch directory holds no file afterwards: every backing file was unnamed.
  EXPECT_EQ(run({"find", dir_.path(), "-type", "f"}).out, "");
}

TEST_P(EveryPlacement, EveryAllocationFunctionWorksAcrossTheThreshold) {
  const Outcome o = run(run_with(GetParam(), dir_.path(), {kProbe, "api", "1M"}));
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "api ok\n") << o.err;
}

TEST_P(EveryPlacement, ManyThreadsAllocateAndFreeAtOnce) {
  const Outcome o = run(run_with(GetParam(), dir_.path(), {kProbe, "threads", "4", "100", "1M"}));
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "threads ok\n") << o.err;
}

TEST_P(EveryPlacement, ForkedChildrenAndExecedProgramsWork) {
  const Outcome o = run(run_with(GetParam(), dir_.path(), {kProbe, "fork", "1M"}));
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("fork ok"), std::string::npos) << o.out << o.err;
}

TEST_P(EveryPlacement, StatsReportTheCommandAndItsBigAllocations) {
  std::vector<std::string> argv = run_with(GetParam(), dir_.path(), {kProbe, "fill", "3M"});
  argv.insert(argv.begin() + 1, "--stats");
  const Outcome o = run(argv);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("dimmap-run: stats exit=0 wall_s="), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("stats placement=" + GetParam() + " big_allocs=1 big_frees=1"), std::string::npos) << o.err;
}

INSTANTIATE_TEST_SUITE_P(Placements, EveryPlacement, testing::Values("memory", "mmap", "dimmap", "hpmmap"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(DimmapRun, WithoutThePreloadBigAllocationsAreOrdinary) {
  const Outcome o = run({kProbe, "where", "2M"});
  ASSERT_EQ(o.status, 0) << o.err;
  const WhereLine w = parse_where(lines(o.out).at(0));
  EXPECT_EQ(w.page_aligned, 0);  // glibc's own mapping, header first
  EXPECT_EQ(w.dimmap, 0);
}

TEST(DimmapRun, MemoryPlacementOnTmpfsUsesAnUnlinkedFileThere) {
  const Outcome o = run({kRun, "--placement=memory", "--dir=/dev/shm", "--min-alloc=1M", "--", kProbe, "where", "2M"});
  ASSERT_EQ(o.status, 0) << o.err;
  const WhereLine w = parse_where(lines(o.out).at(0));
  EXPECT_EQ(w.path.rfind("/dev/shm/", 0), 0u) << w.path;
  EXPECT_NE(w.path.find("(deleted)"), std::string::npos) << w.path;
}

TEST(DimmapRun, ExitStatusOfTheCommandIsPassedOn) {
  EXPECT_EQ(run({kRun, "--placement=memory", "--", "sh", "-c", "exit 7"}).status, 7);
  EXPECT_EQ(run({kRun, "--placement=memory", "--", "sh", "-c", "kill -TERM $$"}).status, 128 + 15);
  const Outcome missing = run({kRun, "--placement=memory", "--", "/nonexistent/program"});
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(missing.err.find("cannot run '/nonexistent/program'"), std::string::npos) << missing.err;
}

// Bad requests: exit status 2 and a message naming the flag and the problem.
void expect_refused(const std::vector<std::string>& args, const std::string& message) {
  std::vector<std::string> argv = {kRun};
  argv.insert(argv.end(), args.begin(), args.end());
  const Outcome o = run(argv);
  EXPECT_EQ(o.status, 2) << "dimmap-run " << testing::PrintToString(args) << "\n" << o.err;
  EXPECT_NE(o.err.find(message), std::string::npos) << "expected '" << message << "' in:\n" << o.err;
  EXPECT_EQ(o.out, "") << "the command must not run";
}

TEST(DimmapRun, RefusesBadPlacementsAndSizes) {
  expect_refused({"--placement=bogus", "--", "true"}, "--placement: 'bogus' is not in-memory");
  expect_refused({"--placement=dimmap", "--buffer=1P", "--", "true"}, "more than this machine's memory");
  expect_refused({"--placement=hpmmap", "--buffer=1P", "--", "true"}, "more than this machine's memory");
  expect_refused({"--placement=dimmap", "--buffer=8K", "--", "true"}, "smaller than the minimum");
  expect_refused({"--placement=hpmmap", "--buffer=0", "--", "true"}, "--buffer: size '0' must be larger than 0");
  expect_refused({"--min-alloc=lots", "--", "true"}, "--min-alloc");
  expect_refused({"--min-alloc=-5M", "--", "true"}, "--min-alloc");
  expect_refused({"--min-alloc=0", "--", "true"}, "--min-alloc must be above 0");
  expect_refused({"--placement=mmap", "--min-alloc=100", "--", "true"}, "below the page size");
  expect_refused({"--placement=hpmmap", "--huge-pages=giant", "--", "true"}, "--huge-pages='giant'");
  expect_refused({"--placement=mmap"}, "no command given");
  expect_refused({"--bogus", "--", "true"}, "--bogus");
  expect_refused({"--bogus", "true"}, "unknown option '--bogus'");
}

TEST(DimmapRun, RefusesUnusableDirectories) {
  expect_refused({"--placement=mmap", "--dir=/nonexistent/dir", "--", "true"}, "No such file or directory");
  expect_refused({"--placement=dimmap", "--dir=/etc/hostname", "--", "true"}, "is not a directory");
  TempDir disk;
  expect_refused({"--placement=memory", "--dir=" + disk.path(), "--", "true"}, "is not on tmpfs");
}

TEST(DimmapRun, RefusesAReadOnlyFilesystem) {
  TempDir base;
  SmallTmpfs ro(base.path() + "/ro", true, "4M");
  if (!ro.ok()) GTEST_SKIP() << "cannot mount a tmpfs (not root)";
  expect_refused({"--placement=mmap", "--dir=" + base.path() + "/ro", "--", "true"}, "read-only filesystem");
  expect_refused({"--placement=dimmap", "--dir=" + base.path() + "/ro", "--", "true"}, "read-only filesystem");
}

TEST(DimmapRun, AFullFilesystemFailsTheAllocationNotTheProcessLater) {
  TempDir base;
  SmallTmpfs full(base.path() + "/full", false, "4M");
  if (!full.ok()) GTEST_SKIP() << "cannot mount a tmpfs (not root)";
  const std::string dir = base.path() + "/full";
  // Too small for even one allocation: refused up front.
  expect_refused({"--placement=mmap", "--dir=" + dir, "--min-alloc=8M", "--", "true"}, "less than one allocation");
  // Room for the threshold but not for this allocation: malloc returns NULL with a message.
  for (const char* placement : {"mmap", "dimmap"}) {
    const Outcome o = run({kRun, std::string("--placement=") + placement, "--dir=" + dir, "--min-alloc=1M",
                           "--buffer=16M", "--", kProbe, "fill", "6M"});
    EXPECT_EQ(o.status, 3) << placement << ": the probe's malloc must fail cleanly\n" << o.err;
    EXPECT_NE(o.err.find("No space left on device"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("'" + dir + "'"), std::string::npos) << "the message names the directory: " << o.err;
  }
}

TEST(DimmapRun, HugePagesUnavailableFallsBackWithAWarning) {
  // More hugetlb pages than the pool has free or may add: the arena must fall back.
  std::ifstream mi("/proc/meminfo");
  std::string key;
  unsigned long v = 0, free_pages = 0;
  while (mi >> key >> v) {
    if (key == "HugePages_Free:") free_pages = v;
    mi.ignore(256, '\n');
  }
  std::ifstream oc("/proc/sys/vm/nr_overcommit_hugepages");
  unsigned long over = 0;
  oc >> over;
  const unsigned long pages = free_pages + over + 64;  // beyond what a concurrent test may add
  if (pages > 512) GTEST_SKIP() << "the hugetlb pool is too large to exhaust in a test";
  const Outcome o = run({kRun, "--placement=hpmmap", "--huge-pages=hugetlb", "--buffer=" + std::to_string(pages * 2) + "M",
                         "--min-alloc=1M", "--", kProbe, "fill", "4M"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("hugetlbfs pages free"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("fill ok"), std::string::npos);
}

TEST(DimmapRun, TheArenaTooSmallFallsBackToTheHeapWithAWarning) {
  const Outcome o = run({kRun, "--placement=hpmmap", "--buffer=4M", "--min-alloc=1M", "--", kProbe, "fill", "8M"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("arena cannot fit"), std::string::npos) << o.err;
}

TEST(Preload, AMalformedEnvironmentIsRefusedNotGuessed) {
  const std::string lib = std::string(PRELOAD_LIBRARY);
  const Outcome o = run({kProbe, "fill", "1M"}, {"LD_PRELOAD=" + lib, "DIMMAP_RUN_PLACEMENT=tape"});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("DIMMAP_RUN_PLACEMENT='tape'"), std::string::npos) << o.err;
}

TEST(Preload, WithoutConfigurationItStaysOutOfTheWay) {
  const Outcome o = run({kProbe, "where", "2M"}, {"LD_PRELOAD=" + std::string(PRELOAD_LIBRARY), "DIMMAP_RUN_PLACEMENT="});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(parse_where(lines(o.out).at(0)).page_aligned, 0);
}

}  // namespace
