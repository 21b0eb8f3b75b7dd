// index_build.hpp - `bwa-mmap index`: bwa's index construction with its arrays on a placement.
#pragma once

#include <bwammap/index_check.hpp>
#include <bwammap/placed_alloc.hpp>
#include <bwammap/index_placement.hpp>

#include <cstdint>
#include <string>

namespace bwammap {

struct IndexOptions {
  std::string fasta;
  std::string prefix;               // "" = the FASTA path (as bwa index)
  std::string algorithm = "auto";   // auto, bwtsw, is or rb2 (bwa index -a)
  int block_size = 10000000;        // bwa index -b, for bwtsw
  bool is_64 = false;               // bwa index -6: name the files <prefix>.64.*
  // libbwa allocations at least this big go to the placement. 64M keeps bwtsw's workspace
  // (about 5x the -b block size, 48M by default, accessed at random) in RAM and places the
  // arrays that grow with the genome (packed sequence, BWT, suffix array); the command line
  // lowers it under a tight memory limit (dimmap::default_min_alloc).
  uint64_t min_alloc = 64ull << 20;
  // The memory this run may use (dimmap::memory_limit; 0 = unknown). With -a auto, a
  // reference whose IS arrays would not fit in it is indexed with bwtsw (see choose_algorithm).
  uint64_t memory_limit = 0;
};

struct IndexReport {
  IndexLayout layout;
  std::string prefix;
  std::string placement;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  uint64_t peak_rss = 0;
  PlacedHeapStats heap;
};

// Checks the FASTA, builds the index under temporary names with libbwa's bwa_idx_build()
// while large allocations go to plan.for_index(), verifies the result with check_index(),
// then renames the five files into place (.sa last). Throws dimmap::Error; on any failure
// (or a fatal error inside libbwa, which exits) no file with the final names is written.
IndexReport build_index(const IndexOptions& options, IndexPlacement& plan);

// bwa index -a names -> libbwa's BWTALGO_* codes; throws dimmap::Error for others.
int algorithm_code(const std::string& name);

// The algorithm for options.algorithm: "auto" is bwa's rule (IS below 50M bases, else
// bwtsw) unless the IS algorithm's arrays, about 10 bytes per base of the reference, exceed
// options.memory_limit; then bwtsw, and *why says so. Both write identical files, but IS
// reads and writes its arrays at random: beyond the memory limit it thrashes (over 12 min
// for 23M bases in a 48M cgroup, where bwtsw takes about 80 s).
int choose_algorithm(const IndexOptions& options, std::string* why);

}  // namespace bwammap
