// Level-asynchronous BFS: hand-made graphs, Boost.Graph levels on R-MAT graphs for every
// placement and thread count, the overflow path, the in-process distributed protocol,
// and the verifier catching broken results.
#include <graph/bfs.hpp>
#include <graph/bfs_files.hpp>
#include <graph/bfs_run.hpp>
#include <graph/ingest.hpp>
#include <graph/rmat.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "test_util.hpp"

namespace graph {
namespace {

struct Result {
  std::vector<int64_t> levels, parents;
};

std::string ingest(const test::TempDir& dir, const std::string& name, const std::vector<Edge>& edges,
                   uint64_t vertices = 0) {
  test::write_edges(dir / (name + ".bin"), edges);
  IngestOptions o;
  o.edges_path = dir / (name + ".bin");
  o.out_dir = dir / name;
  o.vertices = vertices;
  o.progress = false;
  ingest_edges(o);
  return o.out_dir;
}

struct RunConfig {
  std::string preset = "in-memory";
  std::string backend = "mmap";
  std::string memory_dir = "/dev/shm";
  int threads = 2;
  std::string buffer = "2M";
  unsigned sort_batch = 1;
  unsigned ranges = 1;
};

// One search on one process, through the same files and placements as the bfs tool.
Result run_search(const std::string& graph_dir, const std::string& storage, uint64_t root, const RunConfig& s) {
  const CsrInfo info = CsrInfo::read(graph_dir);
  const auto plan = make_bfs_plan();
  dimmap::PlacementSettings& set = plan->settings();
  set.backend = s.backend;
  set.storage = storage;
  set.memory_dir = s.memory_dir.empty() ? "anonymous" : s.memory_dir;
  set.buffer = s.buffer;
  set.placement = s.preset;
  const Partition part = Partition::block_partition(info.vertices, 1, 0);
  BfsFiles files(graph_dir, info, part, resolve_placements(*plan, 0), s.threads, s.ranges);
  LevelAsyncBfs bfs(part, files.graph(), files.arrays(), s.threads, {s.sort_batch, s.ranges});
  Result r;
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second search checks reset()
    bfs.reset();
    bfs.run({{static_cast<vertex_t>(root), static_cast<vertex_t>(root), 0}});
  }
  for (uint64_t v = 0; v < info.vertices; ++v) {
    r.levels.push_back(bfs.level(v));
    r.parents.push_back(bfs.parent(v));
  }
  const ValidationReport report = validate_bfs(part, files.graph(), r.levels.data(), r.parents.data(), root);
  EXPECT_TRUE(report.ok()) << report.first_error;
  return r;
}

void expect_levels(const std::vector<int64_t>& got, const std::vector<int64_t>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t v = 0; v < got.size(); ++v) ASSERT_EQ(got[v], want[v]) << what << ": vertex " << v;
}

// Hand-made graphs whose levels follow from their construction.
TEST(BfsHandMade, Path) {
  test::TempDir dir("path");
  std::vector<Edge> edges;
  for (int64_t i = 0; i + 1 < 10; ++i) edges.push_back({i + 1, i});
  const std::string g = ingest(dir, "g", edges);
  const Result from0 = run_search(g, dir.str(), 0, {});
  const Result from5 = run_search(g, dir.str(), 5, {});
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(from0.levels[static_cast<size_t>(i)], i);
    EXPECT_EQ(from5.levels[static_cast<size_t>(i)], std::abs(i - 5));
  }
  EXPECT_EQ(from0.parents[0], 0);
  EXPECT_EQ(from0.parents[7], 6);
}

TEST(BfsHandMade, Star) {
  test::TempDir dir("star");
  std::vector<Edge> edges;
  for (int64_t i = 1; i <= 20; ++i) edges.push_back({0, i});
  const std::string g = ingest(dir, "g", edges);
  const Result center = run_search(g, dir.str(), 0, {"in-memory", "mmap", "/dev/shm", 8});
  const Result leaf = run_search(g, dir.str(), 3, {});
  for (int64_t i = 1; i <= 20; ++i) {
    EXPECT_EQ(center.levels[static_cast<size_t>(i)], 1);
    EXPECT_EQ(center.parents[static_cast<size_t>(i)], 0);
    EXPECT_EQ(leaf.levels[static_cast<size_t>(i)], i == 3 ? 0 : 2);
  }
  EXPECT_EQ(leaf.levels[0], 1);
}

TEST(BfsHandMade, BinaryTree) {
  test::TempDir dir("tree");
  std::vector<Edge> edges;
  for (int64_t i = 1; i < 1023; ++i) edges.push_back({(i - 1) / 2, i});
  const std::string g = ingest(dir, "g", edges);
  const Result r = run_search(g, dir.str(), 0, {"in-memory", "mmap", "", 4});
  for (int64_t i = 0; i < 1023; ++i) {
    int64_t depth = 0;
    for (int64_t x = i + 1; x > 1; x /= 2) ++depth;
    ASSERT_EQ(r.levels[static_cast<size_t>(i)], depth) << i;
    ASSERT_EQ(r.parents[static_cast<size_t>(i)], i == 0 ? 0 : (i - 1) / 2) << i;  // a tree has one BFS tree
  }
}

// Levels from 254 on do not fit the cache byte: they are decided in the progress word,
// and a vertex first reached that deep can still be corrected to a shallow level.
TEST(BfsHandMade, LevelsBeyondTheCacheByteAreExact) {
  test::TempDir dir("deep");
  constexpr int64_t kPath = 1200;
  std::vector<Edge> edges;
  for (int64_t i = 0; i + 1 < kPath; ++i) edges.push_back({i, i + 1});
  for (int64_t i = 0; i + 3 < kPath; i += 97) edges.push_back({i + 3, i});  // short cuts
  for (int64_t i = 0; i < kPath; i += 5) edges.push_back({i, kPath + i / 5});  // leaves
  edges.push_back({kPath - 1, 300});  // a long detour back: vertex 300 meets both ends
  const uint64_t vertices = kPath + kPath / 5;
  const std::string g = ingest(dir, "g", edges, vertices);
  for (const uint64_t root : {uint64_t{0}, uint64_t{700}}) {
    const auto want = test::boost_levels(edges, vertices, root);
    ASSERT_GT(*std::max_element(want.begin(), want.end()), 300) << "the graph must reach past level 254";
    RunConfig in_order{"in-memory", "mmap", "/dev/shm", 8};
    expect_levels(run_search(g, dir.str(), root, in_order).levels, want, "chunk order");
    RunConfig by_range = in_order;
    by_range.sort_batch = 4, by_range.ranges = 8;
    expect_levels(run_search(g, dir.str(), root, by_range).levels, want, "sorted batches, 8 ranges");
  }
}

TEST(BfsHandMade, TwoComponentsIsolatedVerticesLoopsAndDuplicates) {
  test::TempDir dir("components");
  // Component A: 0-1-2 (with a duplicate and a reversed duplicate), component B: 3-4,
  // self-loops on 1 and 5, vertices 5..7 isolated.
  const std::vector<Edge> edges = {{0, 1}, {1, 2}, {1, 0}, {0, 1}, {1, 1}, {3, 4}, {5, 5}};
  const std::string g = ingest(dir, "g", edges, 8);
  const Result r = run_search(g, dir.str(), 2, {"in-memory", "mmap", "/dev/shm", 3});
  const std::vector<int64_t> want = {2, 1, 0, -1, -1, -1, -1, -1};
  expect_levels(r.levels, want, "components");
  EXPECT_EQ(r.parents[2], 2);
  EXPECT_EQ(r.parents[0], 1);
  EXPECT_EQ(r.parents[4], -1);
  expect_levels(r.levels, test::boost_levels(edges, 8, 2), "components vs boost");
  const Result b = run_search(g, dir.str(), 4, {});
  expect_levels(b.levels, {-1, -1, -1, 1, 0, -1, -1, -1}, "component B");
}

// R-MAT graphs against Boost.Graph on every placement, with oversubscribed threads.
class BfsVsBoost : public ::testing::TestWithParam<RunConfig> {};
void PrintTo(const RunConfig& c, std::ostream* os) {
  *os << c.preset << "/" << c.backend << "/" << c.threads << " threads/sorted batches of " << c.sort_batch << "/"
      << c.ranges << " vertex ranges";
}

TEST_P(BfsVsBoost, LevelsEqualBoostOnRmat) {
  const RunConfig s = GetParam();
  test::TempDir dir("boost-" + s.preset + "-" + s.backend + "-" + std::to_string(s.threads));
  for (RmatVariant variant : {RmatVariant::graph500, RmatVariant::ssca}) {
    const auto edges = test::rmat_edges(12, 8, variant, 7);
    const std::string g = ingest(dir, to_string(variant), edges, 1 << 12);
    const CsrInfo info = CsrInfo::read(g);
    for (uint64_t root : choose_roots(g, info, 3, 11)) {
      const Result r = run_search(g, dir.str(), root, s);
      expect_levels(r.levels, test::boost_levels(edges, 1 << 12, root),
                    std::string(to_string(variant)) + " root " + std::to_string(root));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Placements, BfsVsBoost,
                         ::testing::Values(RunConfig{"in-memory", "mmap", "", 1}, RunConfig{"in-memory", "mmap", "/dev/shm", 4},
                                           RunConfig{"in-memory", "mmap", "", 3, "2M", 2, 64},
                                           RunConfig{"semi-external", "mmap", "/dev/shm", 16, "2M", 64},
                                           RunConfig{"semi-external", "mmap", "/dev/shm", 16, "2M", 4, 16},
                                           RunConfig{"full-external", "mmap", "/dev/shm", 8, "2M", 3},
                                           RunConfig{"semi-external", "dimmap", "/dev/shm", 8, "2M", 64},
                                           RunConfig{"semi-external", "dimmap", "/dev/shm", 8, "2M", 1, 8},
                                           RunConfig{"full-external", "dimmap", "/dev/shm", 16},
                                           RunConfig{"full-external", "dimmap", "/dev/shm", 4, "2M", 4, 32}),
                         [](const auto& info) {
                           std::string name = info.param.preset + "_" + info.param.backend + "_" +
                                              std::to_string(info.param.threads) + "threads_batch" +
                                              std::to_string(info.param.sort_batch) + "_ranges" +
                                              std::to_string(info.param.ranges) +
                                              (info.param.memory_dir.empty() ? "_anonymous" : "");
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Correctness under eviction pressure: every file on a DI-MMAP buffer of 16 pages (the
// minimum) while 8 threads write the progress and cache files concurrently.
TEST(BfsUnderEviction, FullExternalDimmapMinimumBuffer) {
  test::TempDir dir("eviction");
  const auto edges = test::rmat_edges(12, 8);
  const std::string g = ingest(dir, "g", edges, 1 << 12);
  const uint64_t root = choose_roots(g, CsrInfo::read(g), 1, 4)[0];
  const Result r = run_search(g, dir.str(), root, {"full-external", "dimmap", "/dev/shm", 8, "64K"});
  expect_levels(r.levels, test::boost_levels(edges, 1 << 12, root), "64K buffer, 8 threads");
}

// A queue file too small for the frontier: visitors spill to the thread stacks, levels stay exact.
TEST(Bfs, QueueOverflowKeepsLevelsExact) {
  test::TempDir dir("overflow");
  const auto edges = test::rmat_edges(14, 8);
  const CsrGraph g = CsrGraph::load(ingest(dir, "g", edges, 1 << 14));
  const Partition part = Partition::block_partition(g.info.vertices, 1, 0);
  std::vector<uint64_t> progress(g.info.vertices);
  std::vector<uint8_t> cache(g.info.vertices);
  std::vector<char> queue(4 * 4096);
  const LocalGraph lg{g.offsets.data(), g.targets.data(), 0};
  const uint64_t root = choose_roots(dir / "g", g.info, 1, 3)[0];
  const auto want = test::boost_levels(edges, g.info.vertices, root);
  for (const BfsOrder order : {BfsOrder{1, 1}, BfsOrder{2, 8}}) {
    LevelAsyncBfs bfs(part, lg, {progress.data(), cache.data(), queue.data(), queue.size()}, 4, order);
    bfs.reset();
    bfs.run({{static_cast<vertex_t>(root), static_cast<vertex_t>(root), 0}});
    EXPECT_GT(bfs.counters().overflow, 0u);
    for (uint64_t v = 0; v < g.info.vertices; ++v) ASSERT_EQ(bfs.level(v), want[v]) << v << ", ranges " << order.ranges;
  }
}

// The (level, vertex range) queue order is what makes a search on storage read the graph
// about once per level: with the graph on a DI-MMAP buffer a quarter of its size, a search
// in vertex-range order reads a fraction of what it reads chunk by chunk, the levels equal.
// On the userfaultfd engine, which holds the buffer to its size at every miss: the pagecache
// engine holds it to within a keeper round, and with a graph of 450 pages and a buffer of 112
// its counts follow the rounds more than the order.
TEST(BfsOrder, VertexRangesReadTheGraphAboutOncePerLevel) {
  setenv("DIMMAP_ENGINE", "uffd", 1);
  test::TempDir dir("order");
  const auto edges = test::rmat_edges(14, 16);
  const std::string g = ingest(dir, "g", edges, 1 << 14);
  const CsrInfo info = CsrInfo::read(g);
  const uint64_t graph_bytes = (info.vertices + 1) * sizeof(uint64_t) + info.edges * sizeof(vertex_t);
  const uint64_t root = choose_roots(g, info, 1, 9)[0];
  const auto want = test::boost_levels(edges, info.vertices, root);
  const int64_t levels = *std::max_element(want.begin(), want.end()) + 1;
  auto bytes_read = [&](const BfsOrder& order) {
    const auto plan = make_bfs_plan();
    dimmap::PlacementSettings& set = plan->settings();
    set.backend = "dimmap";
    set.storage = dir.str();
    set.memory_dir = "anonymous";
    set.buffer = std::to_string(graph_bytes / 4);
    set.placement = "semi-external";
    const Partition part = Partition::block_partition(info.vertices, 1, 0);
    const BfsPlacements where = resolve_placements(*plan, 0);
    BfsFiles files(g, info, part, where, 4, order.ranges);
    LevelAsyncBfs bfs(part, files.graph(), files.arrays(), 4, order);
    bfs.reset();
    const uint64_t before = where[BfsFile::edge].buffer->stats().bytes_read;
    bfs.run({{static_cast<vertex_t>(root), static_cast<vertex_t>(root), 0}});
    const uint64_t read = where[BfsFile::edge].buffer->stats().bytes_read - before;
    for (uint64_t v = 0; v < info.vertices; ++v) EXPECT_EQ(bfs.level(v), want[v]) << v;
    // The queue file sized by queue_bytes() holds the search: overflowing visitors are
    // expanded unsorted and without read-ahead (when it was too small, some searches on
    // storage were 3-10x slower).
    EXPECT_EQ(bfs.counters().overflow, 0u);
    return read;
  };
  const uint64_t unordered = bytes_read({1, 1});
  const uint64_t by_range = bytes_read({4, 16});
  // About once per level: 0.6 of the graph a level when run alone, 1.06 once under
  // ThreadSanitizer beside the whole suite; the bound is half again, still well below what
  // chunk-by-chunk order reads (3.6-3.8 a level).
  EXPECT_LE(by_range, static_cast<uint64_t>(levels) * graph_bytes * 3 / 2);
  EXPECT_LT(2 * by_range, unordered) << "graph " << graph_bytes << " bytes, " << levels << " levels";
  std::cout << "graph " << graph_bytes << " bytes, " << levels << " levels: chunk by chunk read " << unordered
            << " bytes, by vertex range " << by_range << "\n";
  unsetenv("DIMMAP_ENGINE");
}

// The distributed protocol in one process: three partitions exchange outboxes by hand.
TEST(Bfs, PartitionedEnginesMatchBoost) {
  test::TempDir dir("partitioned");
  const auto edges = test::rmat_edges(12);
  const std::string gdir = ingest(dir, "g", edges, 1 << 12);
  const CsrInfo info = CsrInfo::read(gdir);
  const int ranks = 3;
  std::vector<std::unique_ptr<BfsFiles>> files;
  std::vector<std::unique_ptr<LevelAsyncBfs>> engines;
  std::vector<Partition> parts;
  const auto plan = make_bfs_plan();
  for (int r = 0; r < ranks; ++r) {
    parts.push_back(Partition::block_partition(info.vertices, ranks, r));
    files.push_back(std::make_unique<BfsFiles>(gdir, info, parts.back(), resolve_placements(*plan, r), 2));
    engines.push_back(std::make_unique<LevelAsyncBfs>(parts.back(), files.back()->graph(), files.back()->arrays(), 2));
  }
  const uint64_t root = choose_roots(gdir, info, 1, 5)[0];
  std::vector<std::vector<RemoteVisit>> inbox(ranks);
  inbox[static_cast<size_t>(parts[0].owner(root))].push_back({static_cast<vertex_t>(root), static_cast<vertex_t>(root), 0});
  for (auto& e : engines) e->reset();
  int rounds = 0;
  for (bool work = true; work; ++rounds) {
    std::vector<std::vector<RemoteVisit>> next(ranks);
    work = false;
    for (int r = 0; r < ranks; ++r) {
      engines[static_cast<size_t>(r)]->run(inbox[static_cast<size_t>(r)]);
      auto out = engines[static_cast<size_t>(r)]->take_outboxes();
      for (int d = 0; d < ranks; ++d) {
        work = work || !out[static_cast<size_t>(d)].empty();
        next[static_cast<size_t>(d)].insert(next[static_cast<size_t>(d)].end(), out[static_cast<size_t>(d)].begin(),
                                            out[static_cast<size_t>(d)].end());
      }
    }
    inbox.swap(next);
  }
  EXPECT_GT(rounds, 2);
  std::vector<int64_t> levels, parents;
  for (int r = 0; r < ranks; ++r)
    for (uint64_t i = 0; i < parts[static_cast<size_t>(r)].count(); ++i) {
      levels.push_back(engines[static_cast<size_t>(r)]->level(i));
      parents.push_back(engines[static_cast<size_t>(r)]->parent(i));
    }
  expect_levels(levels, test::boost_levels(edges, info.vertices, root), "3 partitions");
  for (int r = 0; r < ranks; ++r) {
    const auto report = validate_bfs(parts[static_cast<size_t>(r)], files[static_cast<size_t>(r)]->graph(),
                                     levels.data(), parents.data(), root);
    EXPECT_TRUE(report.ok()) << report.first_error;
  }
}

// The verifier must catch each kind of broken result.
TEST(BfsValidate, CatchesBrokenResults) {
  test::TempDir dir("validate");
  // 0-1, 0-2, 1-3, 2-3, 3-4, and 5-6 in another component.
  const std::vector<Edge> edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {5, 6}};
  const CsrGraph g = CsrGraph::load(ingest(dir, "g", edges));
  const Partition part = Partition::block_partition(g.info.vertices, 1, 0);
  const LocalGraph lg{g.offsets.data(), g.targets.data(), 0};
  const std::vector<int64_t> levels = {0, 1, 1, 2, 3, -1, -1}, parents = {0, 0, 0, 1, 3, -1, -1};
  EXPECT_TRUE(validate_bfs(part, lg, levels.data(), parents.data(), 0).ok());
  auto check = [&](std::vector<int64_t> l, std::vector<int64_t> p, std::vector<int> rules, const char* what) {
    const ValidationReport r = validate_bfs(part, lg, l.data(), p.data(), 0);
    EXPECT_FALSE(r.ok()) << what;
    for (int rule : rules) EXPECT_GT(r.by_check[rule], 0u) << what << ": check " << rule << "; first: " << r.first_error;
  };
  check({1, 1, 1, 2, 3, -1, -1}, parents, {1}, "root not at level 0");
  check(levels, {0, 0, 0, 1, 4, -1, -1}, {2, 5}, "4 is its own parent");
  check({0, 1, 1, 2, 4, -1, -1}, parents, {2, 3}, "level skips one");
  check({0, 1, 1, 3, 4, -1, -1}, {0, 0, 0, 4, 3, -1, -1}, {2}, "cycle 3 <-> 4");
  check({0, 1, 1, 2, 3, -1, -1}, {0, 0, 0, 1, 1, -1, -1}, {2, 5}, "parent 1 of 4 is two levels up, not adjacent");
  check({0, 1, 1, 2, -1, -1, -1}, {0, 0, 0, 1, -1, -1, -1}, {4}, "4 left out of the tree");
  check({0, 1, 1, 2, 3, 4, -1}, {0, 0, 0, 1, 3, 4, -1}, {4, 5}, "5 hangs off 4 without an edge");
  check({0, 1, 1, 2, 2, -1, -1}, {0, 0, 0, 1, 1, -1, -1}, {5}, "1-4 is not an edge");
  check({0, 0, 1, 2, 3, -1, -1}, {0, 1, 0, 1, 3, -1, -1}, {1}, "a second vertex at level 0");
  check(levels, {0, 0, 0, 1, -1, -1, -1}, {0}, "level without parent");
  // Another valid BFS tree: 3 may hang off 2 instead of 1.
  EXPECT_TRUE(validate_bfs(part, lg, levels.data(), std::vector<int64_t>{0, 0, 0, 2, 3, -1, -1}.data(), 0).ok());
}

// The driver: roots of degree >= 1, output files as in DESIGN.md.
TEST(BfsRun, RootsAndOutputFiles) {
  test::TempDir dir("run");
  const std::vector<Edge> edges = {{0, 1}, {1, 2}, {4, 5}};
  const std::string g = ingest(dir, "g", edges, 7);  // 3 and 6 isolated
  const CsrInfo info = CsrInfo::read(g);
  const auto roots = choose_roots(g, info, 10, 1);
  EXPECT_EQ(roots.size(), 5u);
  for (uint64_t r : roots) EXPECT_TRUE(r != 3 && r != 6) << r;

  BfsOptions opt;
  opt.graph_dir = g;
  opt.source = 1;
  opt.validate = true;
  opt.levels_out = dir / "levels.txt";
  opt.parents_out = dir / "parents.txt";
  SerialComm comm;
  std::ostringstream out;
  const BfsSummary s = run_bfs(opt, comm, out);
  EXPECT_TRUE(s.all_valid);
  ASSERT_EQ(s.results.size(), 1u);
  EXPECT_EQ(s.results[0].visited, 3u);
  EXPECT_EQ(s.results[0].edges, 2u);
  EXPECT_EQ(s.results[0].level_counts, (std::vector<uint64_t>{1, 2}));
  std::ifstream lf(dir / "levels.txt"), pf(dir / "parents.txt");
  std::vector<int64_t> l, p;
  for (int64_t x; lf >> x;) l.push_back(x);
  for (int64_t x; pf >> x;) p.push_back(x);
  EXPECT_EQ(l, (std::vector<int64_t>{1, 0, 1, -1, -1, -1, -1}));
  EXPECT_EQ(p, (std::vector<int64_t>{1, 1, 1, -1, -1, -1, -1}));
  EXPECT_NE(out.str().find("harmonic mean TEPS"), std::string::npos);

  opt.source = 7;
  EXPECT_THROW(run_bfs(opt, comm, out), GraphError);
}

}  // namespace
}  // namespace graph
