// index_check.hpp - the verifier of a bwa index: five files that agree with each other.
//
// bwa mem trusts its index files; a missing or truncated one makes it exit with a terse
// message, or read garbage. check_index() reads the headers and sizes of all five files
// (not their bulk), checks every relation bwa relies on, and names the file that breaks one.
#pragma once

#include <cstdint>
#include <string>

namespace bwammap {

struct IndexLayout {
  std::string prefix;
  int64_t l_pac = 0;         // forward-strand length (.ann, .amb, .pac)
  int32_t n_seqs = 0;        // reference sequences (.ann)
  int32_t n_holes = 0;       // runs of ambiguous bases (.amb)
  uint64_t seq_len = 0;      // BWT length = 2 * l_pac (.bwt, .sa)
  uint64_t primary = 0;      // BWT primary index
  uint64_t L2[5] = {0, 0, 0, 0, 0};
  uint64_t bwt_words = 0;    // uint32 words after the .bwt header (BWT interleaved with Occ)
  int sa_intv = 0;           // suffix array sampling interval (.sa)
  uint64_t n_sa = 0;         // sampled suffix array entries, including the implicit first one
  uint64_t bytes[5] = {0, 0, 0, 0, 0};  // file sizes: amb ann bwt pac sa
};

// The five file names of an index, in the order of IndexLayout::bytes.
extern const char* const kIndexSuffixes[5];

// Throws dimmap::Error naming the file and the problem.
IndexLayout check_index(const std::string& prefix);

// Byte offsets inside the files, shared by the checker and the zero-copy loader.
constexpr uint64_t kBwtHeaderBytes = 5 * 8;  // primary, L2[1..4]
constexpr uint64_t kSaHeaderBytes = 7 * 8;   // primary, L2[1..4], sa_intv, seq_len
// Expected sizes, from bwa's file formats.
uint64_t expected_bwt_words(uint64_t seq_len);
uint64_t expected_pac_bytes(int64_t l_pac);

}  // namespace bwammap
