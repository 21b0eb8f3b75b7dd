// sequence_streams.hpp - the two htslib inputs behind SequenceReader (private to libkmer).
#pragma once

#include <kmer/sequence_reader.hpp>

#include <htslib/bgzf.h>
#include <htslib/sam.h>

#include <string>
#include <vector>

namespace kmer::detail {

// FASTA/FASTQ bytes: BGZF reads plain, gzip and bgzip files alike.
struct TextInput {
  BGZF* stream = nullptr;
  bool bgzip = false;  // BGZF blocks (a cut at a block boundary shows only by the EOF marker)
  std::vector<char> buf = std::vector<char>(1 << 17);
  size_t pos = 0, len = 0;
  bool eof = false;
  ~TextInput() {
    if (stream) bgzf_close(stream);
  }
};

// SAM/BAM/CRAM records.
struct AlignmentInput {
  htsFile* file = nullptr;
  sam_hdr_t* header = nullptr;
  bam1_t* record = nullptr;
  bool cram = false;
  bool eof_marker_missing = false;  // BAM/CRAM without its end-of-file marker
  uint64_t number = 0;              // records read, secondary ones included
  std::string last_name;            // of the last record read, for messages
  ~AlignmentInput() {
    if (record) bam_destroy1(record);
    if (header) sam_hdr_destroy(header);
    if (file) hts_close(file);
  }
};

// Opens the SAM/BAM/CRAM file at fp (consumed) and reads its header; returns its format name.
std::string open_alignment(AlignmentInput& in, hFILE* fp, const std::string& path,
                           const SequenceReaderOptions& options);
// The next primary record into rec; false at the end. Throws kmer::Error naming path.
bool next_alignment(AlignmentInput& in, const std::string& path, SequenceRecord& rec);

}  // namespace kmer::detail
