// Unit tests of LRIOT's keyed permutations and page sequences against brute-force references.
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>
#include <lriot/sequence.hpp>

#include <algorithm>
#include <set>
#include <vector>

namespace lriot {
namespace {

TEST(Permutation, IsABijectionForAnySize) {
  for (uint64_t n : {1ull, 2ull, 3ull, 7ull, 64ull, 1000ull, 4097ull, 65536ull, 100003ull}) {
    Permutation perm(n, 42);
    std::vector<uint64_t> out(n);
    for (uint64_t x = 0; x < n; ++x) out[x] = perm(x);
    std::sort(out.begin(), out.end());
    for (uint64_t x = 0; x < n; ++x) ASSERT_EQ(out[x], x) << "n=" << n;
  }
}

TEST(Permutation, DependsOnTheKeyAndIsRepeatable) {
  Permutation a(100000, 1), b(100000, 1), c(100000, 2);
  uint64_t same = 0, fixed_points = 0;
  for (uint64_t x = 0; x < 100000; ++x) {
    ASSERT_EQ(a(x), b(x));
    same += a(x) == c(x);
    fixed_points += a(x) == x;
  }
  EXPECT_LT(same, 100u) << "different keys give unrelated permutations";
  EXPECT_LT(fixed_points, 100u) << "the permutation actually shuffles";
}

SequenceParams uniform(uint64_t pages, unsigned procs) {
  SequenceParams p;
  p.pages = pages;
  p.procs = procs;
  p.pattern = Pattern::uniform;
  return p;
}

TEST(PageSequence, UniformVisitsEveryPageOnceAcrossProcesses) {
  const SequenceParams params = uniform(1000, 3);
  const uint64_t share = 1000 / 3;
  std::set<uint64_t> all;
  for (unsigned p = 0; p < 3; ++p) {
    PageSequence seq(params, p);
    std::set<uint64_t> mine;
    for (uint64_t k = 0; k < share; ++k) {
      const Op op = seq(k);
      ASSERT_LT(op.page, 1000u);
      EXPECT_FALSE(op.write);
      mine.insert(op.page);
    }
    EXPECT_EQ(mine.size(), share) << "unique pages within a process";
    for (uint64_t page : mine) EXPECT_TRUE(all.insert(page).second) << "page " << page << " shared by processes";
    // After its share the process starts over with the same pages.
    EXPECT_EQ(seq(share).page, seq(0).page);
  }
  EXPECT_EQ(all.size(), 3 * share);
}

TEST(PageSequence, IsRepeatableAndDependsOnTheSeed) {
  SequenceParams params = uniform(5000, 2);
  params.write_fraction = 0.5;
  PageSequence a(params, 1), b(params, 1);
  params.seed = 2;
  PageSequence c(params, 1);
  uint64_t same = 0;
  for (uint64_t k = 0; k < 2000; ++k) {
    ASSERT_EQ(a(k).page, b(k).page);
    ASSERT_EQ(a(k).write, b(k).write);
    same += a(k).page == c(k).page;
  }
  EXPECT_LT(same, 20u);
}

TEST(PageSequence, UniformIsSpreadEvenlyOverTheFile) {
  PageSequence seq(uniform(100000, 1), 0);
  std::vector<uint64_t> buckets(10);
  for (uint64_t k = 0; k < 50000; ++k) ++buckets[seq(k).page / 10000];
  for (uint64_t b : buckets) EXPECT_NEAR(static_cast<double>(b), 5000.0, 250.0);
}

TEST(PageSequence, PartitionedSends95PercentToTheHotTenthAndKeepsProcessesApart) {
  SequenceParams params;
  params.pages = 20000;
  params.procs = 2;
  params.pattern = Pattern::partitioned;
  ASSERT_EQ(hot_pages(params), 2000u);
  std::set<uint64_t> seen[2];
  uint64_t hot = 0, total = 0;
  for (unsigned p = 0; p < 2; ++p) {
    PageSequence seq(params, p);
    for (uint64_t k = 0; k < 100000; ++k) {
      const Op op = seq(k);
      ASSERT_LT(op.page, 20000u);
      hot += op.page < 2000;
      ++total;
      seen[p].insert(op.page);
    }
  }
  EXPECT_NEAR(static_cast<double>(hot) / static_cast<double>(total), 0.95, 0.005);
  for (uint64_t page : seen[0]) EXPECT_EQ(seen[1].count(page), 0u) << "page " << page;
  // Each process reaches its whole half of the hot range.
  EXPECT_EQ(std::count_if(seen[0].begin(), seen[0].end(), [](uint64_t pg) { return pg < 2000; }), 1000);
}

TEST(PageSequence, WriteFractionIsHonoured) {
  for (double f : {0.0, 0.1, 0.5, 1.0}) {
    SequenceParams params = uniform(100000, 1);
    params.write_fraction = f;
    PageSequence seq(params, 0);
    uint64_t writes = 0;
    for (uint64_t k = 0; k < 100000; ++k) writes += seq(k).write;
    EXPECT_NEAR(static_cast<double>(writes) / 100000.0, f, 0.005) << "fraction " << f;
  }
}

TEST(PageSequence, RejectsFilesTooSmallToGiveEachProcessItsOwnPages) {
  EXPECT_THROW(check_sequence_params(uniform(3, 4)), dimmap::Error);
  EXPECT_NO_THROW(check_sequence_params(uniform(4, 4)));
  SequenceParams params = uniform(30, 4);
  params.pattern = Pattern::partitioned;  // 3 hot pages for 4 processes
  EXPECT_THROW(check_sequence_params(params), dimmap::Error);
  params.partition_space = 0.0;
  EXPECT_THROW(check_sequence_params(params), dimmap::Error);
  params = uniform(100, 1);
  params.write_fraction = 1.5;
  EXPECT_THROW(check_sequence_params(params), dimmap::Error);
  EXPECT_THROW(PageSequence(uniform(100, 2), 2), dimmap::Error) << "process index out of range";
}

}  // namespace
}  // namespace lriot
