// classify.hpp - the classification kernel: one read -> one taxon (LMAT-style scoring).
//
// For a read with K valid k-mers, each k-mer found in the DB adds one vote to every taxon of
// its taxa list and to all their ancestors (once per k-mer), so support(t) is the number of
// the read's k-mers that fall in the subtree of t, and score(t) = support(t) / K. The read is
// then placed by walking down from the root along the best supported child while
//   - the child's support reaches min_support (a share of K, at least min_hits k-mers), and
//   - it beats the runner-up child by more than margin (a share of the child's support).
// Where two children compete (the runner-up is too close), the walk stops at their lowest
// common ancestor: a MultiMatch. A walk that ends on a taxon that the k-mers named directly
// is a DirectMatch. Reads with no DB hit, too few supporting k-mers or no valid k-mer are
// unclassified (taxid 0).
#pragma once

#include <kmer/database.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace kmer {

enum class MatchType : uint8_t { direct, multi, low_score, no_hits, too_short };
const char* to_string(MatchType type);  // DirectMatch, MultiMatch, LowScore, NoDbHits, ReadTooShort

struct ClassifyParams {
  double min_support = 0.05;  // share of the read's k-mers the chosen taxon needs
  unsigned min_hits = 2;      // and at least this many k-mers
  double margin = 0.10;       // best child must beat the runner-up by this share
};

struct Classification {
  uint32_t taxid = 0;  // 0 = unclassified
  double score = 0;    // support(taxid) / valid k-mers
  MatchType type = MatchType::no_hits;
  uint32_t kmers = 0;  // valid k-mers in the read
  uint32_t hits = 0;   // of which found in the DB
};

// taxid -> taxon index of the DB's taxonomy in O(1) (a flat table for taxids below 2^26,
// which covers NCBI; a hash map above). Built once, shared by all threads.
class TaxonIndex {
 public:
  explicit TaxonIndex(const Taxonomy& taxonomy);
  uint32_t operator()(uint32_t taxid) const {
    return taxid < flat_.size() ? flat_[taxid] : taxonomy_.index_of(taxid);
  }

 private:
  const Taxonomy& taxonomy_;
  std::vector<uint32_t> flat_;
};

// Per-thread scratch space; classify() allocates nothing in steady state.
class ReadClassifier {
 public:
  ReadClassifier(const Database& db, const TaxonIndex& index, ClassifyParams params);
  Classification classify(std::string_view sequence);

  // The votes of the last classify(): support by taxon index (for tests and the verifier).
  uint32_t support_of_index(uint32_t index) const { return support_[index]; }

 private:
  const Database& db_;
  const Taxonomy& tax_;
  const TaxonIndex& index_;
  ClassifyParams params_;
  std::vector<uint32_t> support_;   // by taxon index
  std::vector<uint32_t> stamp_;     // last k-mer that voted for the taxon
  std::vector<uint8_t> flags_;      // kTouched, kDirect (named directly by a k-mer)
  std::vector<uint32_t> touched_;   // taxa with kTouched set
  std::vector<uint64_t> kmers_;     // the read's canonical k-mers
  std::vector<TaxaList> lists_;     // and their lookups
  static constexpr uint8_t kTouched = 1, kDirect = 2;
  uint32_t kmer_stamp_ = 0;

  void reset();
  void vote(const TaxaList& list);
  Classification place(uint32_t kmers, uint32_t hits);
};

}  // namespace kmer
