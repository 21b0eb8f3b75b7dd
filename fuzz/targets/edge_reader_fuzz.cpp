// Fuzz target: graph's edge-list readers (Graph500 binary and "u v" text). The first input
// byte picks the format, the rest is the file. Properties: malformed input ends in
// graph::GraphError; every edge read has non-negative ids; the binary reader returns exactly
// its size hint; reading in small and large batches gives the same edges.
#include <graph/edge_io.hpp>

#include <string>
#include <vector>

#include "fuzz_input.hpp"

namespace {

std::vector<graph::Edge> read_all(const std::string& path, graph::EdgeFormat format, size_t batch) {
  auto reader = graph::open_edge_reader(path, format);
  std::vector<graph::Edge> out, buf(batch);
  for (size_t n; (n = reader->read(buf.data(), buf.size())) > 0;) out.insert(out.end(), buf.begin(), buf.begin() + n);
  if (format == graph::EdgeFormat::bin && reader->size_hint() != out.size())
    dimmap::fuzz::property_failed("binary reader's size hint differs from the edges read");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  if (size < 1) return 0;
  const auto format = data[0] & 1 ? graph::EdgeFormat::text : graph::EdgeFormat::bin;
  const std::string path = dimmap::fuzz::write_scratch_file("edges", {reinterpret_cast<const char*>(data + 1), size - 1});
  std::vector<graph::Edge> small, large;
  bool failed_small = false, failed_large = false;
  try {
    small = read_all(path, format, 3);
  } catch (const graph::GraphError&) {
    failed_small = true;
  }
  try {
    large = read_all(path, format, 4096);
  } catch (const graph::GraphError&) {
    failed_large = true;
  }
  if (failed_small != failed_large) property_failed("batch size changes whether the input is valid");
  if (failed_small) return 0;
  if (small.size() != large.size()) property_failed("batch size changes the number of edges");
  for (size_t i = 0; i < small.size(); ++i) {
    if (small[i].u != large[i].u || small[i].v != large[i].v) property_failed("batch size changes the edges");
    if (small[i].u < 0 || small[i].v < 0) property_failed("an edge with a negative id was returned");
  }
  return 0;
}
