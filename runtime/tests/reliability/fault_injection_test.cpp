// Fault injection into the engines through real kernel file systems (the userfaultfd engine;
//   the pagecache engine where named):
//   faultfs (FUSE, faultfs.cpp)  EIO on chosen reads, writes and fsyncs; requests that hang;
//                                a server that dies with requests in flight
//   tmpfs and ext4 on a loop device, filled up: ENOSPC on writeback (ext4 with O_DIRECT)
// The engine reads and writes through io_uring, so the errors must come from the kernel's
// side of the file, not from an interposed libc call. What the runtime promises (dimmap.h):
//   - a failed fill raises SIGBUS in the faulting thread, counts read_errors, logs a line;
//   - a failed writeback fails dimmap_msync / dimmap_munmap (errno EIO or ENOSPC), counts
//     write_errors, and keeps the data in the buffer: once the storage recovers, msync
//     again succeeds and the file is right;
//   - no thread hangs: every test runs under a watchdog that dumps the threads' kernel stacks.
#include <dimmap/dimmap.h>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "page_files.hpp"
#include "pattern.hpp"
#include "scratch_mounts.hpp"
#include "sigbus_probe.hpp"
#include "watchdog.hpp"

namespace dimmap::reliability {
namespace {

// Mounts made by these tests stay private to the process (entered before any thread exists).
class PrivateMountNamespace : public ::testing::Environment {
 public:
  void SetUp() override { error = geteuid() == 0 ? enter_private_mount_namespace() : EPERM; }
  static inline int error = -1;
};
const auto* const kNamespace = ::testing::AddGlobalTestEnvironment(new PrivateMountNamespace);

constexpr double kWatchdogSeconds = 120;

std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::unique_ptr<Buffer> make_buffer(uint64_t pages, unsigned batch = 8,
                                    dimmap_engine engine = DIMMAP_ENGINE_UFFD) {
  dimmap_config cfg;
  EXPECT_EQ(dimmap_config_init(&cfg), 0) << dimmap_last_error();
  cfg.buffer_bytes = pages * kPageBytes;
  cfg.evict_batch = batch;
  cfg.engine = engine;
  return std::make_unique<Buffer>(cfg);
}

// A file of pattern pages (version 0) opened through a mount, mapped through a buffer.
struct MappedFile {
  MappedFile(Buffer& buffer, const std::string& path, uint64_t npages, bool writable) : pages(npages) {
    fd = open(path.c_str(), writable ? O_RDWR : O_RDONLY);
    EXPECT_GE(fd, 0) << path << ": " << std::strerror(errno);
    const int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void* p = dimmap_instance_mmap(buffer.instance(), nullptr, bytes(), prot, MAP_SHARED, fd, 0);
    EXPECT_NE(p, MAP_FAILED) << dimmap_last_error();
    words = p == MAP_FAILED ? nullptr : static_cast<uint64_t*>(p);
  }
  ~MappedFile() {
    if (words) {
      EXPECT_EQ(dimmap_munmap(words, bytes()), 0) << dimmap_last_error();
    }
    if (fd >= 0) close(fd);
  }
  size_t bytes() const { return pages * kPageBytes; }
  uint64_t* page(uint64_t p) const { return words + p * kWordsPerPage; }
  // Unmaps now (the destructor then does nothing); returns dimmap_munmap's result.
  int unmap() {
    const int rc = dimmap_munmap(words, bytes());
    if (rc == 0) words = nullptr;
    return rc;
  }

  uint64_t pages;
  int fd = -1;
  uint64_t* words = nullptr;
};

// A thread reading the unreadable page gets SIGBUS, and then reads page 3 as usual.
void expect_sigbus_in_one_thread_only(const MappedFile& m, uint64_t bad) {
  bool bad_read = true, good_read = false;
  uint64_t good = 0;
  std::thread t([&] {
    uint64_t v;
    bad_read = try_read(m.page(bad), &v);
    good_read = try_read(m.page(3) + 7, &good);
  });
  t.join();
  EXPECT_FALSE(bad_read) << "the access to the unreadable page must raise SIGBUS";
  EXPECT_TRUE(good_read);
  EXPECT_EQ(good, pattern_word(3, 7, 0));
}

std::string page_range(uint64_t page, uint64_t count = 1) {
  return "offset=" + std::to_string(page * kPageBytes) + " length=" + std::to_string(count * kPageBytes);
}

class FaultInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PrivateMountNamespace::error != 0)
      GTEST_SKIP() << "needs root for a private mount namespace, FUSE and tmpfs: "
                   << std::strerror(PrivateMountNamespace::error);
    watchdog_ = std::make_unique<Watchdog>(kWatchdogSeconds, test_name());
  }
  void TearDown() override { watchdog_.reset(); }

  // Every page of the file behind path (read directly, not through the mapping) at `version`.
  static void expect_file_at(const std::string& path, uint64_t pages, uint64_t version) {
    const int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << path;
    std::string first;
    EXPECT_EQ(count_wrong_pages(fd, std::vector<uint64_t>(pages, version), &first), 0u) << path << ": " << first;
    close(fd);
  }

  static void expect_consistent(const Buffer& buffer) { EXPECT_EQ(stats_violations(buffer.stats()), ""); }

 private:
  std::unique_ptr<Watchdog> watchdog_;
};

// ---- read errors ----

TEST_F(FaultInjection, ReadErrorRaisesSigbusInTheFaultingThreadOnly) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 64, bad = 40;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(16);
  {
    MappedFile m(*buffer, fs.path("data"), pages, false);
    ASSERT_NE(m.words, nullptr);
    fs.inject("read EIO file=data " + page_range(bad));
    StderrCapture log;
    expect_sigbus_in_one_thread_only(m, bad);
    const std::string text = log.finish();
    const dimmap_stats_t s = buffer->stats();
    EXPECT_EQ(s.read_errors, 1u);
    EXPECT_NE(text.find("reading page " + std::to_string(bad)), std::string::npos) << text;
    EXPECT_NE(text.find(std::strerror(EIO)), std::string::npos) << text;
    EXPECT_GE(fs.counters()["failed_reads"], 1u);
    // This thread, the test's main thread, is fine and still reads the other pages.
    for (uint64_t p = 0; p < pages; ++p)
      if (p != bad) {
        ASSERT_EQ(m.page(p)[p % kWordsPerPage], pattern_word(p, p % kWordsPerPage, 0)) << p;
      }
    expect_consistent(*buffer);
  }
  // Once the storage reads again, a new mapping of the file reads the page.
  fs.clear();
  MappedFile again(*buffer, fs.path("data"), pages, false);
  uint64_t v = 0;
  EXPECT_TRUE(try_read(again.page(bad) + 1, &v));
  EXPECT_EQ(v, pattern_word(bad, 1, 0));
}

TEST_F(FaultInjection, EveryThreadWaitingForAFailedPageGetsSigbus) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 64, bad = 17;
  const int threads = 8;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(32);
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  // Threads fault on the page together: those waiting for the failed read and those that
  // come after it must all see SIGBUS.
  fs.inject("read EIO file=data " + page_range(bad));
  std::atomic<int> ready{0}, buses{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready++;
      while (ready.load() < threads) std::this_thread::yield();
      uint64_t v;
      const bool ok = t % 2 ? try_read(m.page(bad) + t, &v) : try_write(m.page(bad) + t, 1);
      if (!ok) buses++;
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(buses.load(), threads) << "readers and writers of the failed page all get SIGBUS";
  const dimmap_stats_t s = buffer->stats();
  EXPECT_GE(s.read_errors, 1u);
  EXPECT_LE(s.read_errors, static_cast<uint64_t>(threads));
  expect_consistent(*buffer);
  // Writes to the other pages still reach the file.
  ASSERT_TRUE(try_fill_page(m.page(bad + 1), bad + 1, 5));
  ASSERT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  const int fd = open(fs.backing_path("data").c_str(), O_RDONLY);
  EXPECT_EQ(page_version(fd, bad + 1), 5);
  EXPECT_EQ(page_version(fd, bad), 0) << "the failed page is untouched on disk";
  close(fd);
}

// The storage stops answering a read; nothing hangs for good: the other pages still work
// meanwhile, and when the server dies its requests fail (ECONNABORTED) and the waiter gets SIGBUS.
TEST_F(FaultInjection, StorageThatStopsAnsweringDoesNotBlockOtherFaultsAndFailsWhenItDies) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 64, stuck = 10;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(16);
  MappedFile m(*buffer, fs.path("data"), pages, false);
  ASSERT_NE(m.words, nullptr);
  fs.inject("read hang file=data " + page_range(stuck));
  std::atomic<bool> stuck_done{false};
  bool stuck_read = true;
  std::thread waiter([&] {
    uint64_t v;
    stuck_read = try_read(m.page(stuck), &v);
    stuck_done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (fs.counters()["hung"] < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(fs.counters()["hung"], 1u);
  // While one read hangs in the storage, faults on other pages are served.
  for (uint64_t p = 20; p < 60; ++p) {
    uint64_t v = 0;
    ASSERT_TRUE(try_read(m.page(p) + 2, &v));
    ASSERT_EQ(v, pattern_word(p, 2, 0));
  }
  EXPECT_FALSE(stuck_done.load());
  StderrCapture log;
  fs.kill_server();
  waiter.join();
  const std::string text = log.finish();
  EXPECT_FALSE(stuck_read) << "the read the dead server held must end in SIGBUS";
  EXPECT_EQ(buffer->stats().read_errors, 1u);
  // Requests the kernel had sent to the dead server fail with ECONNABORTED (later ones would
  // get ENOTCONN).
  EXPECT_NE(text.find(std::strerror(ECONNABORTED)), std::string::npos) << text;
  expect_consistent(*buffer);
}

// ---- the pagecache engine: the kernel's own fault and writeback paths ----

TEST_F(FaultInjection, PageCacheEngineReadErrorRaisesSigbusInTheFaultingThreadOnly) {
  FaultFs fs(DIMMAP_FAULTFS, /*page_cache=*/true);
  const uint64_t pages = 64, bad = 40;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(16, 8, DIMMAP_ENGINE_PAGECACHE);
  MappedFile m(*buffer, fs.path("data"), pages, false);
  ASSERT_NE(m.words, nullptr);
  fs.inject("read EIO file=data " + page_range(bad));
  expect_sigbus_in_one_thread_only(m, bad);
  EXPECT_GE(fs.counters()["failed_reads"], 1u);
  for (uint64_t p = 0; p < pages; ++p)
    if (p != bad) {
      ASSERT_EQ(m.page(p)[p % kWordsPerPage], pattern_word(p, p % kWordsPerPage, 0)) << p;
    }
  fs.clear();
  uint64_t v = 0;
  EXPECT_TRUE(try_read(m.page(bad) + 1, &v)) << "a later access reads the page again";
  EXPECT_EQ(v, pattern_word(bad, 1, 0));
}

// A failed writeback fails msync, and the data stays: the engine makes the pages dirty again
// (the kernel marks a page whose write failed clean), so the next msync, once the storage
// writes again, puts every page on disk.
TEST_F(FaultInjection, PageCacheEngineWritebackErrorFailsMsyncAndKeepsTheData) {
  FaultFs fs(DIMMAP_FAULTFS, /*page_cache=*/true);
  const uint64_t pages = 64, bad = 10;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(128, 8, DIMMAP_ENGINE_PAGECACHE);  // no evictions: only msync writes
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_TRUE(try_fill_page(m.page(p), p, 1));
  fs.inject("write EIO file=data " + page_range(bad));
  errno = 0;
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_NE(std::string(dimmap_last_error()).find("writeback failed"), std::string::npos) << dimmap_last_error();
  {
    const int fd = open(fs.backing_path("data").c_str(), O_RDONLY);
    EXPECT_EQ(page_version(fd, bad), 0) << "the failed write did not reach the disk";
    close(fd);
  }
  for (uint64_t p = 0; p < pages; ++p) ASSERT_EQ(m.page(p)[5], pattern_word(p, 5, 1)) << p;
  fs.clear();
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  expect_file_at(fs.backing_path("data"), pages, 1);
}

// Writes through a buffer an eighth of the file while every write fails: pages leaving the
// buffer are written back, fail, and stay; msync reports it; once writes work, every page
// lands and none was lost.
TEST_F(FaultInjection, PageCacheEngineEvictionWritebackErrorsLoseNoData) {
  FaultFs fs(DIMMAP_FAULTFS, /*page_cache=*/true);
  const uint64_t pages = 256;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(32, 4, DIMMAP_ENGINE_PAGECACHE);
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  fs.inject("write EIO file=data");
  for (int round = 0; round < 3; ++round)
    for (uint64_t p = 0; p < pages; ++p) {
      ASSERT_TRUE(try_fill_page(m.page(p), p, 1));
      if (p % 32 == 31) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the keeper's rounds
    }
  EXPECT_GT(buffer->stats().evictions, 0u);
  EXPECT_GE(fs.counters()["failed_writes"], 1u);
  errno = 0;
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), -1);
  EXPECT_EQ(errno, EIO);
  fs.clear();
  // A failure the keeper saw after that msync is reported once more, then writes succeed.
  const int first = dimmap_msync(m.words, m.bytes(), MS_SYNC);
  const int first_errno = errno;
  EXPECT_TRUE(first == 0 || first_errno == EIO) << "first msync after recovery: " << dimmap_last_error();
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  expect_file_at(fs.backing_path("data"), pages, 1);
}

// ---- write errors ----

TEST_F(FaultInjection, WritebackErrorFailsMsyncAndKeepsTheData) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 64, bad = 10;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(128);  // no evictions: only msync writes
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_TRUE(try_fill_page(m.page(p), p, 1));
  fs.inject("write EIO file=data " + page_range(bad));
  StderrCapture log;
  errno = 0;
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_NE(std::string(dimmap_last_error()).find("writeback failed"), std::string::npos) << dimmap_last_error();
  const std::string text = log.finish();
  EXPECT_NE(text.find("in the buffer"), std::string::npos) << text;
  dimmap_stats_t s = buffer->stats();
  EXPECT_GE(s.write_errors, 1u);
  EXPECT_GE(s.dirty_pages, 1u) << "the pages not written stay dirty";
  {
    const int fd = open(fs.backing_path("data").c_str(), O_RDONLY);
    EXPECT_EQ(page_version(fd, bad), 0) << "the failed write did not reach the disk";
    close(fd);
  }
  // The data is still in the buffer: the mapping shows it, and once writes work it lands.
  for (uint64_t p = 0; p < pages; ++p) ASSERT_EQ(m.page(p)[5], pattern_word(p, 5, 1)) << p;
  fs.clear();
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  EXPECT_EQ(buffer->stats().dirty_pages, 0u);
  expect_file_at(fs.backing_path("data"), pages, 1);
  expect_consistent(*buffer);
}

TEST_F(FaultInjection, WritebackErrorFailsMunmapAndKeepsTheMapping) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 48;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(64);
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_TRUE(try_fill_page(m.page(p), p, 2));
  fs.inject("write EIO file=data");
  errno = 0;
  EXPECT_EQ(dimmap_munmap(m.words, m.bytes()), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_NE(std::string(dimmap_last_error()).find("stays intact"), std::string::npos) << dimmap_last_error();
  EXPECT_TRUE(dimmap_is_mapped(m.words));
  for (uint64_t p = 0; p < pages; ++p) ASSERT_EQ(m.page(p)[9], pattern_word(p, 9, 2)) << p;
  fs.clear();
  EXPECT_EQ(m.unmap(), 0) << dimmap_last_error();
  expect_file_at(fs.backing_path("data"), pages, 2);
}

TEST_F(FaultInjection, FsyncErrorFailsMsync) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 32;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(64);
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_TRUE(try_fill_page(m.page(p), p, 3));
  fs.inject("fsync EIO file=data count=1");
  errno = 0;
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), -1) << "MS_SYNC must report that the data is not durable";
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(fs.counters()["failed_fsyncs"], 1u);
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  expect_file_at(fs.backing_path("data"), pages, 3);
}

// Every writeback fails while threads dirty a file 8x the buffer: evictions cannot free
// anything. No thread may hang; faults that cannot get a page fail with SIGBUS; no page a
// thread wrote is lost once writes work again.
TEST_F(FaultInjection, EvictionWritebackErrorsNeitherLoseDataNorHang) {
  FaultFs fs(DIMMAP_FAULTFS);
  const uint64_t pages = 256;
  create_pattern_file(fs.backing_path("data"), pages, 0);
  auto buffer = make_buffer(32, 4);
  MappedFile m(*buffer, fs.path("data"), pages, true);
  ASSERT_NE(m.words, nullptr);
  fs.inject("write EIO file=data");
  std::vector<uint64_t> expected(pages, 0);
  const int threads = 4;
  std::vector<std::thread> pool;
  std::atomic<uint64_t> buses{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t p = static_cast<uint64_t>(t); p < pages; p += threads) {
        if (try_fill_page(m.page(p), p, 1))
          expected[p] = 1;
        else
          buses++;
      }
    });
  }
  for (auto& th : pool) th.join();
  dimmap_stats_t s = buffer->stats();
  EXPECT_GE(s.write_errors, 1u);
  EXPECT_GT(buses.load(), 0u) << "with no way to free a page, some faults must fail";
  EXPECT_EQ(stats_violations(s), "") << "faults that waited for a free page and were failed must be counted too";
  fs.clear();
  const int first = dimmap_msync(m.words, m.bytes(), MS_SYNC);
  const int first_errno = errno;
  EXPECT_TRUE(first == 0 || first_errno == EIO) << "first msync after recovery: " << dimmap_last_error();
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  EXPECT_EQ(buffer->stats().dirty_pages, 0u);
  const int fd = open(fs.backing_path("data").c_str(), O_RDONLY);
  std::string first_wrong;
  EXPECT_EQ(count_wrong_pages(fd, expected, &first_wrong), 0u) << first_wrong;
  close(fd);
  std::printf("eviction write errors: %llu writes failed, %llu of %llu page writes got SIGBUS, first msync %s\n",
              static_cast<unsigned long long>(s.write_errors), static_cast<unsigned long long>(buses.load()),
              static_cast<unsigned long long>(pages), first == 0 ? "ok" : std::strerror(first_errno));
}

// ---- a file system that fills up ----

enum class FullFs { tmpfs, ext4 };

class FullFileSystem : public FaultInjection, public ::testing::WithParamInterface<FullFs> {};

// Fills the file system of dir with a filler file until writes fail with ENOSPC.
std::string fill_up(const std::string& dir) {
  const std::string filler = dir + "/filler";
  const int fd = open(filler.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  std::vector<char> chunk(64 << 10, 'x');
  while (write(fd, chunk.data(), chunk.size()) > 0) {
  }
  EXPECT_EQ(errno, ENOSPC);
  for (size_t n = 4096; n > 0; n /= 2)  // the last partial blocks
    while (write(fd, chunk.data(), n) > 0) {
    }
  fsync(fd);
  close(fd);
  return filler;
}

TEST_P(FullFileSystem, EnospcOnWritebackFailsMsyncUntilSpaceIsFreed) {
  std::unique_ptr<TmpfsMount> tmpfs;
  std::unique_ptr<Ext4LoopMount> ext4;
  std::string dir;
  if (GetParam() == FullFs::tmpfs) {
    tmpfs = std::make_unique<TmpfsMount>(2 << 20);
    dir = tmpfs->dir();
  } else {
    ext4 = std::make_unique<Ext4LoopMount>(8 << 20);
    dir = ext4->dir();
  }
  // A sparse file: its pages take space only once written.
  const uint64_t pages = 128;
  const std::string path = dir + "/data";
  {
    const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(pages * kPageBytes)), 0);
    close(fd);
  }
  const std::string filler = fill_up(dir);
  auto buffer = make_buffer(256);
  MappedFile m(*buffer, path, pages, true);
  ASSERT_NE(m.words, nullptr);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_TRUE(try_fill_page(m.page(p), p, 4));
  errno = 0;
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), -1);
  EXPECT_EQ(errno, ENOSPC) << dimmap_last_error();
  EXPECT_GE(buffer->stats().write_errors, 1u);
  EXPECT_GE(buffer->stats().dirty_pages, 1u);
  for (uint64_t p = 0; p < pages; ++p) ASSERT_EQ(m.page(p)[11], pattern_word(p, 11, 4)) << p;
  // Room again: the same msync now succeeds and every page is in the file.
  ASSERT_EQ(unlink(filler.c_str()), 0);
  sync();
  EXPECT_EQ(dimmap_msync(m.words, m.bytes(), MS_SYNC), 0) << dimmap_last_error();
  EXPECT_EQ(buffer->stats().dirty_pages, 0u);
  expect_file_at(path, pages, 4);
  EXPECT_EQ(m.unmap(), 0) << dimmap_last_error();
  expect_consistent(*buffer);
}

INSTANTIATE_TEST_SUITE_P(Mounts, FullFileSystem, ::testing::Values(FullFs::tmpfs, FullFs::ext4),
                         [](const auto& info) { return info.param == FullFs::tmpfs ? "tmpfs" : "ext4_loop"; });

}  // namespace
}  // namespace dimmap::reliability
