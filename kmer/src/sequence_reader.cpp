// sequence_reader.cpp - FASTA/FASTQ over zlib's gzread (reads plain files too).
#include <kmer/error.hpp>
#include <kmer/sequence_reader.hpp>

#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace kmer {

struct SequenceReader::Stream {
  gzFile gz = nullptr;
  std::vector<char> buf = std::vector<char>(1 << 17);
  size_t pos = 0, len = 0;
  bool eof = false;
  ~Stream() {
    if (gz) gzclose(gz);
  }
};

SequenceReader::SequenceReader(const std::string& path) : path_(path), in_(new Stream) {
  in_->gz = gzopen(path.c_str(), "rb");
  if (!in_->gz) fail_at(path, 0, std::string("cannot open: ") + std::strerror(errno ? errno : ENOMEM));
  gzbuffer(in_->gz, 1 << 17);
}

SequenceReader::~SequenceReader() = default;

void SequenceReader::fail(const std::string& what) const { fail_at(path_, line_no_, what); }

bool SequenceReader::read_line() {
  line_.clear();
  bool any = false, newline = false;
  for (;;) {
    if (in_->pos == in_->len) {
      if (in_->eof) break;
      const int n = gzread(in_->gz, in_->buf.data(), static_cast<unsigned>(in_->buf.size()));
      if (n < 0) {
        int err = 0;
        const char* msg = gzerror(in_->gz, &err);
        fail_at(path_, line_no_ + 1, std::string("read error: ") + (msg ? msg : "unknown"));
      }
      if (n == 0) {
        // gzread returns 0 both at a clean end and for a truncated gzip member.
        int err = 0;
        const char* msg = gzerror(in_->gz, &err);
        if (err != Z_OK && err != Z_STREAM_END)
          fail_at(path_, line_no_ + 1, std::string("corrupt or truncated gzip data: ") + msg);
        in_->eof = true;
        break;
      }
      in_->pos = 0;
      in_->len = static_cast<size_t>(n);
    }
    any = true;
    const char* start = in_->buf.data() + in_->pos;
    const size_t avail = in_->len - in_->pos;
    const void* nl = std::memchr(start, '\n', avail);
    if (nl) {
      const size_t n = static_cast<const char*>(nl) - start;
      line_.append(start, n);
      in_->pos += n + 1;
      newline = true;
      break;
    }
    line_.append(start, avail);
    in_->pos = in_->len;
  }
  if (!any) return false;
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  ++line_no_;
  line_complete_ = newline;
  return true;
}

// A file cut in the middle of a line (a FASTA sequence line above all) would otherwise read
// as a shorter record: text files from every tool end their last line.
void SequenceReader::require_complete_line(const std::string& record) const {
  if (!line_complete_)
    fail("the file ends inside this line (no newline at the end) of record '" + record + "': truncated");
}

namespace {
std::string header_id(const std::string& line) {
  size_t end = 1;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
  return line.substr(1, end - 1);
}
}  // namespace

bool SequenceReader::next(SequenceRecord& rec) {
  // Skip blank lines between records.
  for (;;) {
    if (!have_line_ && !read_line()) {
      if (records_ == 0) fail_at(path_, 0, "empty file: no FASTA or FASTQ record");
      return false;
    }
    have_line_ = false;
    if (!line_.empty()) break;
  }
  rec.sequence.clear();
  rec.line = line_no_;
  const char kind = line_[0];
  if (kind != '>' && kind != '@')
    fail("expected a FASTA ('>') or FASTQ ('@') header, found '" + line_.substr(0, 20) + "'");
  rec.id = header_id(line_);
  require_complete_line(rec.id);
  if (kind == '>') {
    while (read_line()) {
      if (!line_.empty() && (line_[0] == '>' || line_[0] == '@')) {
        require_complete_line(header_id(line_));
        have_line_ = true;
        break;
      }
      require_complete_line(rec.id);
      rec.sequence += line_;
    }
    if (rec.sequence.empty())
      fail_at(path_, rec.line, "FASTA record '" + rec.id + "' has no sequence: truncated after its header?");
    ++records_;
    return true;
  }
  // FASTQ: sequence lines up to the '+' line, then as many quality characters.
  bool plus = false;
  while (read_line()) {
    require_complete_line(rec.id);
    if (!line_.empty() && line_[0] == '+') {
      plus = true;
      break;
    }
    if (!line_.empty() && line_[0] == '@')
      fail("FASTQ record '" + rec.id + "' (line " + std::to_string(rec.line) +
           ") has no '+' line before the next record");
    rec.sequence += line_;
  }
  if (!plus) fail("FASTQ record '" + rec.id + "' (line " + std::to_string(rec.line) + ") has no '+' line");
  size_t qual = 0;
  while (qual < rec.sequence.size()) {
    if (!read_line())
      fail("FASTQ record '" + rec.id + "': file ends inside the quality string (" + std::to_string(qual) +
           " of " + std::to_string(rec.sequence.size()) + " quality characters)");
    require_complete_line(rec.id);
    qual += line_.size();
  }
  if (qual != rec.sequence.size())
    fail("FASTQ record '" + rec.id + "': sequence has " + std::to_string(rec.sequence.size()) +
         " bases but quality has " + std::to_string(qual) + " characters");
  ++records_;
  return true;
}

size_t SequenceReader::next_batch(std::vector<SequenceRecord>& batch, size_t max) {
  size_t n = 0;
  while (n < max) {
    if (batch.size() <= n) batch.emplace_back();
    if (!next(batch[n])) break;
    ++n;
  }
  batch.resize(n);
  return n;
}

}  // namespace kmer
