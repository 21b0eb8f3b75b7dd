// database.cpp - open and check a DB file on a placement; the two lookup kernels.
#include <kmer/database.hpp>
#include <kmer/error.hpp>

#include "taxonomy_codec.hpp"

#include <zlib.h>

#include <cstring>

namespace kmer {

const char* to_string(IndexKind kind) {
  switch (kind) {
    case IndexKind::two_level:
      return "two-level";
    case IndexKind::gnu_hash:
      return "gnu-hash";
  }
  return "unknown";
}

IndexKind parse_index_kind(const char* text) {
  if (std::strcmp(text, "two-level") == 0) return IndexKind::two_level;
  if (std::strcmp(text, "gnu-hash") == 0) return IndexKind::gnu_hash;
  throw Error(std::string("unknown index '") + text + "' (expected two-level or gnu-hash)");
}

CompactEntries parse_compact_entries(const char* text) {
  if (std::strcmp(text, "auto") == 0) return CompactEntries::automatic;
  if (std::strcmp(text, "always") == 0) return CompactEntries::always;
  if (std::strcmp(text, "never") == 0) return CompactEntries::never;
  throw Error(std::string("unknown --compact value '") + text + "' (expected auto, always or never)");
}

const char* section_name(uint32_t section) {
  static const char* kNames[kSectionCount] = {"taxonomy", "values", "first-level", "second-level", "buckets", "nodes",
                                               "value-codes"};
  return section < kSectionCount ? kNames[section] : "?";
}

uint32_t header_crc(const DbHeader& header) {
  DbHeader copy = header;
  copy.header_crc32 = 0;
  return static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(&copy), sizeof copy));
}

Database Database::open(const std::string& path, const dimmap::Placement& placement) {
  Database db;
  db.region_ = std::make_unique<dimmap::Region>(dimmap::Region::open(placement, path, dimmap::Access::read_only));
  db.attach(path);
  return db;
}

Database Database::open(const std::string& path) {
  dimmap::Placement p = dimmap::Placement::mmap(".");
  return open(path, p);
}

void Database::attach(const std::string& path) {
  const uint64_t size = region_->size();
  base_ = region_->as<const uint8_t>();
  if (size < sizeof(DbHeader)) fail_at(path, 0, "not a k-mer database: file is too short for a header");
  header_ = reinterpret_cast<const DbHeader*>(base_);
  const DbHeader& h = *header_;
  if (std::memcmp(h.magic, kDbMagic, sizeof h.magic) != 0)
    fail_at(path, 0, "not a k-mer database (wrong magic number)");
  if (h.version != kDbVersion)
    fail_at(path, 0, "k-mer database format version " + std::to_string(h.version) + ", this build reads version " +
                         std::to_string(kDbVersion));
  if (h.header_bytes != sizeof(DbHeader) || header_crc(h) != h.header_crc32)
    fail_at(path, 0, "k-mer database header is corrupt (CRC mismatch)");
  if (h.file_bytes != size)
    fail_at(path, 0, "k-mer database is truncated or padded: header says " + std::to_string(h.file_bytes) +
                         " bytes, file has " + std::to_string(size));
  if (h.k < 1 || h.k > 32) fail_at(path, 0, "k-mer database has an invalid k = " + std::to_string(h.k));
  for (uint32_t s = 0; s < kSectionCount; ++s) {
    const SectionRef& r = h.sections[s];
    if (r.offset > size || r.bytes > size - r.offset)
      fail_at(path, 0, std::string("k-mer database section '") + section_name(s) + "' lies outside the file");
  }
  auto at = [&](DbSection s) { return base_ + h.sections[s].offset; };
  values_ = reinterpret_cast<const uint32_t*>(at(kSectionValues));
  const auto kind = static_cast<IndexKind>(h.index_kind);
  if (kind == IndexKind::two_level) {
    const bool compact = h.entry_bytes == sizeof(TwoLevelEntry16);
    if (h.prefix_bits > 2 * h.k ||
        (!compact && h.entry_bytes != sizeof(TwoLevelEntry32) && h.entry_bytes != sizeof(TwoLevelEntry64)) ||
        (compact && (2 * h.k - h.prefix_bits > 16 ||
                     h.sections[kSectionValueCodes].bytes != kValueCodes * sizeof(uint32_t))) ||
        h.sections[kSectionFirstLevel].bytes != (uint64_t{8} << h.prefix_bits))
      fail_at(path, 0, "k-mer database has an inconsistent two-level index");
    first_level_ = reinterpret_cast<const uint64_t*>(at(kSectionFirstLevel));
    second_level_ = at(kSectionSecondLevel);
    if (compact) value_codes_ = reinterpret_cast<const uint32_t*>(at(kSectionValueCodes));
    suffix_bits_ = 2 * h.k - h.prefix_bits;
    suffix_mask_ = suffix_bits_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << suffix_bits_) - 1;
  } else if (kind == IndexKind::gnu_hash) {
    if (h.bucket_count == 0 || h.sections[kSectionBuckets].bytes != h.bucket_count * 8 ||
        h.sections[kSectionNodes].bytes != h.kmer_count * sizeof(HashNode))
      fail_at(path, 0, "k-mer database has an inconsistent gnu-hash index");
    buckets_ = reinterpret_cast<const uint64_t*>(at(kSectionBuckets));
    nodes_ = reinterpret_cast<const HashNode*>(at(kSectionNodes));
  } else {
    fail_at(path, 0, "k-mer database has an unknown index kind " + std::to_string(h.index_kind));
  }
  const SectionRef& t = h.sections[kSectionTaxonomy];
  if (static_cast<uint32_t>(crc32_z(0L, at(kSectionTaxonomy), t.bytes)) != t.crc32)
    fail_at(path, 0, "k-mer database taxonomy section is corrupt (CRC mismatch)");
  taxonomy_ = decode_taxonomy(at(kSectionTaxonomy), t.bytes, path);
}

TaxaList Database::lookup_two_level(uint64_t kmer) const {
  const uint64_t prefix = suffix_bits_ >= 64 ? 0 : kmer >> suffix_bits_;
  const uint64_t fl = first_level_[prefix];
  const uint64_t start = fl & ((uint64_t{1} << kFirstLevelStartBits) - 1);
  const uint64_t count = fl >> kFirstLevelStartBits;
  if (count == 0) return {};
  const uint64_t suffix = kmer & suffix_mask_;
  if (value_codes_) return search_bucket(static_cast<const TwoLevelEntry16*>(second_level_) + start, count, suffix);
  if (header_->entry_bytes == sizeof(TwoLevelEntry32))
    return search_bucket(static_cast<const TwoLevelEntry32*>(second_level_) + start, count, suffix);
  return search_bucket(static_cast<const TwoLevelEntry64*>(second_level_) + start, count, suffix);
}

TaxaList Database::lookup_gnu_hash(uint64_t kmer) const {
  for (uint64_t n = buckets_[kmer % header_->bucket_count]; n != 0; n = nodes_[n - 1].next)
    if (nodes_[n - 1].kmer == kmer) return value_to_list(nodes_[n - 1].value);
  return {};
}

void Database::verify() const {
  for (uint32_t s = 0; s < kSectionCount; ++s) {
    const SectionRef& r = header_->sections[s];
    if (static_cast<uint32_t>(crc32_z(0L, base_ + r.offset, r.bytes)) != r.crc32)
      fail_at(path(), 0, std::string("k-mer database section '") + section_name(s) + "' is corrupt (CRC mismatch)");
  }
}

}  // namespace kmer
