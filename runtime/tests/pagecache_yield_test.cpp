// How far the pagecache engine's buffer yields to a memory-cgroup limit: the arithmetic of
// pages_to_lend (the engine under a real cgroup: apps/lriot/tests/lriot_yield_test.py).
#include <gtest/gtest.h>

#include "pagecache_yield.hpp"

namespace {

using dimmap::detail::pagecache::others_clean_cache;
using dimmap::detail::pagecache::pages_to_lend;
using dimmap::detail::pagecache::parse_file_cache;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = 1 << 20;

TEST(PagesToLend, WithinTheHeadroomLendsTheShortfallMore) {
  // 100M limit, 8M headroom, usage 95M: 3M short.
  EXPECT_EQ(pages_to_lend(95 * kMiB, 100 * kMiB, 8 * kMiB, 0, 0, kPage), 3 * kMiB / kPage);
  EXPECT_EQ(pages_to_lend(95 * kMiB, 100 * kMiB, 8 * kMiB, 10, 0, kPage), 10 + 3 * kMiB / kPage);
  EXPECT_EQ(pages_to_lend(95 * kMiB + 1, 100 * kMiB, 8 * kMiB, 0, 0, kPage), 3 * kMiB / kPage + 1);  // rounds up
  EXPECT_EQ(pages_to_lend(120 * kMiB, 100 * kMiB, 8 * kMiB, 0, 0, kPage), 28 * kMiB / kPage);  // over the limit
}

TEST(PagesToLend, ABufferNotYetFullLendsItsUnusedSlotsFirst) {
  // Lending only the shortfall would leave the pages in use as they are: the slots not in use
  // absorb it.
  EXPECT_EQ(pages_to_lend(95 * kMiB, 100 * kMiB, 8 * kMiB, 0, 4000, kPage), 4000 + 3 * kMiB / kPage);
  EXPECT_EQ(pages_to_lend(95 * kMiB, 100 * kMiB, 8 * kMiB, 5000, 4000, kPage), 5000 + 3 * kMiB / kPage);
  // Below the limit, unused slots are not lent.
  EXPECT_EQ(pages_to_lend(88 * kMiB, 100 * kMiB, 8 * kMiB, 0, 4000, kPage), 0u);
}

TEST(PagesToLend, BetweenOneAndTwoHeadroomsBelowNothingChanges) {
  for (uint64_t usage : {84 * kMiB, 88 * kMiB, 92 * kMiB})
    EXPECT_EQ(pages_to_lend(usage, 100 * kMiB, 8 * kMiB, 500, 0, kPage), 500u) << usage;
}

TEST(PagesToLend, FurtherBelowTakesTheSurplusBackButNoMoreThanWasLent) {
  // 70M used: 14M beyond two headrooms.
  EXPECT_EQ(pages_to_lend(70 * kMiB, 100 * kMiB, 8 * kMiB, 5000, 0, kPage), 5000 - 14 * kMiB / kPage);
  EXPECT_EQ(pages_to_lend(70 * kMiB, 100 * kMiB, 8 * kMiB, 100, 300, kPage), 0u);
  EXPECT_EQ(pages_to_lend(0, 100 * kMiB, 8 * kMiB, 0, 0, kPage), 0u);
}

// memory.stat as Linux 6.18 writes it (abridged), v2 and v1: v1's local counts are not the
// cgroup's with its children, its total_* ones are.
TEST(ParseFileCache, ReadsV2NamesAndV1HierarchicalTotals) {
  const auto v2 = parse_file_cache("anon 1000\nfile 9000\nfile_mapped 300\nfile_dirty 20\nfile_writeback 10\n"
                                   "shmem 500\ninactive_anon 4\nactive_anon 5\ninactive_file 6000\n"
                                   "active_file 2500\nunevictable 0\n",
                                   true);
  EXPECT_EQ(v2.lru, 8500u);  // shmem is in "file" but not on the file LRU lists
  EXPECT_EQ(v2.mapped, 300u);
  EXPECT_EQ(v2.dirty, 20u);
  EXPECT_EQ(v2.writeback, 10u);
  const auto v1 = parse_file_cache("cache 1\nmapped_file 2\ndirty 3\nwriteback 4\ninactive_file 5\nactive_file 6\n"
                                   "total_cache 900\ntotal_mapped_file 70\ntotal_dirty 8\ntotal_writeback 9\n"
                                   "total_inactive_file 500\ntotal_active_file 300",  // no newline at the end
                                   false);
  EXPECT_EQ(v1.lru, 800u);
  EXPECT_EQ(v1.mapped, 70u);
  EXPECT_EQ(v1.dirty, 8u);
  EXPECT_EQ(v1.writeback, 9u);
  EXPECT_EQ(parse_file_cache("", true).lru, 0u);
  EXPECT_EQ(parse_file_cache("garbage\n\nactive_file\n", true).lru, 0u);
}

TEST(OthersCleanCache, TakesAwayMappedDirtyWritebackAndTheBuffersUnmappedPages) {
  const auto c = parse_file_cache("inactive_file 6000\nactive_file 4000\nfile_mapped 1000\nfile_dirty 200\n"
                                  "file_writeback 100\n",
                                  true);
  EXPECT_EQ(others_clean_cache(c, 0), 8700u);
  EXPECT_EQ(others_clean_cache(c, 700), 8000u);
  EXPECT_EQ(others_clean_cache(c, 20000), 0u);  // never below nothing
}

}  // namespace
