// How far the pagecache engine's buffer yields to a memory-cgroup limit: the arithmetic of
// pages_to_lend (the engine under a real cgroup: apps/lriot/tests/lriot_yield_test.py).
#include <gtest/gtest.h>

#include "pagecache_yield.hpp"

namespace {

using dimmap::detail::pagecache::pages_to_lend;
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

}  // namespace
