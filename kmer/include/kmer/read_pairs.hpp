// read_pairs.hpp - the reads kmer classify takes: single reads, or mate pairs as one read.
//
// Pairs come from two files (mate 1 from one, mate 2 at the same place in the other: any
// format SequenceReader takes, e.g. R1.fq.gz + R2.fq.gz) or from one file with each mate 2
// right after its mate 1 (interleaved FASTQ, or an unaligned BAM/CRAM as `samtools import -1
// R1 -2 R2` writes it). A pair is classified as one read: its mates' k-mers together, none
// across the join (the mates are joined with an 'N', which no k-mer spans), named after mate 1
// without a "/1" suffix. Mates must carry the same name (up to a "/1", "/2" suffix) and both
// files must hold as many reads: otherwise kmer::Error names the file and the record.
#pragma once

#include <kmer/sequence_reader.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kmer {

struct ReadInput {
  std::string reads;        // single reads, or mates 1
  std::string mates;        // mates 2 ("" = single reads unless interleaved)
  bool interleaved = false; // mates 1 and 2 alternate in `reads`
  SequenceReaderOptions options;
};

class ReadSource {
 public:
  explicit ReadSource(const ReadInput& input);
  // The next read (a pair joined); false at the end. Throws kmer::Error.
  bool next(SequenceRecord& rec);
  // Up to max reads (pairs joined) into batch; returns how many. Throws kmer::Error.
  size_t next_batch(std::vector<SequenceRecord>& batch, size_t max);
  bool paired() const { return paired_; }

 private:
  std::unique_ptr<SequenceReader> first_, second_;  // second_ is null when interleaved
  bool paired_ = false;
  SequenceRecord mate_;
};

// "name/1" and "name/2" -> "name"; other names unchanged.
std::string pair_name(const std::string& id);

}  // namespace kmer
