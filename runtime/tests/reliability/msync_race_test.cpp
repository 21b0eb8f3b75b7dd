// msync against concurrent writeback: what dimmap_msync(MS_SYNC) returned for must be in the
// file at once, even while other threads msync overlapping ranges (so a page may be in
// another writeback when its owner writes it again and syncs). Each writer owns its pages,
// writes a whole new version, msyncs that page, then reads the file itself with pread and
// expects that version; a syncer thread msyncs the whole mapping without pause, and a small
// buffer adds eviction writebacks. No kill needed: a page skipped by msync shows directly
// (the check reads the device with O_DIRECT, so no page-cache copy can hide or fake it).
#include <dimmap/dimmap.h>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "page_files.hpp"
#include "pattern.hpp"
#include "scratch_mounts.hpp"
#include "watchdog.hpp"

namespace dimmap::reliability {
namespace {

struct RaceResult {
  uint64_t syncs = 0, stale = 0;
  std::string first;
};

RaceResult race(uint64_t pages, uint64_t buffer_pages, unsigned writers, int rounds, bool syncer_thread) {
  const std::string dir = make_temp_dir("/var/tmp", "dimmap-msync-race");
  const std::string path = dir + "/data";
  create_pattern_file(path, pages, 0);
  const int fd = open(path.c_str(), O_RDWR);
  // The check reads the storage itself (O_DIRECT), never a cached copy.
  const int direct_fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  EXPECT_GE(fd, 0);
  EXPECT_GE(direct_fd, 0);
  dimmap_config cfg;
  EXPECT_EQ(dimmap_config_init(&cfg), 0);
  cfg.buffer_bytes = buffer_pages * kPageBytes;
  cfg.evict_batch = 4;
  auto buffer = std::make_unique<Buffer>(cfg);
  const size_t bytes = pages * kPageBytes;
  auto* m = static_cast<uint64_t*>(
      dimmap_instance_mmap(buffer->instance(), nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  EXPECT_NE(m, MAP_FAILED) << dimmap_last_error();

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> syncs{0}, stale{0};
  std::string first;
  std::mutex first_mu;
  std::thread syncer([&] {
    while (syncer_thread && !stop) {
      EXPECT_EQ(dimmap_msync(m, bytes, MS_SYNC), 0) << dimmap_last_error();
    }
  });
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < writers; ++t) {
    pool.emplace_back([&, t] {
      alignas(4096) uint64_t disk[kWordsPerPage];
      for (int i = 1; i <= rounds; ++i) {
        const uint64_t p = t + writers * static_cast<uint64_t>(i % static_cast<int>(pages / writers));
        uint64_t* page = m + p * kWordsPerPage;
        for (size_t w = 0; w < kWordsPerPage; ++w)
          __atomic_store_n(&page[w], pattern_word(p, w, static_cast<uint64_t>(i)), __ATOMIC_RELAXED);
        ASSERT_EQ(dimmap_msync(page, kPageBytes, MS_SYNC), 0) << dimmap_last_error();
        syncs++;
        ASSERT_EQ(pread(direct_fd, disk, kPageBytes, static_cast<off_t>(p * kPageBytes)),
                  static_cast<ssize_t>(kPageBytes));
        for (size_t w = 0; w < kWordsPerPage; ++w) {
          if (disk[w] == pattern_word(p, w, static_cast<uint64_t>(i))) continue;
          if (stale++ == 0) {
            std::lock_guard<std::mutex> lock(first_mu);
            first = "page " + std::to_string(p) + " word " + std::to_string(w) + ": msync of version " +
                    std::to_string(i) + " returned, the file holds version " + std::to_string(version_of(disk[w]));
          }
          break;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  stop = true;
  syncer.join();
  EXPECT_EQ(dimmap_munmap(m, bytes), 0) << dimmap_last_error();
  buffer.reset();
  close(fd);
  close(direct_fd);
  remove_tree(dir);
  return RaceResult{syncs.load(), stale.load(), first};
}

void expect_no_stale(const RaceResult& r) {
  std::printf("%llu page msyncs checked against the file, %llu found stale\n",
              static_cast<unsigned long long>(r.syncs), static_cast<unsigned long long>(r.stale));
  EXPECT_EQ(r.stale, 0u) << r.first;
}

// Another thread msyncs the whole mapping all the time; the buffer holds the whole file, so
// the only other writebacks are those msyncs.
TEST(MsyncRace, WhatMsyncReturnedForIsInTheFileDespiteConcurrentMsyncs) {
  Watchdog watchdog(240, "MsyncRace concurrent msyncs");
  expect_no_stale(race(256, 512, 4, 1500, true));
}

// No other msync, but a buffer of 1/8 of the file: eviction writebacks run all the time.
TEST(MsyncRace, WhatMsyncReturnedForIsInTheFileDespiteEvictions) {
  Watchdog watchdog(240, "MsyncRace evictions");
  expect_no_stale(race(256, 32, 4, 1500, false));
}

}  // namespace
}  // namespace dimmap::reliability
