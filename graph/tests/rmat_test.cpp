// R-MAT generator: bijections, determinism across threads and slices, initiator statistics.
#include <graph/rmat.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "test_util.hpp"

namespace graph {
namespace {

TEST(Bijection, IsAPermutationOfItsDomain) {
  for (uint64_t n : {1ull, 2ull, 3ull, 17ull, 1000ull, 4096ull, 5000ull}) {
    Bijection f(n, 42);
    std::vector<bool> seen(n, false);
    for (uint64_t x = 0; x < n; ++x) {
      const uint64_t y = f(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << "n=" << n << " collision at " << x;
      seen[y] = true;
    }
  }
}

TEST(Bijection, DependsOnKey) {
  Bijection a(1 << 16, 1), b(1 << 16, 2);
  int same = 0;
  for (uint64_t x = 0; x < 1000; ++x) same += a(x) == b(x);
  EXPECT_LT(same, 10);
}

TEST(Rmat, SameEdgesForAnyThreadCountAndSlicing) {
  RmatParams p;
  p.scale = 12;
  for (RmatVariant variant : {RmatVariant::graph500, RmatVariant::ssca}) {
    p.variant = variant;
    RmatGenerator gen(p);
    ASSERT_EQ(gen.edges(), 16u << 12);
    std::vector<Edge> one(gen.edges()), many(gen.edges());
    gen.generate(0, gen.edges(), one.data(), 1);
    // Uneven slices with different thread counts.
    for (uint64_t first = 0, k = 0; first < gen.edges(); ++k) {
      const uint64_t n = std::min<uint64_t>(gen.edges() - first, 777 + 1000 * k);
      gen.generate(first, n, many.data() + first, 1 + static_cast<int>(k % 4));
      first += n;
    }
    for (uint64_t i = 0; i < gen.edges(); ++i) {
      ASSERT_EQ(one[i].u, many[i].u) << i;
      ASSERT_EQ(one[i].v, many[i].v) << i;
      ASSERT_GE(one[i].u, 0);
      ASSERT_LT(static_cast<uint64_t>(one[i].u), gen.vertices());
      ASSERT_LT(static_cast<uint64_t>(one[i].v), gen.vertices());
    }
  }
}

TEST(Rmat, SeedsAndVariantsDiffer) {
  RmatParams p;
  p.scale = 10;
  RmatGenerator a(p);
  p.seed = 2;
  RmatGenerator b(p);
  p.seed = 1;
  p.variant = RmatVariant::ssca;
  RmatGenerator c(p);
  int ab = 0, ac = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    ab += a.edge(i).u == b.edge(i).u && a.edge(i).v == b.edge(i).v;
    ac += a.edge(i).u == c.edge(i).u && a.edge(i).v == c.edge(i).v;
  }
  EXPECT_LT(ab, 20);
  EXPECT_LT(ac, 900);  // noise changes some quadrant choices
}

// Without permutation, the top bit of (u, v) picks the first-level quadrant: its frequencies
// must match the initiator A, B, C, D.
TEST(Rmat, QuadrantFrequenciesMatchTheInitiator) {
  RmatParams p;
  p.scale = 14;
  p.permute_vertices = false;
  RmatGenerator gen(p);
  const uint64_t top = uint64_t{1} << (p.scale - 1);
  double count[4] = {0, 0, 0, 0};
  std::vector<Edge> e(gen.edges());
  gen.generate(0, gen.edges(), e.data(), 2);
  for (const Edge& x : e) count[((static_cast<uint64_t>(x.u) & top) ? 2 : 0) + ((static_cast<uint64_t>(x.v) & top) ? 1 : 0)]++;
  const double m = static_cast<double>(gen.edges());
  EXPECT_NEAR(count[0] / m, 0.57, 0.01);
  EXPECT_NEAR(count[1] / m, 0.19, 0.01);
  EXPECT_NEAR(count[2] / m, 0.19, 0.01);
  EXPECT_NEAR(count[3] / m, 0.05, 0.01);
}

// The shuffle only reorders: the multiset of edges is the same with and without it.
TEST(Rmat, ShuffleOnlyReorders) {
  RmatParams p;
  p.scale = 10;
  RmatGenerator shuffled(p);
  p.shuffle_edges = false;
  RmatGenerator plain(p);
  std::multiset<std::pair<int64_t, int64_t>> a, b;
  bool same_order = true;
  for (uint64_t i = 0; i < plain.edges(); ++i) {
    a.insert({shuffled.edge(i).u, shuffled.edge(i).v});
    b.insert({plain.edge(i).u, plain.edge(i).v});
    same_order = same_order && shuffled.edge(i).u == plain.edge(i).u;
  }
  EXPECT_EQ(a, b);
  EXPECT_FALSE(same_order);
}

TEST(Rmat, FileDoesNotDependOnThreadsOrSliceSize) {
  test::TempDir dir("rmat-file");
  RmatParams p;
  p.scale = 11;
  RmatGenerator gen(p);
  write_rmat(gen, dir / "a.bin", EdgeFormat::bin, 1, false, 1 << 20);
  write_rmat(gen, dir / "b.bin", EdgeFormat::bin, 4, false, 1000);
  std::ifstream fa(dir / "a.bin", std::ios::binary), fb(dir / "b.bin", std::ios::binary);
  const std::string a((std::istreambuf_iterator<char>(fa)), {}), b((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_EQ(a.size(), gen.edges() * 16);
  EXPECT_TRUE(a == b);
  const auto edges = test::read_all_edges(dir / "a.bin", EdgeFormat::bin);
  ASSERT_EQ(edges.size(), gen.edges());
  EXPECT_EQ(edges[123].u, gen.edge(123).u);
  EXPECT_EQ(edges[123].v, gen.edge(123).v);
}

TEST(Rmat, RejectsBadParameters) {
  RmatParams p;
  p.scale = 0;
  EXPECT_THROW(RmatGenerator{p}, GraphError);
  p.scale = 10;
  p.a = 0.9;
  EXPECT_THROW(RmatGenerator{p}, GraphError);
}

}  // namespace
}  // namespace graph
