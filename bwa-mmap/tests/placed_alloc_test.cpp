// placed_alloc_test.cpp - the wrapped malloc family routes big blocks to a placement and
// keeps malloc's contract (contents, zeroing, realloc moves, free) on every placement.
#include <bwammap/placed_alloc.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "test_util.hpp"

namespace bwammap {
namespace {

using testing::TempDir;

constexpr size_t kMin = 64 << 10;  // routing threshold in these tests
constexpr size_t kBig = 3 << 20;   // bigger than the 1 MiB dimmap test buffer

class PlacedAllocTest : public ::testing::TestWithParam<std::string> {
 protected:
  TempDir storage_;
  TempDir tmpfs_{"bwa-mmap-test", "/dev/shm"};
  dimmap::Placement placement() { return testing::test_placement(GetParam(), storage_.path(), tmpfs_.path()); }
};

void fill(uint8_t* p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng());
}

// Compares p[0..n) with the same pseudo-random sequence; returns the first mismatch or n.
size_t check(const uint8_t* p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != static_cast<uint8_t>(rng())) return i;
  return n;
}

TEST_P(PlacedAllocTest, BigBlocksArePlacedSmallOnesAreNot) {
  PlacedHeap heap(placement(), kMin);
  void* small = heap_malloc(kMin - 1);
  void* big = heap_malloc(kMin);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(is_placed(small));
  EXPECT_TRUE(is_placed(big));
  EXPECT_EQ(heap.stats().live_regions, 1u);
  EXPECT_EQ(heap.stats().live_bytes, kMin);
  heap_free(small);
  heap_free(big);
  EXPECT_EQ(heap.stats().live_regions, 0u);
  EXPECT_EQ(heap.stats().placed_allocations, 1u);
}

TEST_P(PlacedAllocTest, ContentsSurviveEvictionAndCallocIsZero) {
  PlacedHeap heap(placement(), kMin);
  auto* a = static_cast<uint8_t*>(heap_malloc(kBig));
  auto* z = static_cast<uint8_t*>(heap_calloc(kBig / 8, 8));
  ASSERT_TRUE(a && z);
  fill(a, kBig, 1);
  // Touch z after a, so that on a small buffer a's pages are pushed out first.
  size_t nonzero = 0;
  for (size_t i = 0; i < kBig; ++i) nonzero += z[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  EXPECT_EQ(check(a, kBig, 1), kBig);
  heap_free(a);
  heap_free(z);
}

TEST_P(PlacedAllocTest, ReallocKeepsContentsAcrossEveryMove) {
  PlacedHeap heap(placement(), kMin);
  // Grow from the C heap across the threshold, then within and beyond the placed block,
  // then shrink: the prefix must be intact at each step.
  size_t n = 1000;
  bool placed = false;  // once placed, a block stays placed while it shrinks
  auto* p = static_cast<uint8_t*>(heap_malloc(n));
  fill(p, n, 7);
  for (size_t next : {kMin / 2, kMin + 100, kMin + 200, size_t{2} << 20, kBig + 12345, size_t{kMin}, size_t{500}}) {
    std::vector<uint8_t> expect(p, p + std::min(n, next));
    p = static_cast<uint8_t*>(heap_realloc(p, next));
    ASSERT_NE(p, nullptr) << "realloc to " << next;
    EXPECT_EQ(std::memcmp(p, expect.data(), expect.size()), 0) << "realloc to " << next;
    placed = placed || next >= kMin;
    EXPECT_EQ(is_placed(p), placed) << "size " << next;
    if (next > n) fill(p + n, next - n, static_cast<uint32_t>(next));  // new bytes are ours to set
    n = next;
  }
  heap_free(p);
  EXPECT_EQ(heap.stats().live_regions, 0u);
  EXPECT_GT(heap.stats().moved_bytes, 0u);
}

TEST_P(PlacedAllocTest, NothingIsLeftInTheStorageDirectory) {
  {
    PlacedHeap heap(placement(), kMin);
    void* p = heap_malloc(kBig);
    ASSERT_TRUE(is_placed(p));
    // Scratch files are unlinked at once: the directory looks empty even now.
    EXPECT_TRUE(storage_.entries().empty());
    EXPECT_TRUE(tmpfs_.entries().empty());
    heap_free(p);
  }
  EXPECT_TRUE(storage_.entries().empty());
}

INSTANTIATE_TEST_SUITE_P(Placements, PlacedAllocTest, ::testing::ValuesIn(testing::kPlacementNames));

TEST(PlacedAlloc, DisarmedHeapNeverPlaces) {
  void* p = heap_malloc(kBig);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(is_placed(p));
  heap_free(p);
}

TEST(PlacedAlloc, BlocksOutliveTheScopeUntilFreed) {
  TempDir storage;
  void* p = nullptr;
  {
    PlacedHeap heap(dimmap::Placement::mmap(storage.path()), kMin);
    p = heap_malloc(kBig);
    std::memset(p, 0xab, kBig);
  }
  ASSERT_TRUE(is_placed(p));
  EXPECT_EQ(static_cast<uint8_t*>(p)[kBig - 1], 0xab);
  void* q = heap_realloc(p, kBig * 2);  // disarmed: grows into the C heap
  EXPECT_FALSE(is_placed(q));
  EXPECT_EQ(static_cast<uint8_t*>(q)[kBig - 1], 0xab);
  heap_free(q);
  EXPECT_EQ(placed_heap_stats().live_regions, 0u);
}

TEST(PlacedAlloc, FailureToPlaceReturnsNullAndExplains) {
  // A storage directory that does not exist: malloc must fail like malloc does.
  PlacedHeap heap(dimmap::Placement::mmap("/nonexistent/bwa-mmap-test"), kMin, /*fatal_failures=*/false);
  errno = 0;
  EXPECT_EQ(heap_malloc(kBig), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_NE(PlacedHeap::last_failure().find("/nonexistent/bwa-mmap-test"), std::string::npos);
  EXPECT_EQ(heap_calloc(SIZE_MAX / 2, 4), nullptr);  // overflow
}

TEST(PlacedAlloc, FailureToPlaceIsFatalByDefault) {
  EXPECT_EXIT(
      {
        PlacedHeap heap(dimmap::Placement::mmap("/nonexistent/bwa-mmap-test"), kMin);
        heap_malloc(kBig);
      },
      ::testing::ExitedWithCode(1), "cannot place a 3M array.*/nonexistent/bwa-mmap-test");
}

TEST(PlacedAlloc, OnlyOneScopeAtATime) {
  TempDir storage;
  PlacedHeap heap(dimmap::Placement::mmap(storage.path()), kMin);
  EXPECT_THROW({ PlacedHeap second(dimmap::Placement::mmap(storage.path()), kMin); }, dimmap::Error);
}

}  // namespace
}  // namespace bwammap
