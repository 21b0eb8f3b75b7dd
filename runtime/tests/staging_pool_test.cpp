// The read-ahead staging pool: first-fit blocks, the longest block when none is long enough,
// and pages returned in any order.
#include <gtest/gtest.h>

#include "staging_pool.hpp"

namespace dimmap::detail {
namespace {

constexpr size_t kPage = 4096;

TEST(StagingPool, HandsOutFirstFitBlocksOfTheWantedLength) {
  StagingPool pool;
  ASSERT_EQ(pool.init(200, kPage), 0);
  StagingPool::Block a = pool.find(64);
  EXPECT_EQ(a.first, 0u);
  EXPECT_EQ(a.pages, 64u);
  pool.take(a.first, 10);  // a run shorter than the block it was offered
  StagingPool::Block b = pool.find(64);
  EXPECT_EQ(b.first, 10u);
  EXPECT_EQ(b.pages, 64u);
  pool.take(b.first, 64);
  pool.give(a.first, 10);
  EXPECT_EQ(pool.find(8).first, 0u) << "returned pages are reused first";
  EXPECT_EQ(pool.find(64).first, 74u) << "the 10 pages in front are too short for 64";
  // Distinct blocks do not overlap in memory.
  EXPECT_EQ(pool.at(74) - pool.at(10), static_cast<ptrdiff_t>(64 * kPage));
}

TEST(StagingPool, OffersTheLongestBlockWhenNoneIsLongEnough) {
  StagingPool pool;
  ASSERT_EQ(pool.init(130, kPage), 0);  // spans three bitmap words, the last one partly
  pool.take(0, 130);
  pool.give(3, 5);
  pool.give(60, 9);   // across the first word boundary
  pool.give(127, 3);  // the pool's tail
  StagingPool::Block b = pool.find(64);
  EXPECT_EQ(b.first, 60u);
  EXPECT_EQ(b.pages, 9u);
  EXPECT_EQ(pool.find(3).first, 3u);
  pool.take(60, 9);
  pool.take(3, 5);
  b = pool.find(4);
  EXPECT_EQ(b.first, 127u);
  EXPECT_EQ(b.pages, 3u);
  pool.take(127, 3);
  EXPECT_EQ(pool.find(1).pages, 0u) << "a full pool has no block";
}

}  // namespace
}  // namespace dimmap::detail
