// lookup_bench.hpp - the raw k-mer lookup benchmark (the paper's Fig. 7 kernel).
//
// K-mers come from reads (every canonical k-mer of every read, in order) or from a text file
// of k-mers; each thread takes an equal contiguous share and looks every k-mer up.
#pragma once

#include <kmer/database.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kmer {

// Canonical k-mers of up to max_kmers (0 = all) from a FASTA/FASTQ file.
std::vector<uint64_t> kmers_from_reads(const std::string& path, unsigned k, uint64_t max_kmers);
// One k-mer per line ("ACGT..." of length k); '#' lines and blank lines skipped.
std::vector<uint64_t> kmers_from_text(const std::string& path, unsigned k, uint64_t max_kmers);

struct LookupResult {
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t taxa = 0;  // sum of list lengths over hits (keeps the lookups honest)
  double seconds = 0;
  double lookups_per_second() const { return seconds > 0 ? lookups / seconds : 0; }
  double hit_rate() const { return lookups ? double(hits) / lookups : 0; }
};

// The kernel: look up every k-mer with `threads` OpenMP threads.
LookupResult run_lookups(const Database& db, const std::vector<uint64_t>& kmers, unsigned threads);

}  // namespace kmer
