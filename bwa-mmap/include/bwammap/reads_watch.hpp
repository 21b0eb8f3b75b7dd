// reads_watch.hpp - strict record checks on libbwa's FASTA/FASTQ reader.
//
// libbwa's kseq_read() takes a FASTQ record cut before its '+' line for a FASTA record, a
// record cut inside its header for one without bases, and a file cut in the middle of a
// FASTA sequence line for a shorter sequence; a truncated gzip stream just ends, and
// bseq_read() stops a read pair at the end of the shorter file. bwa mem aligns whatever came
// through. bwa-mmap mem watches each read file (src/reads_watch.cpp wraps kseq_read and
// gzread at link time) and fails instead, naming the file and the record.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>

namespace bwammap {

class ReadsWatch {
 public:
  // Watches the records libbwa reads from `gz` (a stream opened by ReadsFile) until
  // destroyed. `fastq`: the file's first record starts with '@', so every record must have
  // its '+' line and a quality string as long as its sequence.
  ReadsWatch(gzFile gz, const std::string& path, bool fastq);
  ~ReadsWatch();
  ReadsWatch(const ReadsWatch&) = delete;
  ReadsWatch& operator=(const ReadsWatch&) = delete;

  // The first problem found, as "'<path>': record <n> '<name>' ..." ("" if none). Once a
  // problem is found, libbwa sees the end of the file, so nothing after it is aligned.
  std::string problem() const;
  // Records read and accepted so far.
  int64_t records() const;

  struct Stream;

 private:
  std::unique_ptr<Stream> stream_;
};

}  // namespace bwammap
