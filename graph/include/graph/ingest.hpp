// ingest.hpp - edge list -> undirected CSR, in memory or out of core.
//
// Every input edge (u, v) with u != v becomes the two keys u<<32|v and v<<32|u. Keys are
// gathered in chunks that fit the memory limit, each chunk is sorted and deduplicated and,
// when the input does not fit in one chunk, written as a sorted run; the runs are then
// merged (k-way, deduplicating) straight into the CSR files. Memory stays near the limit
// whatever the input size.
#pragma once

#include <graph/csr.hpp>
#include <graph/edge_io.hpp>

#include <cstdint>
#include <string>

namespace graph {

struct IngestOptions {
  std::string edges_path;
  EdgeFormat format = EdgeFormat::bin;
  uint64_t vertices = 0;              // 0: largest id + 1; else ids must be < vertices
  std::string out_dir;
  std::string tmp_dir;                // sorted runs ("" = out_dir)
  uint64_t memory_bytes = 1ull << 30; // key buffer size; more input means more runs
  int threads = 1;
  bool progress = true;
};

struct IngestReport {
  CsrInfo info;
  unsigned runs = 0;  // sorted runs written (0: everything fit in memory)
};

IngestReport ingest_edges(const IngestOptions& options);

}  // namespace graph
