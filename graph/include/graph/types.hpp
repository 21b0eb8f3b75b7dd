// types.hpp - vertex and edge types shared by the generator, ingest, CSR and BFS.
//
// Vertex ids in the CSR are 32-bit: that keeps the edge data (the biggest file) at 4 bytes
// per entry and lets a visitor (vertex, parent) fit in 8 bytes. Graphs up to 2^32 - 1
// vertices (RMAT scale 31, the papers' largest) fit; bigger ids are rejected at ingest.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace graph {

using vertex_t = uint32_t;  // vertex id in the CSR
using edge_t = uint64_t;    // index into the edge data

inline constexpr uint64_t kMaxVertices = std::numeric_limits<vertex_t>::max();  // ids 0 .. 2^32-2
inline constexpr int64_t kUnreached = -1;  // level and parent of a vertex the BFS did not reach

// One input edge as in the Graph500 binary format (two little-endian int64).
struct Edge {
  int64_t u;
  int64_t v;
};
static_assert(sizeof(Edge) == 16, "Graph500 edges are two int64");

// Bad input or a failed operation; the message names the file and the problem.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace graph
