// db_writer.hpp - pass 3 of kmer build: lay out the DB file from the sorted k-mer stream.
#pragma once

#include <kmer/db_format.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kmer {

#pragma pack(push, 1)
struct StreamRecord {  // one distinct k-mer, in increasing order
  uint64_t kmer;
  uint32_t value;  // kInlineTaxon | taxid, or word offset of the list in the value store
};
#pragma pack(pop)
static_assert(sizeof(StreamRecord) == 12);

struct WriterInput {
  IndexKind kind = IndexKind::two_level;
  unsigned k = 18;
  unsigned max_taxa = 0;
  std::string stream_path;  // StreamRecords
  uint64_t kmers = 0;
  std::string values_path;  // uint32 words
  uint64_t value_words = 0;
  uint64_t lists = 0;
  uint64_t inline_kmers = 0;
  uint64_t genomes = 0;
  uint64_t bases = 0;
  std::vector<uint8_t> taxonomy;  // encoded section
  CompactEntries compact = CompactEntries::automatic;
  bool progress = true;
};

// Two-level: first-level bits for n k-mers (about 64 entries per list) and the entry size:
// 4-byte compact entries when `distinct_values` fit in 16-bit codes and 16-bit suffixes
// cost at most a 4x bigger first level (automatic) or whenever they fit (always), else 8
// bytes (32-bit suffixes) or 16.
struct TwoLevelShape {
  unsigned prefix_bits;
  unsigned entry_bytes;
};
TwoLevelShape choose_two_level_shape(uint64_t kmers, unsigned k, uint64_t distinct_values,
                                     CompactEntries compact = CompactEntries::automatic);

// Writes the DB to a temporary file next to out_path and renames it over out_path at the
// end; on any error the temporary file is removed. Returns the file size.
uint64_t write_database(const WriterInput& in, const std::string& out_path);

}  // namespace kmer
