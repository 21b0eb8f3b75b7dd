// classify.cpp - the classification kernel (see classify.hpp for the scoring rule).
// Its verifier, reference_classify, is in classify_verify.cpp.
#include <kmer/classify.hpp>
#include <kmer/kmer_codec.hpp>

#include <algorithm>
#include <cmath>

namespace kmer {

const char* to_string(MatchType type) {
  switch (type) {
    case MatchType::direct:
      return "DirectMatch";
    case MatchType::multi:
      return "MultiMatch";
    case MatchType::low_score:
      return "LowScore";
    case MatchType::no_hits:
      return "NoDbHits";
    case MatchType::too_short:
      return "ReadTooShort";
  }
  return "?";
}

TaxonIndex::TaxonIndex(const Taxonomy& taxonomy) : taxonomy_(taxonomy) {
  uint32_t max_taxid = 0;
  for (uint32_t i = 0; i < taxonomy.size(); ++i) max_taxid = std::max(max_taxid, taxonomy.taxid_at(i));
  const uint64_t flat = std::min<uint64_t>(uint64_t{max_taxid} + 1, uint64_t{1} << 26);
  if (flat <= std::max<uint64_t>(uint64_t{1} << 16, uint64_t{16} * taxonomy.size())) {
    flat_.assign(flat, Taxonomy::kNone);
    for (uint32_t i = 0; i < taxonomy.size(); ++i)
      if (taxonomy.taxid_at(i) < flat_.size()) flat_[taxonomy.taxid_at(i)] = i;
    return;
  }
  unsigned bits = 4;  // at most half full
  while ((uint64_t{1} << bits) < uint64_t{2} * taxonomy.size()) ++bits;
  shift_ = 32 - bits;
  mask_ = (uint32_t{1} << bits) - 1;
  slots_.resize(size_t{1} << bits);
  for (uint32_t i = 0; i < taxonomy.size(); ++i) {
    const uint32_t taxid = taxonomy.taxid_at(i);
    uint32_t h = (taxid * 0x9E3779B1u) >> shift_;
    while (slots_[h].index != Taxonomy::kNone) h = (h + 1) & mask_;
    slots_[h] = {taxid, i};
  }
}

ReadClassifier::ReadClassifier(const Database& db, const TaxonIndex& index, ClassifyParams params)
    : db_(db), tax_(db.taxonomy()), index_(index), params_(params) {
  support_.assign(tax_.size(), 0);
  stamp_.assign(tax_.size(), 0);
  flags_.assign(tax_.size(), 0);
}

void ReadClassifier::reset() {
  for (uint32_t t : touched_) {
    support_[t] = 0;
    flags_[t] = 0;
  }
  touched_.clear();
}

void ReadClassifier::vote(const TaxaList& list, uint32_t kmers) {
  if (++kmer_stamp_ == 0) {  // wrapped: forget old stamps
    std::fill(stamp_.begin(), stamp_.end(), 0);
    kmer_stamp_ = 1;
  }
  auto touch = [&](uint32_t t) {
    if (!(flags_[t] & kTouched)) {
      flags_[t] |= kTouched;
      touched_.push_back(t);
    }
  };
  for (uint32_t i = 0; i < list.size(); ++i) {
    uint32_t t = index_(list.taxid(i));
    if (t == Taxonomy::kNone) continue;  // cannot happen in a DB that passed its checks
    touch(t);
    flags_[t] |= kDirect;
    // One vote per k-mer for the taxon and each ancestor; stop where this k-mer already voted.
    for (; t != Taxonomy::kNone && stamp_[t] != kmer_stamp_; t = tax_.parent_index(t)) {
      stamp_[t] = kmer_stamp_;
      touch(t);
      support_[t] += kmers;
    }
  }
}

Classification ReadClassifier::classify(std::string_view sequence) {
  kmers_.clear();
  for_each_canonical_kmer(sequence, db_.k(), [&](uint64_t kmer) { kmers_.push_back(kmer); });
  // The read's lookups are independent: prefetch ahead so their cache misses overlap.
  constexpr size_t kAhead1 = 16, kAhead2 = 8;
  const size_t n = kmers_.size();
  for (size_t i = 0; i < std::min(n, kAhead1); ++i) db_.prefetch_stage1(kmers_[i]);
  for (size_t i = 0; i < std::min(n, kAhead2); ++i) db_.prefetch_stage2(kmers_[i]);
  // All lookups first, then the votes: a loop of lookups only lets the CPU overlap many of
  // them; a vote after each lookup branches on its result and stalls on every cache miss.
  lists_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead1 < n) db_.prefetch_stage1(kmers_[i + kAhead1]);
    if (i + kAhead2 < n) db_.prefetch_stage2(kmers_[i + kAhead2]);
    lists_[i] = db_.lookup(kmers_[i]);
  }
  return classify_lists(lists_.data(), static_cast<uint32_t>(n));
}

Classification ReadClassifier::classify_lists(const TaxaList* lists, uint32_t n) {
  reset();
  uint32_t hits = 0;
  for (uint32_t i = 0; i < n;) {
    if (lists[i].empty()) {
      ++i;
      continue;
    }
    // Neighbouring k-mers with the same list (most of a read's) vote alike: one vote of weight j - i.
    uint32_t j = i + 1;
    while (j < n && lists[j].word() == lists[i].word()) ++j;
    hits += j - i;
    vote(lists[i], j - i);
    i = j;
  }
  return place(n, hits);
}

Classification ReadClassifier::place(uint32_t kmers, uint32_t hits) {
  Classification c;
  c.kmers = kmers;
  c.hits = hits;
  if (kmers == 0) {
    c.type = MatchType::too_short;
    return c;
  }
  if (hits == 0) {
    c.type = MatchType::no_hits;
    return c;
  }
  const uint32_t need = std::max<uint32_t>(params_.min_hits, static_cast<uint32_t>(std::ceil(params_.min_support * kmers)));
  uint32_t node = tax_.root_index();
  if (support_[node] < need) {
    c.type = MatchType::low_score;
    return c;
  }
  bool competing = false;
  for (;;) {
    uint32_t best = Taxonomy::kNone, second = Taxonomy::kNone;
    for (uint32_t t : touched_) {
      if (tax_.parent_index(t) != node || support_[t] == 0) continue;
      if (best == Taxonomy::kNone || support_[t] > support_[best] ||
          (support_[t] == support_[best] && tax_.taxid_at(t) < tax_.taxid_at(best))) {
        second = best;
        best = t;
      } else if (second == Taxonomy::kNone || support_[t] > support_[second]) {
        second = t;
      }
    }
    if (best == Taxonomy::kNone || support_[best] < need) break;
    if (second != Taxonomy::kNone && support_[second] >= (1.0 - params_.margin) * support_[best]) {
      competing = true;
      break;
    }
    node = best;
  }
  c.taxid = tax_.taxid_at(node);
  c.score = double(support_[node]) / kmers;
  c.type = (!competing && (flags_[node] & kDirect)) ? MatchType::direct : MatchType::multi;
  return c;
}

}  // namespace kmer
