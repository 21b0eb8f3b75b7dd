// kmer_codec.hpp - canonical 2-bit k-mers (k <= 32).
//
// A = 0, C = 1, G = 2, T = 3, the first base in the highest bits, so integer order equals
// lexicographic order of the k-mer strings. The canonical k-mer is the smaller of the k-mer
// and its reverse complement. Bases other than ACGT (either case) break the k-mer: every
// k-mer that would contain one is skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kmer {

constexpr unsigned kMaxK = 32;

// 0..3 for ACGTacgt, 4 for anything else.
extern const uint8_t kBaseCode[256];

inline uint64_t kmer_mask(unsigned k) { return k >= 32 ? ~uint64_t{0} : (uint64_t{1} << (2 * k)) - 1; }

// Reverse complement of a 2k-bit k-mer.
inline uint64_t reverse_complement(uint64_t kmer, unsigned k) {
  // Complement (A<->T, C<->G is x ^ 3), then reverse the 2-bit groups.
  uint64_t x = ~kmer;
  x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
  x = ((x >> 8) & 0x00FF00FF00FF00FFULL) | ((x & 0x00FF00FF00FF00FFULL) << 8);
  x = ((x >> 16) & 0x0000FFFF0000FFFFULL) | ((x & 0x0000FFFF0000FFFFULL) << 16);
  x = (x >> 32) | (x << 32);
  return (x >> (64 - 2 * k)) & kmer_mask(k);
}

inline uint64_t canonical(uint64_t kmer, unsigned k) {
  const uint64_t rc = reverse_complement(kmer, k);
  return rc < kmer ? rc : kmer;
}

// Calls f(canonical_kmer) for every k-mer of seq made only of ACGT, left to right.
// Forward and reverse-complement codes are rolled along, so each base costs O(1).
template <typename F>
inline void for_each_canonical_kmer(std::string_view seq, unsigned k, F&& f) {
  const uint64_t mask = kmer_mask(k);
  const unsigned shift = 2 * (k - 1);
  uint64_t fwd = 0, rev = 0;
  unsigned valid = 0;  // ACGT bases since the last break
  for (const char ch : seq) {
    const uint8_t code = kBaseCode[static_cast<uint8_t>(ch)];
    if (code > 3) {
      valid = 0;
      continue;
    }
    fwd = ((fwd << 2) | code) & mask;
    rev = (rev >> 2) | (uint64_t{3u - code} << shift);
    if (++valid >= k) f(fwd < rev ? fwd : rev);
  }
}

// Number of canonical k-mers for_each_canonical_kmer would produce.
size_t count_valid_kmers(std::string_view seq, unsigned k);

// "ACGT..." of length k <-> code. encode_kmer throws kmer::Error on a non-ACGT base or a
// length other than k.
uint64_t encode_kmer(std::string_view text, unsigned k);
std::string decode_kmer(uint64_t kmer, unsigned k);

}  // namespace kmer
