// test_files.hpp - scratch files on real disk for runtime tests, with a verifiable pattern.
#pragma once

#include <dimmap/dimmap.h>
#include <dimmap/testing/temp_dir.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace dimmap::test {

constexpr size_t kPage = 4096;

// Word w of page p as written by "version" v: the tag (page, word) lets any reader check
// that a word belongs where it was read, whatever version it holds.
inline uint64_t pattern_word(uint64_t page, uint64_t word, uint64_t version) {
  return (page << 40) | (word << 24) | (version & 0xffffff);
}
inline bool tag_matches(uint64_t value, uint64_t page, uint64_t word) {
  return (value >> 24) == ((page << 16) | word);
}

// Pages of [addr, addr + pages * kPage) mapped by a PTE now (present in /proc/self/pagemap).
inline size_t mapped_pages(const void* addr, size_t pages) {
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << "/proc/self/pagemap";
  std::vector<uint64_t> entries(pages);
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(addr) / kPage * sizeof(uint64_t));
  EXPECT_EQ(pread(fd, entries.data(), pages * sizeof(uint64_t), at), static_cast<ssize_t>(pages * sizeof(uint64_t)));
  close(fd);
  size_t n = 0;
  for (uint64_t e : entries) n += e >> 63;  // bit 63: present
  return n;
}

// What a TempFile holds: pattern_word(page, word, 0) everywhere, or one hole (a sparse file,
// like a fresh scratch file).
enum class Fill { pattern, hole };

// A file in the tests' scratch directory on disk (not tmpfs: O_DIRECT must work), removed at
// destruction.
class TempFile {
 public:
  explicit TempFile(size_t pages, const char* name = "dimmap-test", Fill fill = Fill::pattern) {
    path_ = dimmap::testing::test_scratch_root() + "/" + name + "-XXXXXX";
    fd_ = mkstemp(path_.data());
    EXPECT_GE(fd_, 0) << path_;
    if (fill == Fill::hole) {
      EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(pages * kPage)), 0) << path_;
      return;
    }
    std::vector<uint64_t> buf(kPage / 8);
    for (size_t p = 0; p < pages; ++p) {
      for (size_t w = 0; w < buf.size(); ++w) buf[w] = pattern_word(p, w, 0);
      EXPECT_EQ(pwrite(fd_, buf.data(), kPage, static_cast<off_t>(p * kPage)), static_cast<ssize_t>(kPage));
    }
    fsync(fd_);
  }
  ~TempFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  uint64_t word_on_disk(size_t page, size_t word) const {
    uint64_t v = 0;
    EXPECT_EQ(pread(fd_, &v, 8, static_cast<off_t>(page * kPage + word * 8)), 8);
    return v;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// A buffer of the test's own (dimmap_instance_create) on the given engine, with a
// mapping helper and its stats.
struct TestInstance {
  explicit TestInstance(uint64_t buffer_bytes, double hot = 0.75, unsigned batch = 16, unsigned readahead = 64,
                        dimmap_engine engine = DIMMAP_ENGINE_UFFD) {
    dimmap_config cfg;
    EXPECT_EQ(dimmap_config_init(&cfg), 0);
    cfg.buffer_bytes = buffer_bytes;
    cfg.hot_fraction = hot;
    cfg.evict_batch = batch;
    cfg.readahead_pages = readahead;
    cfg.engine = engine;
    if (engine == DIMMAP_ENGINE_PAGECACHE) cfg.perma[0] = '\0';  // needs the userfaultfd engine
    EXPECT_EQ(dimmap_instance_create(&cfg, &inst), 0) << dimmap_last_error();
  }
  ~TestInstance() { EXPECT_EQ(dimmap_instance_destroy(inst), 0) << dimmap_last_error(); }
  TestInstance(const TestInstance&) = delete;
  TestInstance& operator=(const TestInstance&) = delete;
  dimmap_stats_t stats() const {
    dimmap_stats_t s{};
    EXPECT_EQ(dimmap_instance_stats(inst, &s), 0);
    return s;
  }
  uint64_t* map(const TempFile& f, size_t pages, int prot = PROT_READ | PROT_WRITE) const {
    void* p = dimmap_instance_mmap(inst, nullptr, pages * kPage, prot, MAP_SHARED, f.fd(), 0);
    EXPECT_NE(p, MAP_FAILED) << dimmap_last_error();
    return static_cast<uint64_t*>(p);
  }
  dimmap_instance* inst = nullptr;
};

}  // namespace dimmap::test
