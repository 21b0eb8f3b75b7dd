// Fuzz target: loading a CSR graph directory (graph.info, vertex.dat, edge.dat; the input's
// three parts). Properties: a damaged directory ends in graph::GraphError; a loaded graph is
// well formed (offsets start at 0, never decrease, end at the edge count; every target is a
// vertex), checked here independently of the loader's own check.
#include <graph/csr.hpp>

#include <string>

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const auto parts = dimmap::fuzz::split_parts(data, size, 3);
  dimmap::fuzz::write_scratch_file("graph.info", parts[0]);
  dimmap::fuzz::write_scratch_file("vertex.dat", parts[1]);
  dimmap::fuzz::write_scratch_file("edge.dat", parts[2]);
  graph::CsrGraph g;
  try {
    g = graph::CsrGraph::load(dimmap::fuzz::scratch_dir());
  } catch (const graph::GraphError&) {
    return 0;
  }
  if (g.offsets.size() != g.info.vertices + 1 || g.targets.size() != g.info.edges)
    property_failed("array sizes differ from graph.info");
  if (g.offsets.front() != 0 || g.offsets.back() != g.info.edges) property_failed("offsets do not span the edges");
  for (uint64_t v = 0; v < g.info.vertices; ++v)
    if (g.offsets[v] > g.offsets[v + 1]) property_failed("offsets decrease at vertex " + std::to_string(v));
  for (graph::vertex_t t : g.targets)
    if (t >= g.info.vertices) property_failed("a target is not a vertex");
  return 0;
}
