// reads_watch.cpp - the kseq_read and gzread wraps behind ReadsWatch (see reads_watch.hpp).
//
// Linked with --wrap=kseq_read,--wrap=gzread into libbwammap.so only, so these see exactly
// libbwa's reads. Streams nobody watches (the reference FASTA while indexing) pass through.
//
// What kseq_read() leaves behind tells the record's shape: after a FASTQ record (one with a
// '+' line) seq->last_char is 0; after a FASTA-style record it holds the marker ('>' or '@')
// of the record it stopped at, or its own marker at the end of the file. A line cut short
// at the end of the file shows only in the file's last byte, which gzread() delivers.
#include <bwammap/reads_watch.hpp>

#include <bwa/kseq.h>

#include <mutex>
#include <vector>

extern "C" {
KSEQ_DECLARE(gzFile)
int __real_kseq_read(kseq_t* seq);
int __wrap_kseq_read(kseq_t* seq);
int __real_gzread(gzFile file, void* buf, unsigned len);
int __wrap_gzread(gzFile file, void* buf, unsigned len);
}

namespace bwammap {

// Touched only by the thread that runs libbwa's reader (one at a time: kt_pipeline's step
// 0), and read by the owner after that thread is joined.
struct ReadsWatch::Stream {
  gzFile gz;
  std::string path;
  bool fastq;
  int64_t records = 0;
  std::string last_name;  // of the last accepted record
  int last_byte = -1;     // the last byte gzread() delivered; -1 before any
  std::string problem;

  std::string record(int64_t n, const char* name) const {
    return "record " + std::to_string(n) + (name && *name ? " '" + std::string(name) + "'" : std::string());
  }
  std::string after_last() const {
    return records == 0 ? std::string("before the first record")
                        : "after " + record(records, last_name.c_str());
  }
  void fail(const std::string& what) {
    if (problem.empty()) problem = "'" + path + "': " + what;
  }
};

namespace {

std::mutex g_mu;
std::vector<ReadsWatch::Stream*> g_streams;

ReadsWatch::Stream* find(gzFile gz) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto* s : g_streams)
    if (s->gz == gz) return s;
  return nullptr;
}

// The verdict on one kseq_read() result; returns what libbwa should see (-1 after a problem).
int check_record(ReadsWatch::Stream& s, kseq_t* seq, int r) {
  const int64_t n = s.records + 1;
  if (r == -2) {
    s.fail(s.record(n, seq->name.s) + " is truncated or damaged: its sequence has " + std::to_string(seq->seq.l) +
           " bases but its quality string " + std::to_string(seq->qual.l) + " characters");
    return -1;
  }
  if (r >= 0) {
    const bool has_plus_line = seq->last_char == 0;
    if (s.fastq && !has_plus_line) {
      s.fail(s.record(n, seq->name.s) + " is truncated: it has no '+' line and quality string");
      return -1;
    }
    if (seq->seq.l == 0) {
      s.fail(s.record(n, seq->name.s) + " is truncated: it has no bases after its header");
      return -1;
    }
    ++s.records;
    s.last_name.assign(seq->name.s, seq->name.l);
    return r;
  }
  // The end of the file: it must end with a complete line.
  if (s.last_byte == '>' || s.last_byte == '@')
    s.fail("the file ends with a record marker '" + std::string(1, static_cast<char>(s.last_byte)) + "' " +
           s.after_last() + ": truncated");
  else if (s.last_byte != -1 && s.last_byte != '\n')
    s.fail("the file ends inside a line of " + s.record(s.records, s.last_name.c_str()) +
           " (no newline at the end): truncated");
  return -1;
}

}  // namespace

ReadsWatch::ReadsWatch(gzFile gz, const std::string& path, bool fastq) : stream_(new Stream{gz, path, fastq, 0, {}, -1, {}}) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_streams.push_back(stream_.get());
}

ReadsWatch::~ReadsWatch() {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto it = g_streams.begin(); it != g_streams.end(); ++it)
    if (*it == stream_.get()) {
      g_streams.erase(it);
      break;
    }
}

std::string ReadsWatch::problem() const { return stream_->problem; }
int64_t ReadsWatch::records() const { return stream_->records; }

}  // namespace bwammap

extern "C" int __wrap_kseq_read(kseq_t* seq) {
  bwammap::ReadsWatch::Stream* s = bwammap::find(seq->f->f);
  if (!s) return __real_kseq_read(seq);
  if (!s->problem.empty()) return -1;
  const int r = __real_kseq_read(seq);
  if (!s->problem.empty()) return -1;  // gzread failed underneath: this record is partial
  return bwammap::check_record(*s, seq, r);
}

extern "C" int __wrap_gzread(gzFile file, void* buf, unsigned len) {
  const int n = __real_gzread(file, buf, len);
  bwammap::ReadsWatch::Stream* s = bwammap::find(file);
  if (!s) return n;
  if (n > 0) {
    s->last_byte = static_cast<unsigned char*>(buf)[n - 1];
    return n;
  }
  // gzread() returns 0 both at a clean end and at the end of a cut gzip stream, and -1 on
  // damaged data; kseq would take either for the end of the file.
  int err = Z_OK;
  const char* msg = gzerror(file, &err);
  if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    std::string why = msg && *msg ? msg : "damaged gzip data";
    if (why.compare(0, s->path.size() + 2, s->path + ": ") == 0) why.erase(0, s->path.size() + 2);  // zlib names it
    s->fail("cannot decompress " + s->after_last() + ": " + why + " (truncated?)");
    s->last_byte = -1;  // the cause is reported; do not also blame the last line
    return 0;
  }
  return 0;
}
