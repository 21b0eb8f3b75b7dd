// csr.hpp - the undirected CSR graph on disk.
//
// A graph directory holds three files:
//   vertex.dat  uint64 offsets[vertices + 1]: vertex v's neighbours are edges[offsets[v] .. offsets[v+1])
//   edge.dat    uint32 targets[edges]: both directions of every undirected edge, sorted per vertex,
//               no duplicates, no self-loops
//   graph.info  "key value" lines (format, vertices, edges, ...), written last: a directory
//               without it is not a finished graph
#pragma once

#include <graph/types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace graph {

struct CsrInfo {
  uint64_t vertices = 0;
  uint64_t edges = 0;          // adjacency entries (twice the undirected edges)
  uint64_t input_edges = 0;    // edges read from the input, as given
  uint64_t self_loops = 0;     // input edges (u, u), dropped
  std::string source;          // the input file

  uint64_t undirected_edges() const { return edges / 2; }
  uint64_t duplicates() const { return input_edges - self_loops - edges / 2; }

  static CsrInfo read(const std::string& dir);  // throws GraphError if missing or malformed
  void write(const std::string& dir) const;     // graph.info, atomically
};

std::string vertex_file(const std::string& dir);
std::string edge_file(const std::string& dir);
std::string info_file(const std::string& dir);

// A read-only view of CSR arrays wherever they live (memory, mmap, dimmap).
struct CsrView {
  uint64_t vertices = 0;
  uint64_t edges = 0;
  const uint64_t* offsets = nullptr;  // vertices + 1 entries
  const vertex_t* targets = nullptr;  // edges entries

  uint64_t degree(uint64_t v) const { return offsets[v + 1] - offsets[v]; }
};

// A CSR graph read into ordinary vectors (tests, validation, small graphs).
struct CsrGraph {
  CsrInfo info;
  std::vector<uint64_t> offsets;
  std::vector<vertex_t> targets;

  static CsrGraph load(const std::string& dir);  // checks the files against graph.info
  CsrView view() const { return {info.vertices, info.edges, offsets.data(), targets.data()}; }
};

// Checks that a view is a well-formed CSR (monotone offsets, targets < vertices); throws GraphError.
void check_csr(const CsrView& g, const std::string& dir);

}  // namespace graph
