// sequence_reader.hpp - strict reader of sequencing reads and genomes through htslib.
//
// htslib decides the format by the bytes (hts_detect_format), not by the file name:
//  - FASTA/FASTQ, plain, gzip or bgzip (BGZF). The format
//    is decided per record by its first character ('>' FASTA, '@' FASTQ). Multi-line
//    sequences are joined. Malformed input throws kmer::Error naming the file and line: a
//    record that starts with neither '>' nor '@', a FASTQ record without its '+' line,
//    unequal sequence and quality lengths, a FASTA record without bases, a last line without
//    its newline (a file cut mid-line), a file with no record at all, a corrupt or truncated
//    gzip stream, a BGZF file without its end-of-file marker. So a file truncated anywhere
//    inside a record is refused.
//  - SAM, BAM and CRAM, unaligned or aligned. Each primary record is one read (secondary and
//    supplementary alignments are skipped, so each read counts once); a read aligned to the
//    reverse strand is reverse complemented back to the bases as sequenced. Corrupt or
//    truncated data (a BAM/CRAM without its end-of-file marker included) throws kmer::Error
//    naming the file and the last record read; so does a primary record without bases.
//    An aligned CRAM needs its reference: `reference` (a FASTA), else htslib's usual search
//    (the header's UR, REF_PATH, REF_CACHE).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kmer {
namespace detail {
struct TextInput;       // FASTA/FASTQ lines through BGZF (plain, gzip, bgzip)
struct AlignmentInput;  // SAM/BAM/CRAM records through sam_read1
}  // namespace detail

struct SequenceRecord {
  std::string id;        // name up to the first whitespace, without '>' or '@'
  std::string sequence;  // bases as written (case kept, non-ACGT kept)
  uint64_t line = 0;     // FASTA/FASTQ: line of the header; SAM/BAM/CRAM: record number (from 1)
};

struct SequenceReaderOptions {
  std::string reference;  // FASTA for decoding an aligned CRAM ("" = htslib's search)
  unsigned threads = 0;   // CRAM decoding threads (0 or 1 = none)
};

// Fills batch with up to max records of source.next(rec), reusing the batch's storage; returns
// how many were read (for SequenceReader and ReadSource alike).
template <class Source>
size_t read_batch(Source& source, std::vector<SequenceRecord>& batch, size_t max) {
  size_t n = 0;
  while (n < max) {
    if (batch.size() <= n) batch.emplace_back();
    if (!source.next(batch[n])) break;
    ++n;
  }
  batch.resize(n);
  return n;
}

class SequenceReader {
 public:
  explicit SequenceReader(const std::string& path, const SequenceReaderOptions& options = {});
  ~SequenceReader();
  SequenceReader(const SequenceReader&) = delete;
  SequenceReader& operator=(const SequenceReader&) = delete;

  // Fills rec with the next record; false at the end of the file. Throws kmer::Error on an
  // empty file (at the first call) or malformed input.
  bool next(SequenceRecord& rec);
  // Appends up to max records to batch (reusing its storage); returns how many were read.
  size_t next_batch(std::vector<SequenceRecord>& batch, size_t max);

  const std::string& path() const { return path_; }
  uint64_t records_read() const { return records_; }
  // "FASTA/FASTQ", "SAM", "BAM" or "CRAM", with the compression ("gzip", "BGZF") if any.
  const std::string& format() const { return format_; }

 private:
  std::string path_, format_;
  std::unique_ptr<detail::TextInput> text_;
  std::unique_ptr<detail::AlignmentInput> aln_;
  std::string line_;       // current line (without '\n')
  bool have_line_ = false;  // line_ holds a line not consumed yet
  uint64_t line_no_ = 0;
  uint64_t records_ = 0;
  bool line_complete_ = true;  // line_ ended with '\n' (not with the end of the file)
  bool text_format_ = false;   // htslib saw text (FASTA, FASTQ, other text, nothing)

  bool next_text(SequenceRecord& rec);
  bool read_line();  // next line into line_; false at EOF
  void require_complete_line(const std::string& record) const;  // throws if line_ was cut
  [[noreturn]] void fail(const std::string& what) const;
};

}  // namespace kmer
