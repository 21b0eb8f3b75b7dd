// mem_align.hpp - `bwa-mmap mem`: libbwa's BWA-MEM over a zero-copy mapped index.
#pragma once

#include <bwammap/mem_options.hpp>
#include <bwammap/index_placement.hpp>

#include <cstdint>
#include <string>

namespace bwammap {

struct MemReport {
  int64_t reads = 0;
  int64_t bases = 0;
  int batches = 0;
  double load_seconds = 0;   // checking and mapping the index
  double align_seconds = 0;  // the read-align-write pipeline
  double cpu_seconds = 0;
  uint64_t peak_rss = 0;
};

// Checks the read files and the index, maps the index through `plan`, writes the SAM header
// and then aligns in batches exactly as bwa mem does (batch size -K, or 10M bases times -t;
// one reader thread overlapping the aligner unless -1), writing SAM to options.output.
// Throws dimmap::Error; a SAM file given with -o appears only when complete.
MemReport run_mem(MemOptions& options, IndexPlacement& plan);

}  // namespace bwammap
