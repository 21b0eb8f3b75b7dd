// graph-bfs-reference EDGES VERTICES ROOT OUT: Boost.Graph BFS levels straight from an edge
// file (format from the extension), one per line, -1 = unreached. The scripts' reference.
#include <cstdio>
#include <iostream>
#include <string>

#include <graph/output_file.hpp>

#include "test_util.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: graph-bfs-reference EDGES VERTICES ROOT OUT\n";
    return 2;
  }
  try {
    const auto edges = graph::test::read_all_edges(argv[1], graph::guess_edge_format(argv[1]));
    const auto levels = graph::test::boost_levels(edges, std::stoull(argv[2]), std::stoull(argv[3]));
    graph::write_decimal_lines(argv[4], levels.data(), levels.size());
  } catch (const std::exception& e) {
    std::cerr << "graph-bfs-reference: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
