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
#include <memory>
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

// taxid -> taxon index of the DB's taxonomy in O(1), built once, shared by all threads: a
// flat table when the taxids are dense enough (NCBI: taxids below 2^26; a hash map above),
// else a small open-addressing table (a DB of a few genomes has a handful of taxa with
// taxids in the millions: a flat table would take megabytes).
class TaxonIndex {
 public:
  explicit TaxonIndex(const Taxonomy& taxonomy);
  uint32_t operator()(uint32_t taxid) const {
    if (taxid < flat_.size()) return flat_[taxid];
    if (slots_.empty()) return taxonomy_.index_of(taxid);
    for (uint32_t h = (taxid * 0x9E3779B1u) >> shift_;; h = (h + 1) & mask_) {
      if (slots_[h].taxid == taxid) return slots_[h].index;
      if (slots_[h].index == Taxonomy::kNone) return Taxonomy::kNone;
    }
  }

 private:
  struct Slot {
    uint32_t taxid = 0, index = Taxonomy::kNone;  // index kNone: empty
  };
  const Taxonomy& taxonomy_;
  std::vector<uint32_t> flat_;
  std::vector<Slot> slots_;
  unsigned shift_ = 0;
  uint32_t mask_ = 0;
};

// Per-thread scratch space; classify() allocates nothing in steady state.
class ReadClassifier {
 public:
  ReadClassifier(const Database& db, const TaxonIndex& index, ClassifyParams params);
  Classification classify(std::string_view sequence);
  // The same for a read whose k-mers were already looked up: lists[i] is the lookup of its
  // i-th canonical k-mer (in read order), n the number of its valid k-mers.
  Classification classify_lists(const TaxaList* lists, uint32_t n);

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
  void vote(const TaxaList& list, uint32_t kmers);  // `kmers` k-mers with this list
  Classification place(uint32_t kmers, uint32_t hits);
};

// Classifies batches of reads with sorted lookups. A batch's canonical k-mers are gathered
// with their (read, position) slot, grouped by their leading bits, sorted and looked up in
// ascending k-mer order, so that the lookups sweep a two-level DB from its start to its end
// (Linux readahead and dimmap_prefetch() see ascending addresses) and a k-mer that occurs
// several times in the batch is looked up once. Then every read votes on its lookups in read
// order, with the rule of ReadClassifier::classify: the results are the same. Threads share
// every step (blocks of reads, then runs of k-mer groups in ascending order, then reads).
//
// Memory: kBytesPerKmer per k-mer of a sorted batch (plus a few bytes per read); a call with
// more than lookup_batch k-mers is split into sorted batches of whole reads of about equal
// size, each at most lookup_batch k-mers (a longer read is a batch of its own).
class SortedBatchClassifier {
 public:
  // 12 for the (k-mer, slot) key, whose k-mer its lookup replaces; 4 for where that went.
  static constexpr size_t kBytesPerKmer = 16;
  static constexpr uint64_t kMaxLookupBatch = uint64_t{1} << 31;

  // readahead_bytes > 0: each thread keeps read-ahead hints (dimmap_prefetchv on a dimmap
  // mapping, MADV_WILLNEED otherwise) for the DB pages of its next lookups, up to this many
  // bytes of the DB past the current one. Throws kmer::Error unless 1 <= lookup_batch <=
  // kMaxLookupBatch.
  SortedBatchClassifier(const Database& db, const TaxonIndex& index, ClassifyParams params, unsigned threads,
                        uint64_t lookup_batch, uint64_t readahead_bytes = 0);
  ~SortedBatchClassifier();
  // results[i] = the classification of reads[i] (resized to n).
  void classify(const std::string_view* reads, size_t n, std::vector<Classification>& results);
  uint64_t sorted_batches() const { return sorted_batches_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t sorted_batches_ = 0;
};

}  // namespace kmer
