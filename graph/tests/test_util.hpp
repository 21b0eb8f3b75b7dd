// test_util.hpp - helpers for the graph tests: temporary directories on real disk, edge
// files, and the independent reference (Boost.Graph breadth_first_search).
#pragma once

#include <graph/csr.hpp>
#include <graph/edge_io.hpp>
#include <graph/rmat.hpp>
#include <graph/types.hpp>

#include <dimmap/testing/temp_dir.hpp>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace graph::test {

// A fresh directory on real disk (not tmpfs), removed at scope exit.
using TempDir = dimmap::testing::TempDir;

inline void write_edges(const std::string& path, const std::vector<Edge>& edges, EdgeFormat format = EdgeFormat::bin) {
  auto w = create_edge_writer(path, format);
  w->write(edges.data(), edges.size());
  w->commit();
}

// The whole edge list of an R-MAT graph, in memory.
inline std::vector<Edge> rmat_edges(int scale, uint64_t edge_factor = 16, RmatVariant variant = RmatVariant::graph500,
                                    uint64_t seed = 1) {
  RmatParams p;
  p.scale = scale;
  p.edge_factor = edge_factor;
  p.variant = variant;
  p.seed = seed;
  const RmatGenerator gen(p);
  std::vector<Edge> edges(gen.edges());
  gen.generate(0, gen.edges(), edges.data(), 2);
  return edges;
}

// BFS levels by Boost.Graph on an adjacency list built straight from the edge list (not
// from our CSR), -1 for unreached vertices.
inline std::vector<int64_t> boost_levels(const std::vector<Edge>& edges, uint64_t vertices, uint64_t root) {
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  G g(vertices);
  for (const Edge& e : edges) boost::add_edge(static_cast<size_t>(e.u), static_cast<size_t>(e.v), g);
  std::vector<int64_t> dist(vertices, -1);
  std::vector<size_t> d(vertices, 0);
  std::vector<boost::default_color_type> color(vertices);
  boost::breadth_first_search(
      g, boost::vertex(static_cast<size_t>(root), g),
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(d.data(), boost::on_tree_edge())))
          .color_map(boost::make_iterator_property_map(color.data(), boost::get(boost::vertex_index, g))));
  for (size_t v = 0; v < vertices; ++v)
    if (color[v] != boost::white_color) dist[v] = static_cast<int64_t>(d[v]);
  return dist;
}

inline std::vector<Edge> read_all_edges(const std::string& path, EdgeFormat format) {
  auto r = open_edge_reader(path, format);
  std::vector<Edge> all, buf(1 << 16);
  for (size_t n; (n = r->read(buf.data(), buf.size())) > 0;) all.insert(all.end(), buf.begin(), buf.begin() + static_cast<long>(n));
  return all;
}

}  // namespace graph::test
