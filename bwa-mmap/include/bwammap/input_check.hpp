// input_check.hpp - catching bad FASTA/FASTQ input before libbwa sees it.
//
// libbwa's parsers skip anything before the first '>' or '@' and treat a truncated record as
// the end of the file, so a wrong or damaged input would quietly give an empty index or a
// short SAM. These checks turn that into a clear error naming the file.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>

namespace bwammap {

// Throws dimmap::Error unless `path` is a readable, non-empty FASTA (or FASTQ) file, plain or
// gzip-compressed, whose first record marker comes first and which holds at least one base.
// Reads only as far as the first base.
void check_reference_fasta(const std::string& path);

// The reference's size uncompressed, an upper bound on its bases (the file size of a plain
// file; a gzip file is read through). Call after check_reference_fasta.
uint64_t reference_text_bytes(const std::string& path);

// An open read file ("-" = standard input), positioned at its first record. Throws
// dimmap::Error if it cannot be opened or does not start like FASTA/FASTQ. An empty file is
// accepted (bwa mem writes a header-only SAM) and reported by empty().
class ReadsFile {
 public:
  explicit ReadsFile(const std::string& path);
  ~ReadsFile();
  ReadsFile(const ReadsFile&) = delete;
  ReadsFile& operator=(const ReadsFile&) = delete;

  gzFile gz() const { return gz_; }
  const std::string& path() const { return path_; }
  bool empty() const { return empty_; }
  // The first record starts with '@' (FASTQ) rather than '>' (FASTA).
  bool fastq() const { return fastq_; }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
  bool empty_ = false;
  bool fastq_ = false;
};

}  // namespace bwammap
