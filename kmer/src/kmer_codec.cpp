// kmer_codec.cpp - base table, k-mer text conversion, the error helper.
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>

namespace kmer {

namespace {
struct BaseTable {
  uint8_t code[256];
  constexpr BaseTable() : code() {
    for (auto& c : code) c = 4;
    code['A'] = code['a'] = 0;
    code['C'] = code['c'] = 1;
    code['G'] = code['g'] = 2;
    code['T'] = code['t'] = 3;
  }
};
constexpr BaseTable kTable;
}  // namespace

const uint8_t kBaseCode[256] = {
#define R16(b) kTable.code[b], kTable.code[b + 1], kTable.code[b + 2], kTable.code[b + 3], \
    kTable.code[b + 4], kTable.code[b + 5], kTable.code[b + 6], kTable.code[b + 7],     \
    kTable.code[b + 8], kTable.code[b + 9], kTable.code[b + 10], kTable.code[b + 11],   \
    kTable.code[b + 12], kTable.code[b + 13], kTable.code[b + 14], kTable.code[b + 15]
    R16(0), R16(16), R16(32), R16(48), R16(64), R16(80), R16(96), R16(112),
    R16(128), R16(144), R16(160), R16(176), R16(192), R16(208), R16(224), R16(240)
#undef R16
};

void fail_at(const std::string& file, uint64_t line, const std::string& what) {
  if (line) throw Error(file + ":" + std::to_string(line) + ": " + what);
  throw Error(file + ": " + what);
}

size_t count_valid_kmers(std::string_view seq, unsigned k) {
  size_t n = 0;
  unsigned valid = 0;
  for (const char ch : seq) {
    if (kBaseCode[static_cast<uint8_t>(ch)] > 3) {
      valid = 0;
    } else if (++valid >= k) {
      ++n;
    }
  }
  return n;
}

uint64_t encode_kmer(std::string_view text, unsigned k) {
  if (text.size() != k)
    throw Error("k-mer '" + std::string(text) + "' has length " + std::to_string(text.size()) +
                ", expected k = " + std::to_string(k));
  uint64_t code = 0;
  for (const char ch : text) {
    const uint8_t c = kBaseCode[static_cast<uint8_t>(ch)];
    if (c > 3) throw Error("k-mer '" + std::string(text) + "' contains a base other than ACGT");
    code = (code << 2) | c;
  }
  return code;
}

std::string decode_kmer(uint64_t kmer, unsigned k) {
  static const char kBases[4] = {'A', 'C', 'G', 'T'};
  std::string s(k, 'A');
  for (unsigned i = 0; i < k; ++i) s[k - 1 - i] = kBases[(kmer >> (2 * i)) & 3];
  return s;
}

}  // namespace kmer
