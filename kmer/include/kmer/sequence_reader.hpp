// sequence_reader.hpp - strict FASTA/FASTQ reader, plain or gzip-compressed (zlib).
//
// The format is decided per record by its first character ('>' FASTA, '@' FASTQ).
// Multi-line sequences are joined. Malformed input throws kmer::Error naming the file and
// line: a record that starts with neither '>' nor '@', a FASTQ record without its '+' line,
// unequal sequence and quality lengths, a FASTA record without bases, a last line without
// its newline (a file cut mid-line), a file with no record at all, a corrupt gzip stream.
// So a file truncated anywhere inside a record is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kmer {

struct SequenceRecord {
  std::string id;        // header up to the first whitespace, without '>' or '@'
  std::string sequence;  // bases as written (case kept, non-ACGT kept)
  uint64_t line = 0;     // line of the header, for messages
};

class SequenceReader {
 public:
  explicit SequenceReader(const std::string& path);
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

 private:
  struct Stream;
  std::string path_;
  std::unique_ptr<Stream> in_;
  std::string line_;       // current line (without '\n')
  bool have_line_ = false;  // line_ holds a line not consumed yet
  uint64_t line_no_ = 0;
  uint64_t records_ = 0;
  bool line_complete_ = true;  // line_ ended with '\n' (not with the end of the file)

  bool read_line();  // next line into line_; false at EOF
  void require_complete_line(const std::string& record) const;  // throws if line_ was cut
  [[noreturn]] void fail(const std::string& what) const;
};

}  // namespace kmer
