// sam_output.hpp - bwa mem's alignments as SAM, BAM or CRAM.
//
// SAM is written as libbwa prints it (byte-identical to `bwa mem`, @PG aside). BAM and CRAM go
// through htslib: the header is the text bwa_print_sam_hdr() prints (@SQ lines, -H/-R lines,
// @PG), each record the SAM line libbwa made, parsed by htslib (sam_parse1), so `samtools view`
// of the file gives bwa mem's lines back. A file is written under a temporary name and renamed
// by commit(), as every output of bwa-mmap (output_file.hpp).
#pragma once

#include <bwammap/output_file.hpp>

#include <bwa/bntseq.h>

#include <memory>
#include <string>

namespace bwammap {

enum class SamFormat { sam, bam, cram };

// --output-fmt when given (sam, bam or cram, any case), else by the file's extension
// (.bam, .cram; anything else, standard output included, is SAM). Throws dimmap::Error.
SamFormat choose_sam_format(const std::string& path, const std::string& output_fmt);
const char* to_string(SamFormat format);

// The reference FASTA CRAM encodes against: `reference` if given, else the index prefix when it
// is the FASTA itself (`bwa index ref.fa` makes the prefix ref.fa). Throws dimmap::Error when
// neither is a readable file.
std::string cram_reference(const std::string& reference, const std::string& index_prefix);

class SamOutput {
 public:
  // path "" or "-": standard output. reference: for CRAM only. threads: BAM/CRAM compression.
  SamOutput(const std::string& path, SamFormat format, const std::string& reference, int threads);
  ~SamOutput();
  SamOutput(const SamOutput&) = delete;
  SamOutput& operator=(const SamOutput&) = delete;

  // bwa mem's header: bwa_print_sam_hdr(bns, hdr_line) with pg as its @PG line.
  void write_header(const bntseq_t* bns, const char* hdr_line, const std::string& pg);
  // One read's SAM lines as libbwa made them ('\n'-terminated). Remembers the first failure
  // instead of throwing (called from the pipeline); commit() reports it.
  void write(const char* sam);
  // Flushes, checks, renames into place. Throws dimmap::Error.
  void commit();
  SamFormat format() const { return format_; }

 private:
  struct Hts;
  std::string path_;
  SamFormat format_;
  std::unique_ptr<OutputStream> text_;  // SAM
  std::unique_ptr<Hts> hts_;            // BAM, CRAM
};

}  // namespace bwammap
