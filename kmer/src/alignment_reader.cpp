// alignment_reader.cpp - reads as SAM/BAM/CRAM records (htslib sam_read1), for SequenceReader.
//
// A read's bases are taken from its primary record only: secondary and supplementary
// alignments repeat (or hard-clip) them. Bases of a read aligned to the reverse strand are
// stored reverse complemented, so they are turned back to the read as sequenced.
#include <kmer/error.hpp>

#include <htslib/cram.h>
#include <htslib/hfile.h>

#include <cerrno>
#include <cstring>

#include "sequence_streams.hpp"

namespace kmer::detail {
namespace {

char complement(char base) {
  switch (base) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    default: return base;  // N and the other IUPAC codes: classification skips them anyway
  }
}

std::string last_record(const AlignmentInput& in) {
  return in.number == 0 ? std::string("before the first record")
                        : "after record " + std::to_string(in.number) + " '" + in.last_name + "'";
}

}  // namespace

std::string open_alignment(AlignmentInput& in, hFILE* fp, const std::string& path,
                           const SequenceReaderOptions& options) {
  in.file = hts_hopen(fp, path.c_str(), "r");
  if (!in.file) {
    hclose_abruptly(fp);
    fail_at(path, 0, "cannot open as SAM/BAM/CRAM");
  }
  const htsFormat* fmt = hts_get_format(in.file);
  in.cram = fmt->format == cram;
  const std::string name = fmt->format == bam ? "BAM" : fmt->format == cram ? "CRAM" : "SAM";
  if (fmt->format == cram && !options.reference.empty() &&
      hts_set_fai_filename(in.file, options.reference.c_str()) != 0)
    fail_at(path, 0, "cannot use '" + options.reference + "' as the CRAM reference");
  // Decoding CRAM is the slow part of reading it: 2 threads read 400k reads in 0.28 s
  // instead of 0.47 s. BGZF (BAM) inflates faster than records are parsed; threads there
  // only add hand-offs (0.15 s instead of 0.12 s), so BAM stays on one.
  if (options.threads > 1 && fmt->format == cram) hts_set_threads(in.file, static_cast<int>(options.threads));
  // A BAM or CRAM cut at a block or container boundary decodes cleanly up to the cut: only its
  // missing end-of-file marker tells. (2 and 3: a pipe, an old CRAM without one: no verdict.)
  if (fmt->format == bam) in.eof_marker_missing = bgzf_check_EOF(in.file->fp.bgzf) == 0;
  if (fmt->format == cram) in.eof_marker_missing = cram_check_EOF(in.file->fp.cram) == 0;
  in.header = sam_hdr_read(in.file);
  if (!in.header) fail_at(path, 0, "corrupt or truncated " + name + " header");
  in.record = bam_init1();
  if (!in.record) fail_at(path, 0, "out of memory");
  return fmt->compression == gzip ? name + " (gzip)" : fmt->compression == bgzf && name == "SAM" ? "SAM (BGZF)" : name;
}

bool next_alignment(AlignmentInput& in, const std::string& path, SequenceRecord& rec) {
  bam1_t* b = in.record;
  for (;;) {
    const int status = sam_read1(in.file, in.header, b);
    if (status == -1) {
      if (in.eof_marker_missing)
        fail_at(path, 0, "the file ends " + last_record(in) + " without its end-of-file marker: truncated");
      return false;
    }
    if (status < -1)
      fail_at(path, 0,
              in.cram ? "cannot decode the CRAM data " + last_record(in) +
                            ": corrupt, truncated, or its reference FASTA was not found (give it with --reference)"
                      : "malformed, corrupt or truncated data " + last_record(in));
    ++in.number;
    in.last_name = bam_get_qname(b);
    if (b->core.flag & (BAM_FSECONDARY | BAM_FSUPPLEMENTARY)) continue;
    break;
  }
  const std::string& qname = in.last_name;
  rec.id.assign(qname, 0, qname.find_first_of(" \t"));
  rec.line = in.number;
  const int n = b->core.l_qseq;
  if (n <= 0)
    fail_at(path, 0, "record " + std::to_string(in.number) + " '" + qname + "' has no bases (SEQ '*')");
  rec.sequence.resize(static_cast<size_t>(n));
  const uint8_t* seq = bam_get_seq(b);
  if (b->core.flag & BAM_FREVERSE) {
    for (int i = 0; i < n; ++i) rec.sequence[static_cast<size_t>(n - 1 - i)] = complement(seq_nt16_str[bam_seqi(seq, i)]);
  } else {
    for (int i = 0; i < n; ++i) rec.sequence[static_cast<size_t>(i)] = seq_nt16_str[bam_seqi(seq, i)];
  }
  return true;
}

}  // namespace kmer::detail
