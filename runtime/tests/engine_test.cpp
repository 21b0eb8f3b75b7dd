// Integration tests of the userfaultfd engine: real files on disk, real userfaultfd, real
// threads. Buffers are much smaller than the files so eviction, recovery and writeback run.
#include <dimmap/dimmap.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sanitizers.hpp"
#include "test_files.hpp"

namespace dimmap::test {
namespace {

using Instance = TestInstance;

// Recoveries are not faults: a demoted page is mapped again by the kernel, and the engine
// counts the recovery when the page reaches the head of the eviction queue.
void expect_consistent(const dimmap_stats_t& s) {
  EXPECT_EQ(s.faults, s.misses + s.hits + s.write_faults);
  EXPECT_LE(s.resident_pages, s.buffer_pages);
}

TEST(Engine, ReadsReturnFileContentsThroughASmallBuffer) {
  const size_t pages = 4096;  // 16 MiB file, 1 MiB buffer
  TempFile f(pages);
  Instance in(1 << 20);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512 + 7], pattern_word(p, 7, 0)) << "page " << p;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 20000; ++i) {
    size_t p = rng() % pages, w = rng() % 512;
    ASSERT_EQ(m[p * 512 + w], pattern_word(p, w, 0));
  }
  dimmap_stats_t s = in.stats();
  EXPECT_GE(s.misses, pages);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.eviction_batches, 0u);
  EXPECT_EQ(s.buffer_pages, 256u);
  EXPECT_EQ(s.read_errors, 0u);
  EXPECT_EQ(s.writebacks, 0u) << "read-only mapping never writes";
  expect_consistent(s);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0) << dimmap_last_error();
}

// A page mapped by a PTE now.
bool mapped(const void* addr) { return mapped_pages(addr, 1) == 1; }

TEST(Engine, VictimPagesAreRecoveredWithoutIo) {
  const size_t pages = 1024;
  TempFile f(pages);
  // No hot FIFO, no read-ahead: a plain FIFO with an eviction queue, a page per miss.
  Instance in(64 * kPage, 0.0, 4, 0);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  // A loop of 48 pages touched again and again while new pages stream through the rest of
  // the buffer: loop pages demoted to the eviction queue are touched again before they reach
  // its head, so they are recovered instead of read again.
  size_t fresh = 100;
  for (int round = 0; round < 20; ++round) {
    for (size_t p = 0; p < 48; ++p) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));
    for (int i = 0; i < 16; ++i, ++fresh) ASSERT_EQ(m[fresh * 512], pattern_word(fresh, 0, 0));
  }
  dimmap_stats_t s = in.stats();
  EXPECT_GT(s.recoveries, 0u);
  // Without recoveries the FIFO would read every page of every round again.
  EXPECT_LT(s.misses, 48u * 20u + 16u * 20u - 100) << "recoveries replace reads";
  expect_consistent(s);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}

// Demoted pages are unmapped several eviction batches at a time (each unmap call costs TLB
// shootdowns): 1024 slots and batches of 16 make an eviction queue of 64 pages, unmapped 32
// at a time.
TEST(Engine, DemotedPagesAreUnmappedSeveralBatchesAtATime) {
  const size_t pages = 4096;
  TempFile f(pages);
  Instance in(1024 * kPage, 0.0, 16, 0);  // no read-ahead: every page a fault
  const uint64_t* m = in.map(f, pages, PROT_READ);
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));
  const dimmap_stats_t s = in.stats();
  EXPECT_GE(s.evictions, pages - 1024);
  EXPECT_LE(s.eviction_batches, s.evictions / 32 + 2) << "unmaps of one eviction batch each";
  EXPECT_GE(s.eviction_batches, s.evictions / 32 - 2);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}

// The bulk unmap widens its ranges over gaps between demoted pages only where the gap has no
// mapping to keep: here every gap is a page still in the primary FIFO, which must keep its
// PTE, while the demoted pages lose theirs; touching them again maps them without a fault.
TEST(Engine, BulkUnmapSparesMappedPagesBetweenVictims) {
  const size_t pages = 512;
  TempFile f(pages);
  // 64 slots, no hot FIFO, batches of 4: 56 mapped pages and an eviction queue of 8.
  Instance in(64 * kPage, 0.0, 4);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  for (size_t p = 0; p < 56; p += 2) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));  // oldest
  for (size_t p = 1; p < 56; p += 2) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));
  // Eight new pages demote the eight oldest: even pages 0-14, each between two mapped pages.
  for (size_t p = 200; p < 208; ++p) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));
  for (size_t p = 0; p < 16; p += 2) EXPECT_FALSE(mapped(m + p * 512)) << "demoted page " << p << " kept its PTE";
  for (size_t p = 1; p < 16; p += 2) EXPECT_TRUE(mapped(m + p * 512)) << "page " << p << " between two victims lost its PTE";
  const dimmap_stats_t before = in.stats();
  for (size_t p = 0; p < 16; ++p) ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0));
  const dimmap_stats_t after = in.stats();
  // Only pages that left the buffer meanwhile fault (misses): the others are mapped again
  // by the kernel.
  EXPECT_EQ(after.faults - before.faults, after.misses - before.misses);
  EXPECT_LE(after.misses - before.misses, after.evictions);
  expect_consistent(in.stats());
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}

// Sequential read-ahead: faults on consecutive pages read the following pages in growing
// windows, so a sweep misses on a few pages only; with read-ahead off, on every page.
TEST(Engine, SequentialFaultsReadAhead) {
  const size_t pages = 4096;
  TempFile f(pages);
  for (unsigned readahead : {64u, 0u}) {
    Instance in(4096 * kPage, 0.75, 16, readahead);  // 16 MiB: windows of up to 64 pages
    const uint64_t* m = in.map(f, pages, PROT_READ);
    for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512 + 3], pattern_word(p, 3, 0)) << "page " << p;
    const dimmap_stats_t s = in.stats();
    if (readahead) {
      EXPECT_LT(s.misses, pages / 4) << "a sweep should be read ahead";
      EXPECT_GT(s.prefetched, pages - pages / 4);
    } else {
      EXPECT_EQ(s.misses, pages);
      EXPECT_EQ(s.prefetched, 0u);
    }
    expect_consistent(s);
    ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
  }
}

// A pass that reads one half of a file and writes the other (a merge): two streams in one
// mapping, followed at once; every write reaches the file.
TEST(Engine, InterleavedStreamsAreReadAheadTogether) {
  const size_t pages = 4096, half = pages / 2;
  TempFile f(pages);
  {
    Instance in(4096 * kPage);  // 16 MiB: windows of up to 64 pages
    uint64_t* m = in.map(f, pages);
    for (size_t p = 0; p < half; ++p) m[(half + p) * 512 + 2] = m[p * 512 + 2] ^ 1;
    const dimmap_stats_t s = in.stats();
    EXPECT_LT(s.misses, pages / 4) << "the two streams were not read ahead";
    expect_consistent(s);
    ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
  }
  for (size_t p = 0; p < half; ++p) {
    ASSERT_EQ(f.word_on_disk(p, 2), pattern_word(p, 2, 0)) << "page " << p;
    ASSERT_EQ(f.word_on_disk(half + p, 2), pattern_word(p, 2, 0) ^ 1) << "page " << half + p;
  }
}

// Faults that never follow their predecessor page read no page ahead (DI-MMAP's random access).
TEST(Engine, NonSequentialFaultsDoNotReadAhead) {
  const size_t pages = 4096;
  TempFile f(pages);
  Instance in(1024 * kPage);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  for (size_t i = 0; i < pages; ++i) {
    const size_t p = i * 97 % pages;  // successive pages 97 apart
    ASSERT_EQ(m[p * 512], pattern_word(p, 0, 0)) << "page " << p;
  }
  const dimmap_stats_t s = in.stats();
  EXPECT_EQ(s.prefetched, 0u);
  EXPECT_EQ(s.misses, pages);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}

// Pages read ahead are mapped write-protected like any other: a page is written back only if
// it was written. (Counting a stream's pages dirty to spare the write-protect faults wrote
// back pages it had only read, over the writes of another process: LRIOT lost updates.)
// A pass reads every page and rewrites the even ones; then a write stream into a hole.
TEST(Engine, ReadAheadPagesAreWrittenBackOnlyIfWritten) {
  const size_t pages = 2048;
  TempFile f(pages);
  {
    Instance in(4096 * kPage);  // 16 MiB: windows of up to 64 pages
    uint64_t* m = in.map(f, pages);
    uint64_t sum = 0;
    for (size_t p = 0; p < pages; ++p) {
      sum += m[p * 512 + 7];
      if (p % 2 == 0) m[p * 512 + 7] ^= pattern_word(p, 7, 0) ^ pattern_word(p, 7, 1);
    }
    EXPECT_NE(sum, 0u);
    dimmap_stats_t s = in.stats();
    EXPECT_LT(s.misses, pages / 4) << "the pass was not read ahead";
    // (A service thread handling a stale message may wake a writer early: it faults again.)
    EXPECT_GE(s.write_faults, pages / 2) << "a first write was not seen";
    expect_consistent(s);
    ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
    s = in.stats();
    EXPECT_EQ(s.writebacks, pages / 2) << "pages only read were written back";
  }
  for (size_t p = 0; p < pages; ++p) {
    ASSERT_EQ(f.word_on_disk(p, 7), pattern_word(p, 7, p % 2 == 0 ? 1 : 0)) << "page " << p;
    ASSERT_EQ(f.word_on_disk(p, 8), pattern_word(p, 8, 0)) << "page " << p;
  }

  TempFile hole(pages, "dimmap-sparse", Fill::hole);
  {
    Instance in(4096 * kPage);
    uint64_t* m = in.map(hole, pages);
    for (size_t p = 0; p < pages; ++p) m[p * 512 + 1] = pattern_word(p, 1, 2);
    const dimmap_stats_t s = in.stats();
    EXPECT_GT(s.prefetched, 0u);
    expect_consistent(s);
    ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
  }
  for (size_t p = 0; p < pages; ++p) {
    ASSERT_EQ(hole.word_on_disk(p, 0), 0u) << "page " << p;
    ASSERT_EQ(hole.word_on_disk(p, 1), pattern_word(p, 1, 2)) << "page " << p;
  }
}

TEST(Engine, WritesReachTheFileOnMsyncAndMunmap) {
  const size_t pages = 2048;
  TempFile f(pages);
  Instance in(128 * kPage);
  uint64_t* m = in.map(f, pages);
  for (size_t p = 0; p < pages; p += 3) m[p * 512 + 1] = pattern_word(p, 1, 5);
  ASSERT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0) << dimmap_last_error();
  for (size_t p = 0; p < pages; ++p)
    ASSERT_EQ(f.word_on_disk(p, 1), pattern_word(p, 1, p % 3 == 0 ? 5 : 0)) << "page " << p;
  dimmap_stats_t s = in.stats();
  EXPECT_GE(s.writebacks, (pages + 2) / 3);
  EXPECT_EQ(s.dirty_pages, 0u);
  EXPECT_LT(s.write_ios, s.writebacks + 1);
  // Writes after the msync are written by munmap.
  for (size_t p = 1; p < pages; p += 7) m[p * 512 + 2] = pattern_word(p, 2, 9);
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
  for (size_t p = 1; p < pages; p += 7) ASSERT_EQ(f.word_on_disk(p, 2), pattern_word(p, 2, 9));
  EXPECT_EQ(f.word_on_disk(0, 2), pattern_word(0, 2, 0));
}

TEST(Engine, ReadsOfCleanPagesAreNotWrittenBack) {
  const size_t pages = 512;
  TempFile f(pages);
  Instance in(64 * kPage);
  uint64_t* m = in.map(f, pages);
  uint64_t sum = 0;
  for (size_t p = 0; p < pages; ++p) sum += m[p * 512];
  EXPECT_NE(sum, 0u);
  ASSERT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0);
  dimmap_stats_t s = in.stats();
  EXPECT_EQ(s.writebacks, 0u);
  EXPECT_EQ(s.write_faults, 0u);
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0);
}

// Many threads read and write random pages with a buffer 1/16 of the file; each word carries
// its (page, word) tag so any misplaced page is caught, and each thread owns the words it
// writes so the final file can be compared with a reference.
TEST(Engine, RandomizedIntegrityUnderEvictionPressure) {
  const size_t pages = 4096, words = 512;  // 16 MiB file, 1 MiB buffer
  const int threads = 16, ops = 20000;
  TempFile f(pages);
  Instance in(pages * kPage / 16, 0.75, 8);
  uint64_t* m = in.map(f, pages);
  std::vector<uint32_t> version(pages * words, 0);  // written by the owning thread only
  std::atomic<long> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      for (int i = 0; i < ops; ++i) {
        const size_t p = rng() % pages, w = rng() % words;
        const size_t idx = p * words + w;
        const uint64_t v = __atomic_load_n(&m[idx], __ATOMIC_RELAXED);
        if (!tag_matches(v, p, w)) mismatches++;
        if (idx % threads != static_cast<size_t>(t)) continue;
        if ((v & 0xffffff) != version[idx]) mismatches++;  // the owner's last write must be there
        if (rng() % 4 == 0) {
          const uint32_t nv = ++version[idx];
          __atomic_store_n(&m[idx], pattern_word(p, w, nv), __ATOMIC_RELAXED);
        }
        if (i % 5000 == 4999 && t == 0) {
          EXPECT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0) << dimmap_last_error();
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  ASSERT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0) << dimmap_last_error();
  dimmap_stats_t s = in.stats();
  expect_consistent(s);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GT(s.writebacks, 0u);
  EXPECT_EQ(s.read_errors + s.write_errors, 0u);
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0) << dimmap_last_error();
  long disk_mismatches = 0;
  std::vector<uint64_t> buf(words);
  for (size_t p = 0; p < pages; ++p) {
    ASSERT_EQ(pread(f.fd(), buf.data(), kPage, static_cast<off_t>(p * kPage)), static_cast<ssize_t>(kPage));
    for (size_t w = 0; w < words; ++w) disk_mismatches += buf[w] != pattern_word(p, w, version[p * words + w]);
  }
  EXPECT_EQ(disk_mismatches, 0);
}

TEST(Engine, HolesOfASparseFileAreFilledWithoutReading) {
  const size_t pages = 1024;
  TempFile hole(pages, "dimmap-sparse", Fill::hole);
  Instance in(64 * kPage);  // too small to read ahead (windows are at most 1/64 of a buffer)
  uint64_t* m = in.map(hole, pages);
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512 + 3], 0u);
  dimmap_stats_t s = in.stats();
  EXPECT_EQ(s.zero_fills, pages);
  EXPECT_EQ(s.bytes_read, 0u);
  // Written pages go to the file when evicted and come back from it, not as zeros.
  for (size_t p = 0; p < pages; ++p) m[p * 512 + 3] = pattern_word(p, 3, 1);
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512 + 3], pattern_word(p, 3, 1)) << "page " << p;
  s = in.stats();
  EXPECT_GT(s.bytes_read, 0u);
  expect_consistent(s);
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0);
  EXPECT_EQ(hole.word_on_disk(700, 3), pattern_word(700, 3, 1));
}

TEST(Engine, PrefetchedPagesArriveMappedWithoutFaults) {
  const size_t pages = 512;
  TempFile f(pages);
  Instance in(256 * kPage);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  struct iovec ranges[2] = {{const_cast<uint64_t*>(m) + 10 * 512, 20 * kPage},
                            {const_cast<uint64_t*>(m) + 100 * 512, 30 * kPage}};
  ASSERT_EQ(dimmap_prefetchv(ranges, 2), 0) << dimmap_last_error();
  for (int i = 0; i < 2000 && in.stats().resident_pages < 50; ++i) usleep(1000);  // all read
  dimmap_stats_t before = in.stats();
  ASSERT_EQ(before.prefetched, 50u);
  EXPECT_EQ(before.faults, 0u) << "read-ahead is not a fault";
  for (size_t p = 10; p < 30; ++p) ASSERT_EQ(m[p * 512 + 1], pattern_word(p, 1, 0));
  for (size_t p = 100; p < 130; ++p) ASSERT_EQ(m[p * 512 + 1], pattern_word(p, 1, 0));
  dimmap_stats_t after = in.stats();
  EXPECT_EQ(after.faults, 0u) << "prefetched pages were mapped before they were touched";
  ASSERT_EQ(m[200 * 512], pattern_word(200, 0, 0));
  EXPECT_EQ(in.stats().misses, 1u);
  int x = 0;
  EXPECT_EQ(dimmap_prefetch(&x, kPage), -ENOMEM);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}

// Read-ahead stores adjacent pages in runs (one read, one pwrite): they must still
// be write-protected, so first writes are tracked and reach the file, and a partial last
// page of the file reads as zeros past its end.
TEST(Engine, PrefetchedRunsTrackWritesAndZeroTheFilesTail) {
  const size_t pages = 300;
  TempFile f(pages);
  const size_t tail = 100;  // the file ends 100 bytes into page 299
  ASSERT_EQ(ftruncate(f.fd(), static_cast<off_t>((pages - 1) * kPage + tail)), 0);
  Instance in(1024 * kPage);  // a call reads ahead at most a quarter of the buffer
  uint64_t* m = in.map(f, pages);
  struct iovec ranges[2] = {{m, 120 * kPage}, {m + 200 * 512, 100 * kPage}};
  ASSERT_EQ(dimmap_prefetchv(ranges, 2), 0) << dimmap_last_error();
  for (int i = 0; i < 2000 && in.stats().resident_pages < 220; ++i) usleep(1000);
  ASSERT_EQ(in.stats().prefetched, 220u);
  for (size_t p = 0; p < 120; ++p) ASSERT_EQ(m[p * 512 + 5], pattern_word(p, 5, 0)) << "page " << p;
  for (size_t p = 200; p < pages - 1; ++p) ASSERT_EQ(m[p * 512 + 5], pattern_word(p, 5, 0)) << "page " << p;
  const uint64_t* last = m + (pages - 1) * 512;
  for (size_t w = 0; w < tail / 8; ++w) ASSERT_EQ(last[w], pattern_word(pages - 1, w, 0));
  for (size_t w = (tail + 7) / 8; w < 512; ++w) ASSERT_EQ(last[w], 0u) << "word " << w << " past the end";
  EXPECT_EQ(in.stats().faults, 0u) << "read-ahead pages were mapped before they were touched";
  for (size_t p = 30; p < 40; ++p) m[p * 512 + 9] = pattern_word(p, 9, 1);
  dimmap_stats_t s = in.stats();
  EXPECT_GE(s.write_faults, 10u) << "read-ahead pages must be mapped write-protected";
  expect_consistent(s);
  ASSERT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0) << dimmap_last_error();
  for (size_t p = 25; p < 45; ++p) {
    uint64_t v = 0;
    ASSERT_EQ(pread(f.fd(), &v, 8, static_cast<off_t>(p * kPage + 9 * 8)), 8);
    EXPECT_EQ(v, pattern_word(p, 9, p >= 30 && p < 40 ? 1 : 0)) << "page " << p;
  }
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0);
  struct stat st {};
  ASSERT_EQ(fstat(f.fd(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>((pages - 1) * kPage + tail)) << "the file grew";
}

TEST(Engine, SystemCallsReadAndWriteMappedMemory) {
  const size_t pages = 256;
  TempFile src(pages), dst(pages, "dimmap-dst");
  Instance in(32 * kPage);
  uint64_t* m = in.map(src, pages);
  // The kernel touches the mapping on our behalf (kernel-mode faults).
  ASSERT_EQ(pwrite(dst.fd(), reinterpret_cast<char*>(m) + 100 * kPage, kPage, 0), static_cast<ssize_t>(kPage));
  EXPECT_EQ(dst.word_on_disk(0, 3), pattern_word(100, 3, 0));
  ASSERT_EQ(pread(dst.fd(), reinterpret_cast<char*>(m) + 200 * kPage, kPage, 5 * kPage), static_cast<ssize_t>(kPage));
  EXPECT_EQ(m[200 * 512 + 3], pattern_word(5, 3, 0));
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0);
  EXPECT_EQ(src.word_on_disk(200, 3), pattern_word(5, 3, 0));
}

TEST(Engine, InstancesHaveIndependentBuffers) {
  const size_t pages = 512;
  TempFile a(pages, "dimmap-a"), b(pages, "dimmap-b");
  Instance small(32 * kPage, 0.75, 16, 0), large(1024 * kPage, 0.75, 16, 0);  // a page per miss
  const uint64_t* ma = small.map(a, pages, PROT_READ);
  const uint64_t* mb = large.map(b, pages, PROT_READ);
  for (int round = 0; round < 2; ++round)
    for (size_t p = 0; p < pages; ++p) {
      ASSERT_EQ(ma[p * 512], pattern_word(p, 0, 0));
      ASSERT_EQ(mb[p * 512], pattern_word(p, 0, 0));
    }
  dimmap_stats_t sa = small.stats(), sb = large.stats();
  EXPECT_EQ(sb.misses, pages) << "the large buffer holds the whole file";
  EXPECT_GE(sa.misses, 2 * pages - 64) << "the small one thrashes";
  EXPECT_EQ(sa.buffer_pages, 32u);
  EXPECT_EQ(sb.buffer_pages, 1024u);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(ma), pages * kPage), 0);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(mb), pages * kPage), 0);
}

TEST(Engine, DestroyRefusesWhileMapped) {
  TempFile f(16);
  Instance in(16 * kPage);
  uint64_t* m = in.map(f, 16);
  EXPECT_EQ(dimmap_instance_destroy(in.inst), -EBUSY);
  EXPECT_EQ(dimmap_munmap(m, 8 * kPage), -1) << "partial unmap is refused";
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(dimmap_munmap(m, 16 * kPage), 0);
}

// ---- bad input: clear errors, nothing mapped ----

class BadInput : public ::testing::Test {
 protected:
  void expect_refused(void* p, int err, const char* words) {
    EXPECT_EQ(p, MAP_FAILED);
    EXPECT_EQ(errno, err);
    EXPECT_NE(std::string(dimmap_last_error()).find(words), std::string::npos) << dimmap_last_error();
  }
  TempFile f{8};
  Instance in{16 * kPage};
};

TEST_F(BadInput, ZeroLength) { expect_refused(dimmap_instance_mmap(in.inst, nullptr, 0, PROT_READ, MAP_SHARED, f.fd(), 0), EINVAL, "length is zero"); }

TEST_F(BadInput, UnalignedOffset) {
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ, MAP_SHARED, f.fd(), 100), EINVAL, "offset");
}

TEST_F(BadInput, MappingPastTheEndOfTheFile) {
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, 9 * kPage, PROT_READ, MAP_SHARED, f.fd(), 0), EINVAL,
                 "past the end");
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ, MAP_SHARED, f.fd(), 8 * kPage), EINVAL,
                 "past the end");
}

TEST_F(BadInput, ReadOnlyFileMappedWritable) {
  int ro = open(f.path().c_str(), O_RDONLY);
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), EACCES,
                 "read-write");
  close(ro);
}

TEST_F(BadInput, WritablePrivateMapping) {
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd(), 0),
                 ENOTSUP, "MAP_PRIVATE");
}

TEST_F(BadInput, NotAFile) {
  int dir = open("/", O_RDONLY | O_DIRECTORY);
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ, MAP_SHARED, dir, 0), ENODEV, "not a regular");
  close(dir);
  expect_refused(dimmap_instance_mmap(in.inst, nullptr, kPage, PROT_READ, MAP_SHARED, -1, 0), EBADF, "descriptor");
}

TEST(EngineErrors, UnmapOfUnknownAddressIsRefused) {
  int x = 0;
  EXPECT_EQ(dimmap_munmap(&x, kPage), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(dimmap_msync(&x, kPage, MS_SYNC), -1);
}

// ---- I/O errors surface as SIGBUS in the faulting thread, never a hang ----

thread_local sigjmp_buf* bus_jump = nullptr;
void on_sigbus(int, siginfo_t*, void*) {
  if (bus_jump) siglongjmp(*bus_jump, 1);
  _exit(99);
}

TEST(EngineErrors, FailedFillRaisesSigbusAndIsCounted) {
  const size_t pages = 64;
  TempFile f(pages);
  Instance in(16 * kPage);
  const uint64_t* m = in.map(f, pages, PROT_READ);
  ASSERT_EQ(ftruncate(f.fd(), 32 * kPage), 0);  // the file shrinks under the mapping: reads past it fail
  struct sigaction sa = {}, old = {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  ASSERT_EQ(sigaction(SIGBUS, &sa, &old), 0);
  std::atomic<int> buses{0}, good{0};
  std::thread t([&] {
    sigjmp_buf jb;
    bus_jump = &jb;
    if (sigsetjmp(jb, 1) == 0) {
      volatile uint64_t v = m[40 * 512];
      (void)v;
    } else {
      buses++;
    }
    if (m[3 * 512] == pattern_word(3, 0, 0)) good++;  // pages inside the file still work
    bus_jump = nullptr;
  });
  t.join();
  sigaction(SIGBUS, &old, nullptr);
  EXPECT_EQ(buses.load(), 1);
  EXPECT_EQ(good.load(), 1);
  dimmap_stats_t s = in.stats();
  EXPECT_EQ(s.read_errors, 1u);
  ASSERT_EQ(dimmap_munmap(const_cast<uint64_t*>(m), pages * kPage), 0);
}


// In-thread fault service (DIMMAP_FAULTS=in-thread): the faulting thread fills its own miss.
// Reads and first writes behave as with service threads; what differs is documented: a
// system call on a non-resident page fails with EFAULT instead of waiting for it.
TEST(InThreadFaults, FillsMissesTracksWritesAndFailsSystemCallsOnMissingPages) {
  if (kThreadSanitizer) GTEST_SKIP() << kInThreadUnderTsan;
  const size_t pages = 1024;
  TempFile f(pages);
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  cfg.buffer_bytes = 64 * kPage;
  cfg.in_thread_faults = 1;
  dimmap_instance* inst = nullptr;
  ASSERT_EQ(dimmap_instance_create(&cfg, &inst), 0) << dimmap_last_error();
  void* p = dimmap_instance_mmap(inst, nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd(), 0);
  ASSERT_NE(p, MAP_FAILED) << dimmap_last_error();
  auto* m = static_cast<uint64_t*>(p);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < pages; i += 4) {
        EXPECT_EQ(m[i * 512 + 5], pattern_word(i, 5, 0));
        if (i % 3 == 0) m[i * 512 + 5] = pattern_word(i, 5, 1);
      }
    });
  for (auto& th : threads) th.join();
  dimmap_stats_t s{};
  ASSERT_EQ(dimmap_instance_stats(inst, &s), 0);
  EXPECT_GE(s.misses, pages);
  EXPECT_GE(s.write_faults, 1u);
  EXPECT_GT(s.evictions, 0u);
  // A page long evicted: the kernel's copy from it cannot wait for the engine.
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const ssize_t n = write(pipefd[1], m + 1 * 512, 64);
  EXPECT_EQ(n, -1);
  EXPECT_EQ(errno, EFAULT);
  close(pipefd[0]);
  close(pipefd[1]);
  ASSERT_EQ(dimmap_munmap(p, pages * kPage), 0) << dimmap_last_error();
  ASSERT_EQ(dimmap_instance_destroy(inst), 0);
  for (size_t i = 0; i < pages; ++i)
    ASSERT_EQ(f.word_on_disk(i, 5), pattern_word(i, 5, i % 3 == 0 ? 1 : 0)) << "page " << i;
}

}  // namespace
}  // namespace dimmap::test
