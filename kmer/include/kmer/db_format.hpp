// db_format.hpp - the on-disk k-mer database: one position-independent file.
//
// Layout (every section starts on a 4 KiB boundary; all references are offsets):
//   Header                  magic, version, k, index kind, counts, section table, CRC-32s
//   taxonomy section        the lineages of every taxon in the DB (TaxonomyCodec)
//   value store             deduplicated taxa lists, 32-bit words:
//                           n, taxid[n], count[n] (16-bit, padded to a word)
//   two-level index:
//     first level           2^prefix_bits uint64: start entry (40 bits) | entries (24 bits)
//     second level          per prefix, entries sorted by suffix (the low 2k-prefix_bits
//                           bits); a list never straddles a 4 KiB page unless it is longer
//                           than a page. Entry value: kInlineTaxon|taxid for a k-mer found in
//                           one genome only (inline), else the word offset of its list.
//                           Compact entries (4 bytes: 16-bit suffix, 16-bit value code) when
//                           the suffixes fit in 16 bits and the DB has at most 65536 distinct
//                           values: half the bytes of 8-byte entries, so a sweep or a random
//                           lookup reads half the pages.
//     value codes           compact entries only: kValueCodes uint32 values (as above), one
//                           per code, unused codes = kInlineTaxon|0 (no taxa); every 16-bit
//                           code is inside the table, so a corrupt entry cannot read past it.
//   gnu-hash index:
//     buckets               uint64 per bucket: 1 + index of the chain's first node, 0 = empty
//     nodes                 {kmer, 1 + next node (0 = end), word offset of the list}, in
//                           k-mer order, so chains jump between pages like a node-based
//                           std::unordered_map (the paper's GNU hash_map) does
// The value store is shared by both indexes, as in the paper.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kmer {

constexpr char kDbMagic[8] = {'D', 'M', 'K', 'M', 'E', 'R', 'D', 'B'};
constexpr uint32_t kDbVersion = 2;  // 2: compact two-level entries, value codes
constexpr uint64_t kDbPage = 4096;
constexpr uint32_t kInlineTaxon = 0x80000000u;
constexpr unsigned kFirstLevelStartBits = 40;
constexpr uint64_t kValueCodes = uint64_t{1} << 16;
constexpr uint64_t kMaxBucketEntries = (uint64_t{1} << (64 - kFirstLevelStartBits)) - 1;

enum class IndexKind : uint32_t { two_level = 1, gnu_hash = 2 };
const char* to_string(IndexKind kind);
IndexKind parse_index_kind(const char* text);  // "two-level" | "gnu-hash"; throws kmer::Error

// Two-level entry size: compact (4 bytes) when it pays, whenever possible, or never.
enum class CompactEntries { automatic, always, never };
CompactEntries parse_compact_entries(const char* text);  // "auto" | "always" | "never"; throws

enum DbSection : uint32_t {
  kSectionTaxonomy = 0,
  kSectionValues,
  kSectionFirstLevel,   // two-level
  kSectionSecondLevel,  // two-level
  kSectionBuckets,      // gnu-hash
  kSectionNodes,        // gnu-hash
  kSectionValueCodes,   // two-level with compact entries
  kSectionCount
};
const char* section_name(uint32_t section);

struct SectionRef {
  uint64_t offset;
  uint64_t bytes;
  uint32_t crc32;  // zlib CRC-32 of the section's bytes
  uint32_t reserved;
};

struct DbHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;  // sizeof(DbHeader)
  uint32_t index_kind;    // IndexKind
  uint32_t k;
  uint32_t prefix_bits;   // two-level: bits of the first level
  uint32_t entry_bytes;   // two-level: 4 (compact), 8 (32-bit suffixes) or 16 (64-bit)
  uint32_t max_taxa;      // taxa lists longer than this were reduced toward their LCA
  uint32_t reserved0;
  uint64_t kmer_count;
  uint64_t list_count;    // distinct lists in the value store
  uint64_t inline_count;  // two-level: k-mers stored inline
  uint64_t bucket_count;  // gnu-hash
  uint64_t genome_count;
  uint64_t reference_bases;
  uint64_t file_bytes;    // the whole file; a shorter file is truncated
  SectionRef sections[kSectionCount];
  uint32_t reserved1;
  uint32_t header_crc32;  // CRC-32 of this header with header_crc32 = 0
};

struct TwoLevelEntry16 {  // compact: value = code into the value-code table
  uint16_t suffix;
  uint16_t value;
};
struct TwoLevelEntry32 {
  uint32_t suffix;
  uint32_t value;
};
struct TwoLevelEntry64 {
  uint64_t suffix;
  uint32_t value;
  uint32_t reserved;
};
struct HashNode {
  uint64_t kmer;
  uint64_t next;   // 1 + node index, 0 = end of chain
  uint64_t value;  // word offset of the taxa list
};
static_assert(sizeof(TwoLevelEntry16) == 4 && sizeof(TwoLevelEntry32) == 8 && sizeof(TwoLevelEntry64) == 16);
static_assert(sizeof(HashNode) == 24);

// Words a list of n taxa takes in the value store.
inline uint64_t list_words(uint64_t n) { return 1 + n + (n + 1) / 2; }

uint32_t header_crc(const DbHeader& header);

}  // namespace kmer
