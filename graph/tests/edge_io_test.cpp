// Edge readers and writers: formats, round trips and the errors users see.
#include <dimmap/support/atomic_file.hpp>
#include <graph/edge_io.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.hpp"

namespace graph {
namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of(const std::string& path, EdgeFormat format) {
  try {
    test::read_all_edges(path, format);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

TEST(EdgeIo, TextWithCommentsBlankLinesAndTabs) {
  test::TempDir dir("text");
  write_text(dir / "g.txt", "# a comment\n% another\n0 1\n\n  2\t3  \n4 5 # trailing\n6 7");
  const auto e = test::read_all_edges(dir / "g.txt", EdgeFormat::text);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].u, 2);
  EXPECT_EQ(e[1].v, 3);
  EXPECT_EQ(e[3].u, 6);
  EXPECT_EQ(e[3].v, 7);
}

TEST(EdgeIo, TextErrorsNameFileAndLine) {
  test::TempDir dir("text-errors");
  const std::pair<std::string, std::string> cases[] = {
      {"0 1\n1 x\n", "line 2: non-numeric"}, {"0 1\n2\n", "line 2: expected two"},
      {"0 -1\n", "line 1: negative"},       {"0 1 2\n", "line 1: more than two"},
      {"0 1.5\n", "line 1: non-numeric"},   {"99999999999999999999 1\n", "line 1: vertex id out of range"}};
  for (const auto& [text, expected] : cases) {
    write_text(dir / "bad.txt", text);
    const std::string msg = error_of(dir / "bad.txt", EdgeFormat::text);
    EXPECT_NE(msg.find("bad.txt"), std::string::npos) << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << "input '" << text << "' gave: " << msg;
  }
}

TEST(EdgeIo, LongTextFileAcrossBufferBoundaries) {
  test::TempDir dir("text-long");
  std::vector<Edge> edges;
  for (int64_t i = 0; i < 200000; ++i) edges.push_back({i * 7919 % 100003, i});
  test::write_edges(dir / "g.txt", edges, EdgeFormat::text);
  const auto back = test::read_all_edges(dir / "g.txt", EdgeFormat::text);
  ASSERT_EQ(back.size(), edges.size());
  for (size_t i = 0; i < edges.size(); ++i) ASSERT_TRUE(back[i].u == edges[i].u && back[i].v == edges[i].v) << i;
}

TEST(EdgeIo, BinaryOddLengthIsRejected) {
  test::TempDir dir("bin-odd");
  std::ofstream(dir / "g.bin", std::ios::binary).write("0123456789abcdef01234567", 24);
  const std::string msg = error_of(dir / "g.bin", EdgeFormat::bin);
  EXPECT_NE(msg.find("g.bin"), std::string::npos);
  EXPECT_NE(msg.find("not a whole number of 16-byte edges"), std::string::npos) << msg;
}

TEST(EdgeIo, BinaryNegativeIdIsRejected) {
  test::TempDir dir("bin-neg");
  test::write_edges(dir / "g.bin", {{0, 1}, {2, -5}});
  EXPECT_NE(error_of(dir / "g.bin", EdgeFormat::bin).find("negative vertex id"), std::string::npos);
}

TEST(EdgeIo, MissingFile) {
  EXPECT_NE(error_of("/nonexistent/edges.bin", EdgeFormat::bin).find("cannot open"), std::string::npos);
}

TEST(EdgeIo, Hdf5RoundTrip) {
  if (!hdf5_available()) GTEST_SKIP() << "built without HDF5";
  test::TempDir dir("h5");
  std::vector<Edge> edges;
  for (int64_t i = 0; i < 100000; ++i) edges.push_back({i, (i * 31) % 1000});
  auto w = create_edge_writer(dir / "g.h5", EdgeFormat::hdf5);
  w->write(edges.data(), 60000);
  w->write(edges.data() + 60000, 40000);
  w->commit();
  EXPECT_FALSE(std::filesystem::exists(dimmap::support::temporary_path(dir / "g.h5")));
  const auto back = test::read_all_edges(dir / "g.h5", EdgeFormat::hdf5);
  ASSERT_EQ(back.size(), edges.size());
  for (size_t i = 0; i < edges.size(); ++i) ASSERT_TRUE(back[i].u == edges[i].u && back[i].v == edges[i].v) << i;
  EXPECT_NE(error_of(dir / "missing.h5", EdgeFormat::hdf5).find("cannot open"), std::string::npos);
}

TEST(EdgeIo, UncommittedWriterLeavesNothing) {
  test::TempDir dir("uncommitted");
  {
    auto w = create_edge_writer(dir / "g.bin", EdgeFormat::bin);
    Edge e{1, 2};
    w->write(&e, 1);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.str()));
}

TEST(EdgeIo, FormatGuess) {
  EXPECT_EQ(guess_edge_format("a.h5"), EdgeFormat::hdf5);
  EXPECT_EQ(guess_edge_format("a.txt"), EdgeFormat::text);
  EXPECT_EQ(guess_edge_format("a.bin"), EdgeFormat::bin);
  EXPECT_THROW(parse_edge_format("csvx"), GraphError);
}

}  // namespace
}  // namespace graph
