// bfs_verify.cpp - the Graph500 checks for one BFS result (the kernel is bfs.cpp).
#include <graph/bfs.hpp>

#include <algorithm>
#include <string>

namespace graph {

ValidationReport validate_bfs(const Partition& part, const LocalGraph& graph, const int64_t* levels,
                              const int64_t* parents, uint64_t root) {
  ValidationReport report;
  auto fail = [&](const std::string& what) {
    const size_t at = what.rfind("check ", 0) == 0 ? static_cast<size_t>(what[6] - '0') : 0;
    ++report.by_check[at];
    if (report.errors++ == 0) report.first_error = what;
  };
  const uint64_t first = part.first(), count = part.count(), n = part.vertices;
  const vertex_t* targets = graph.targets - graph.edge_base;
  const bool own_root = root >= first && root < first + count;
  if (root >= n) {
    fail("check 1: root " + std::to_string(root) + " is not a vertex");
    return report;
  }
  if (own_root && (levels[root] != 0 || parents[root] != static_cast<int64_t>(root)))
    fail("check 1: root " + std::to_string(root) + " must be its own parent at level 0");

  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t v = first + i;
    const int64_t level = levels[v], parent = parents[v];
    const uint64_t begin = graph.offsets[i], end = graph.offsets[i + 1];
    if ((level < 0) != (parent < 0)) {
      fail("vertex " + std::to_string(v) + " has level " + std::to_string(level) + " but parent " +
           std::to_string(parent));
      continue;
    }
    if (level >= 0 && v != root) {
      // 1: the tree. Levels strictly decrease along parent links and only the root has
      // level 0, so every parent chain ends at the root: no cycles, one tree.
      if (level == 0) fail("check 1: vertex " + std::to_string(v) + " has level 0 but is not the root");
      if (parent >= static_cast<int64_t>(n) || levels[parent] < 0) {
        fail("check 1: vertex " + std::to_string(v) + " has parent " + std::to_string(parent) +
             " outside the tree");
        continue;
      }
      // 2: tree edges span exactly one level.
      if (levels[parent] != level - 1)
        fail("check 2: tree edge " + std::to_string(parent) + " -> " + std::to_string(v) + " joins levels " +
             std::to_string(levels[parent]) + " and " + std::to_string(level));
      // 5: the tree edge is a graph edge (adjacency lists are sorted).
      if (!std::binary_search(targets + begin, targets + end, static_cast<vertex_t>(parent)))
        fail("check 5: tree edge " + std::to_string(parent) + " -> " + std::to_string(v) + " is not in the graph");
    }
    for (uint64_t e = begin; e < end; ++e) {
      const int64_t other = levels[targets[e]];
      if ((level < 0) != (other < 0)) {  // 4: the tree spans the whole component
        fail("check 4: edge " + std::to_string(v) + " - " + std::to_string(targets[e]) +
             " joins a reached and an unreached vertex");
      } else if (level >= 0 && (level - other > 1 || other - level > 1)) {  // 3
        fail("check 3: edge " + std::to_string(v) + " - " + std::to_string(targets[e]) + " joins levels " +
             std::to_string(level) + " and " + std::to_string(other));
      }
    }
  }
  return report;
}

}  // namespace graph
