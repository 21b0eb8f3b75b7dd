// Canonical k-mer coding against the string definition.
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>

#include <algorithm>
#include <random>

#include "test_util.hpp"

namespace {

std::string revcomp(const std::string& s) {
  std::string r(s.rbegin(), s.rend());
  for (char& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
  return r;
}

TEST(Codec, ReverseComplementMatchesStrings) {
  std::mt19937_64 rng(1);
  for (unsigned k : {1u, 2u, 7u, 18u, 31u, 32u}) {
    for (int i = 0; i < 200; ++i) {
      const std::string s = kmer_test::random_dna(rng, k);
      const uint64_t code = kmer::encode_kmer(s, k);
      EXPECT_EQ(kmer::decode_kmer(code, k), s);
      EXPECT_EQ(kmer::decode_kmer(kmer::reverse_complement(code, k), k), revcomp(s)) << s;
      EXPECT_EQ(kmer::decode_kmer(kmer::canonical(code, k), k), std::min(s, revcomp(s)));
    }
  }
}

TEST(Codec, RollingKmersSkipNonAcgtAndMatchWindows) {
  std::mt19937_64 rng(2);
  std::string seq = kmer_test::random_dna(rng, 300);
  seq[40] = 'N';
  seq[41] = 'r';
  seq[200] = '-';
  for (size_t i = 100; i < 130; ++i) seq[i] = static_cast<char>(std::tolower(seq[i]));
  for (unsigned k : {5u, 18u, 32u}) {
    std::vector<std::string> expect;
    std::string upper = seq;
    for (char& c : upper) c = static_cast<char>(std::toupper(c));
    for (size_t i = 0; i + k <= upper.size(); ++i) {
      const std::string w = upper.substr(i, k);
      if (w.find_first_not_of("ACGT") == std::string::npos) expect.push_back(std::min(w, revcomp(w)));
    }
    std::vector<std::string> got;
    kmer::for_each_canonical_kmer(seq, k, [&](uint64_t c) { got.push_back(kmer::decode_kmer(c, k)); });
    EXPECT_EQ(got, expect) << "k=" << k;
    EXPECT_EQ(kmer::count_valid_kmers(seq, k), expect.size());
  }
}

TEST(Codec, EncodeRejectsBadText) {
  EXPECT_THROW(kmer::encode_kmer("ACGN", 4), kmer::Error);
  EXPECT_THROW(kmer::encode_kmer("ACG", 4), kmer::Error);
}

}  // namespace
