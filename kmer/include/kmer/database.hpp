// database.hpp - a k-mer database opened on a placement (memory, mmap or dimmap).
//
// The file is mapped through dimmap::Region, so the same lookup code runs with the DB copied
// to tmpfs, cached by the Linux page cache, or cached by a DI-MMAP buffer. Opening checks the
// magic, version, header CRC, file size (truncation) and section bounds, and the CRC of the
// small taxonomy section; verify() checks every section's CRC (it reads the whole file).
#pragma once

#include <kmer/db_format.hpp>
#include <kmer/taxonomy.hpp>

#include <dimmap/placement.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace kmer {

// The taxa of one k-mer: a view into the value store, or one inline taxon. One word (the
// sorted batches of kmer classify keep one per k-mer): a list pointer (4-byte aligned), or
// taxid << 1 | 1 for an inline taxon, or 0 for none.
class TaxaList {
 public:
  TaxaList() = default;
  static TaxaList from_list(const uint32_t* words) {
    TaxaList t;
    t.bits_ = reinterpret_cast<uintptr_t>(words);
    return t;
  }
  static TaxaList from_inline(uint32_t taxid) {
    TaxaList t;
    t.bits_ = taxid ? (uintptr_t{taxid} << 1) | 1 : 0;
    return t;
  }

  bool empty() const { return bits_ == 0; }
  uint32_t size() const { return is_list() ? list()[0] : (bits_ ? 1 : 0); }
  uint32_t taxid(uint32_t i) const { return is_list() ? list()[1 + i] : static_cast<uint32_t>(bits_ >> 1); }
  uint16_t count(uint32_t i) const {
    if (!is_list()) return 1;
    const auto* counts = reinterpret_cast<const uint16_t*>(list() + 1 + list()[0]);
    return counts[i];
  }
  bool is_inline() const { return bits_ & 1; }
  // As one word and back (kmer classify keeps a batch's lookups in place of their k-mers).
  uint64_t word() const { return bits_; }
  static TaxaList from_word(uint64_t word) {
    TaxaList t;
    t.bits_ = static_cast<uintptr_t>(word);
    return t;
  }

 private:
  uintptr_t bits_ = 0;
  bool is_list() const { return bits_ != 0 && !(bits_ & 1); }
  const uint32_t* list() const { return reinterpret_cast<const uint32_t*>(bits_); }
};
static_assert(sizeof(TaxaList) == sizeof(uint64_t), "one word per k-mer");

class Database {
 public:
  // Throws kmer::Error naming the file: wrong magic, other version, bad header CRC,
  // truncated file, section outside the file, bad taxonomy CRC.
  static Database open(const std::string& path, const dimmap::Placement& placement);
  // On a plain read-only mmap (no placement flags needed): for tools and tests.
  static Database open(const std::string& path);

  Database() = default;
  Database(Database&&) noexcept = default;
  Database& operator=(Database&&) noexcept = default;

  const DbHeader& header() const { return *header_; }
  unsigned k() const { return header_->k; }
  IndexKind kind() const { return static_cast<IndexKind>(header_->index_kind); }
  const Taxonomy& taxonomy() const { return taxonomy_; }
  const std::string& path() const { return region_->path(); }
  const dimmap::Region& region() const { return *region_; }
  uint64_t file_bytes() const { return header_->file_bytes; }

  // The taxa of a canonical k-mer; empty if the k-mer is not in the DB.
  TaxaList lookup(uint64_t canonical_kmer) const {
    return kind() == IndexKind::two_level ? lookup_two_level(canonical_kmer)
                                          : lookup_gnu_hash(canonical_kmer);
  }
  TaxaList lookup_two_level(uint64_t kmer) const;
  TaxaList lookup_gnu_hash(uint64_t kmer) const;

  // Software prefetch for a k-mer looked up soon: stage 1 touches the cache line of its
  // first-level entry (or hash bucket); stage 2, a few k-mers later, reads that entry and
  // prefetches the middle of its second-level list. Prefetches never fault a page in.
  void prefetch_stage1(uint64_t kmer) const {
    if (first_level_)
      __builtin_prefetch(first_level_ + (suffix_bits_ >= 64 ? 0 : kmer >> suffix_bits_));
    else
      __builtin_prefetch(buckets_ + kmer % header_->bucket_count);
  }
  void prefetch_stage2(uint64_t kmer) const {
    if (!first_level_) return;
    const uint64_t fl = first_level_[suffix_bits_ >= 64 ? 0 : kmer >> suffix_bits_];
    const uint64_t mid = (fl & ((uint64_t{1} << kFirstLevelStartBits) - 1)) + (fl >> kFirstLevelStartBits) / 2;
    __builtin_prefetch(static_cast<const uint8_t*>(second_level_) + mid * header_->entry_bytes);
  }

  // For read-ahead hints: the bytes a lookup of this k-mer reads besides its first-level entry
  // (two-level: its bucket of the second level, empty if the bucket is; gnu-hash: its hash
  // bucket word). Reads the first-level entry (see first_level_entry).
  struct Span {
    const uint8_t* begin;
    const uint8_t* end;
  };
  Span lookup_span(uint64_t kmer) const {
    if (!first_level_) {
      const auto* b = reinterpret_cast<const uint8_t*>(buckets_ + kmer % header_->bucket_count);
      return {b, b + sizeof(uint64_t)};
    }
    const uint64_t fl = first_level_[suffix_bits_ >= 64 ? 0 : kmer >> suffix_bits_];
    const auto* b = static_cast<const uint8_t*>(second_level_) +
                    (fl & ((uint64_t{1} << kFirstLevelStartBits) - 1)) * header_->entry_bytes;
    return {b, b + (fl >> kFirstLevelStartBits) * header_->entry_bytes};
  }

  // For read-ahead hints: the address of the first-level entry a two-level lookup of this
  // k-mer reads first (nullptr for gnu-hash). Reads nothing: sorted k-mers give ascending
  // addresses, so the pages of a run's entries can be requested before any is read.
  const uint64_t* first_level_entry(uint64_t kmer) const {
    if (!first_level_) return nullptr;
    return first_level_ + (suffix_bits_ >= 64 ? 0 : kmer >> suffix_bits_);
  }

  // Checks every section's CRC; throws kmer::Error naming the first bad section.
  void verify() const;

  // Calls f(kmer, TaxaList) for every k-mer in the DB (two-level: in k-mer order).
  template <typename F>
  void for_each(F&& f) const;

 private:
  // Held by pointer: dimmap::Region's inline default constructor does not compile outside
  // libdimmap (its DontneedHelper is incomplete there).
  std::unique_ptr<dimmap::Region> region_;
  const DbHeader* header_ = nullptr;
  const uint8_t* base_ = nullptr;
  const uint32_t* values_ = nullptr;
  const uint64_t* first_level_ = nullptr;
  const void* second_level_ = nullptr;
  const uint32_t* value_codes_ = nullptr;  // compact two-level entries only
  const uint64_t* buckets_ = nullptr;
  const HashNode* nodes_ = nullptr;
  unsigned suffix_bits_ = 0;
  uint64_t suffix_mask_ = 0;
  Taxonomy taxonomy_;

  void attach(const std::string& path);
  TaxaList value_to_list(uint64_t value) const {
    if (value & kInlineTaxon) return TaxaList::from_inline(static_cast<uint32_t>(value & ~kInlineTaxon));
    return TaxaList::from_list(values_ + value);
  }
  // An entry's value: compact entries hold a code into the value-code table.
  uint64_t entry_value(const TwoLevelEntry16& e) const { return value_codes_[e.value]; }
  template <typename Entry>
  uint64_t entry_value(const Entry& e) const { return e.value; }
  template <typename Entry>
  TaxaList search_bucket(const Entry* entries, uint64_t count, uint64_t suffix) const;
  template <typename Entry, typename F>
  void for_each_two_level(F& f) const;
};

template <typename Entry>
TaxaList Database::search_bucket(const Entry* entries, uint64_t count, uint64_t suffix) const {
  // Branch-light binary search inside (usually) one 4 KiB page.
  const Entry* lo = entries;
  while (count > 1) {
    const uint64_t half = count / 2;
    lo = (lo[half].suffix <= suffix) ? lo + half : lo;
    count -= half;
  }
  if (count == 1 && lo->suffix == suffix) return value_to_list(entry_value(*lo));
  return {};
}

template <typename Entry, typename F>
void Database::for_each_two_level(F& f) const {
  const auto* entries = static_cast<const Entry*>(second_level_);
  const uint64_t prefixes = uint64_t{1} << header_->prefix_bits;
  for (uint64_t p = 0; p < prefixes; ++p) {
    const uint64_t fl = first_level_[p];
    const uint64_t start = fl & ((uint64_t{1} << kFirstLevelStartBits) - 1);
    const uint64_t n = fl >> kFirstLevelStartBits;
    for (uint64_t i = 0; i < n; ++i)
      f((p << suffix_bits_) | entries[start + i].suffix, value_to_list(entry_value(entries[start + i])));
  }
}

template <typename F>
void Database::for_each(F&& f) const {
  if (kind() == IndexKind::two_level) {
    if (value_codes_)
      for_each_two_level<TwoLevelEntry16>(f);
    else if (header_->entry_bytes == sizeof(TwoLevelEntry32))
      for_each_two_level<TwoLevelEntry32>(f);
    else
      for_each_two_level<TwoLevelEntry64>(f);
  } else {
    for (uint64_t i = 0; i < header_->kmer_count; ++i) f(nodes_[i].kmer, value_to_list(nodes_[i].value));
  }
}

}  // namespace kmer
