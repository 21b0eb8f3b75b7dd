// db_builder.hpp - kmer build: reference genomes + taxonomy -> one DB file.
//
// Out of core, in three passes with bounded memory:
//   1. scan: every genome's canonical k-mers, as (k-mer, genome) records, go to partition
//      files by k-mer prefix (genomes in parallel);
//   2. reduce: each partition (split further if it would not fit in the memory budget) is
//      sorted; per k-mer the genomes become a list of (taxid, count) where count is the
//      number of genomes of that taxon holding the k-mer; lists longer than max_taxa are
//      reduced toward the LCA (deepest taxa first merge into their parents, as LMAT does);
//      lists are deduplicated into the value store; k-mers stream out in sorted order;
//   3. write: the chosen index over the sorted stream, CRCs, header; the file is written
//      under a temporary name in the output's directory and renamed at the very end.
#pragma once

#include <kmer/db_format.hpp>

#include <cstdint>
#include <string>

namespace kmer {

struct BuildOptions {
  unsigned k = 18;
  IndexKind index = IndexKind::two_level;
  std::string taxonomy_dir;  // nodes.dmp, names.dmp
  std::string genome_list;   // path<TAB>taxid
  std::string out;
  std::string temp_dir;      // "" = the output's directory
  uint64_t memory_bytes = uint64_t{1} << 30;  // budget for sorting partitions
  unsigned max_taxa = 32;    // longer taxa lists are reduced toward their LCA
  CompactEntries compact = CompactEntries::automatic;
  unsigned threads = 0;      // 0 = OpenMP default
  bool progress = true;      // progress bar on stderr
};

struct BuildStats {
  uint64_t genomes = 0;
  uint64_t bases = 0;
  uint64_t records = 0;  // (k-mer, genome) records scanned
  uint64_t kmers = 0;    // distinct canonical k-mers in the DB
  uint64_t lists = 0;
  uint64_t inline_kmers = 0;
  uint64_t reduced_lists = 0;  // k-mers whose list was reduced toward the LCA
  uint64_t partitions = 0;
  uint64_t file_bytes = 0;
  double seconds = 0;
};

BuildStats build_database(const BuildOptions& options);

}  // namespace kmer
