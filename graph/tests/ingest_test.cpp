// Ingest: CSR contents against a std::set reference, out-of-core runs, input errors.
#include <graph/ingest.hpp>
#include <graph/rmat.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "test_util.hpp"

namespace graph {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// The CSR must hold exactly both directions of every non-loop input edge, once, sorted.
void expect_matches_reference(const CsrGraph& g, const std::vector<Edge>& edges) {
  std::set<std::pair<uint64_t, uint64_t>> ref;
  for (const Edge& e : edges)
    if (e.u != e.v) {
      ref.insert({static_cast<uint64_t>(e.u), static_cast<uint64_t>(e.v)});
      ref.insert({static_cast<uint64_t>(e.v), static_cast<uint64_t>(e.u)});
    }
  ASSERT_EQ(g.info.edges, ref.size());
  auto it = ref.begin();
  for (uint64_t v = 0; v < g.info.vertices; ++v)
    for (uint64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e, ++it) {
      ASSERT_EQ(it->first, v);
      ASSERT_EQ(it->second, g.targets[e]);
    }
  EXPECT_TRUE(it == ref.end());
}

IngestOptions options(const std::string& edges, const std::string& out, EdgeFormat f = EdgeFormat::bin) {
  IngestOptions o;
  o.edges_path = edges;
  o.format = f;
  o.out_dir = out;
  o.progress = false;
  o.threads = 2;
  return o;
}

TEST(Ingest, HandMadeGraphWithLoopsDuplicatesAndIsolatedVertices) {
  test::TempDir dir("ingest-hand");
  // 0-1, 1-2 twice (once reversed), a self-loop on 3, vertex 4 isolated, 5-6.
  const std::vector<Edge> edges = {{0, 1}, {1, 2}, {2, 1}, {3, 3}, {6, 5}, {1, 2}};
  test::write_edges(dir / "e.bin", edges);
  auto o = options(dir / "e.bin", dir / "g");
  o.vertices = 8;  // 7 isolated as well
  const IngestReport r = ingest_edges(o);
  const CsrGraph g = CsrGraph::load(dir / "g");
  EXPECT_EQ(g.info.vertices, 8u);
  EXPECT_EQ(g.info.input_edges, 6u);
  EXPECT_EQ(g.info.self_loops, 1u);
  EXPECT_EQ(g.info.undirected_edges(), 3u);
  EXPECT_EQ(g.info.duplicates(), 2u);
  EXPECT_EQ(g.view().degree(1), 2u);
  EXPECT_EQ(g.view().degree(3), 0u);
  EXPECT_EQ(g.view().degree(7), 0u);
  EXPECT_EQ(r.runs, 0u);
  expect_matches_reference(g, edges);
}

TEST(Ingest, OutOfCoreRunsGiveIdenticalFiles) {
  test::TempDir dir("ingest-ooc");
  RmatParams p;
  p.scale = 12;
  RmatGenerator gen(p);
  write_rmat(gen, dir / "e.bin", EdgeFormat::bin, 2, false);
  auto in_memory = options(dir / "e.bin", dir / "mem");
  const IngestReport a = ingest_edges(in_memory);
  auto out_of_core = options(dir / "e.bin", dir / "ooc");
  out_of_core.memory_bytes = 64 << 10;  // 4096 keys per run: ~32 runs
  out_of_core.tmp_dir = dir / "runs";
  std::filesystem::create_directories(out_of_core.tmp_dir);
  const IngestReport b = ingest_edges(out_of_core);
  EXPECT_EQ(a.runs, 0u);
  EXPECT_GT(b.runs, 10u);
  EXPECT_TRUE(std::filesystem::is_empty(out_of_core.tmp_dir)) << "sort runs must be removed";
  EXPECT_TRUE(slurp(vertex_file(dir / "mem")) == slurp(vertex_file(dir / "ooc")));
  EXPECT_TRUE(slurp(edge_file(dir / "mem")) == slurp(edge_file(dir / "ooc")));
  const CsrGraph g = CsrGraph::load(dir / "ooc");
  EXPECT_EQ(g.info.input_edges, gen.edges());
  expect_matches_reference(g, test::read_all_edges(dir / "e.bin", EdgeFormat::bin));
}

TEST(Ingest, TextAndHdf5GiveTheSameGraphAsBinary) {
  test::TempDir dir("ingest-formats");
  const auto edges = test::rmat_edges(9);
  test::write_edges(dir / "e.bin", edges);
  test::write_edges(dir / "e.txt", edges, EdgeFormat::text);
  ingest_edges(options(dir / "e.bin", dir / "bin"));
  ingest_edges(options(dir / "e.txt", dir / "txt", EdgeFormat::text));
  EXPECT_TRUE(slurp(edge_file(dir / "bin")) == slurp(edge_file(dir / "txt")));
  EXPECT_TRUE(slurp(vertex_file(dir / "bin")) == slurp(vertex_file(dir / "txt")));
  if (hdf5_available()) {
    test::write_edges(dir / "e.h5", edges, EdgeFormat::hdf5);
    ingest_edges(options(dir / "e.h5", dir / "h5", EdgeFormat::hdf5));
    EXPECT_TRUE(slurp(edge_file(dir / "bin")) == slurp(edge_file(dir / "h5")));
  }
}

TEST(Ingest, IdBeyondVerticesIsAnErrorAndLeavesNoGraph) {
  test::TempDir dir("ingest-range");
  test::write_edges(dir / "e.bin", {{0, 1}, {1, 9}});
  auto o = options(dir / "e.bin", dir / "g");
  o.vertices = 5;
  try {
    ingest_edges(o);
    FAIL() << "expected an error";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("edge 1 (1, 9)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--vertices=5"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "g")) << "a failed ingest must not leave its output directory";
  EXPECT_THROW(CsrInfo::read(dir / "g"), GraphError);
}

// No edges (or only self-loops, which are dropped) is an error naming the file, not a 0-edge graph.
TEST(Ingest, NoEdgesIsAnErrorNamingTheFile) {
  test::TempDir dir("ingest-empty");
  test::write_edges(dir / "empty.bin", {});
  test::write_edges(dir / "loops.bin", {{3, 3}, {4, 4}});
  for (const char* name : {"empty.bin", "loops.bin"}) {
    try {
      ingest_edges(options(dir / name, dir / "g"));
      FAIL() << name << ": expected an error";
    } catch (const GraphError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + "': no edges"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "g")) << name;
  }
  // A directory that was there before stays, without CSR files.
  std::filesystem::create_directories(dir / "kept");
  EXPECT_THROW(ingest_edges(options(dir / "empty.bin", dir / "kept")), GraphError);
  EXPECT_TRUE(std::filesystem::is_empty(dir / "kept"));
}

TEST(Ingest, NonNumericTextIsAnError) {
  test::TempDir dir("ingest-text");
  std::ofstream(dir / "e.txt") << "0 1\n1 two\n";
  EXPECT_THROW(ingest_edges(options(dir / "e.txt", dir / "g", EdgeFormat::text)), GraphError);
  EXPECT_FALSE(std::filesystem::exists(info_file(dir / "g")));
}

TEST(Ingest, TruncatedGraphFilesAreDetected) {
  test::TempDir dir("ingest-trunc");
  test::write_edges(dir / "e.bin", {{0, 1}, {1, 2}});
  ingest_edges(options(dir / "e.bin", dir / "g"));
  std::filesystem::resize_file(edge_file(dir / "g"), 4);
  EXPECT_THROW(CsrInfo::read(dir / "g"), GraphError);
}

}  // namespace
}  // namespace graph
