// sam_output.cpp - SAM through libbwa's own printing; BAM and CRAM through htslib.
#include <bwammap/sam_output.hpp>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <htslib/sam.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bwa/bwa.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
extern char* bwa_pg;  // the @PG line bwa_print_sam_hdr() writes (defined in libbwa's bwa.c)
}

namespace bwammap {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && std::equal(s.end() - static_cast<std::ptrdiff_t>(n), s.end(), suffix,
                                     [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

bool readable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

// bwa_print_sam_hdr() prints to stdout; for BAM and CRAM its text is caught in memory instead
// (stdout is swapped for a memory stream while it runs: nothing else prints at that point).
std::string sam_header_text(const bntseq_t* bns, const char* hdr_line, const std::string& pg) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = ::open_memstream(&buf, &len);
  if (!mem) throw dimmap::Error(std::string("cannot make the SAM header: ") + std::strerror(errno));
  std::string pg_line = pg;
  FILE* saved = stdout;
  stdout = mem;
  bwa_pg = pg_line.data();
  bwa_print_sam_hdr(bns, hdr_line);
  bwa_pg = nullptr;
  stdout = saved;
  std::fclose(mem);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

}  // namespace

SamFormat choose_sam_format(const std::string& path, const std::string& output_fmt) {
  std::string f = output_fmt;
  std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (f == "sam") return SamFormat::sam;
  if (f == "bam") return SamFormat::bam;
  if (f == "cram") return SamFormat::cram;
  if (!f.empty()) throw dimmap::Error("--output-fmt: '" + output_fmt + "' is not sam, bam or cram");
  if (ends_with(path, ".bam")) return SamFormat::bam;
  if (ends_with(path, ".cram")) return SamFormat::cram;
  return SamFormat::sam;
}

const char* to_string(SamFormat format) {
  switch (format) {
    case SamFormat::sam: return "SAM";
    case SamFormat::bam: return "BAM";
    case SamFormat::cram: return "CRAM";
  }
  return "?";
}

std::string cram_reference(const std::string& reference, const std::string& index_prefix) {
  if (!reference.empty()) {
    if (!readable_file(reference)) throw dimmap::Error("--reference: cannot read '" + reference + "'");
    return reference;
  }
  if (readable_file(index_prefix)) return index_prefix;
  throw dimmap::Error("CRAM output needs the reference FASTA the index '" + index_prefix +
                      "' was built from: give it with --reference");
}

struct SamOutput::Hts {
  htsFile* file = nullptr;
  sam_hdr_t* header = nullptr;
  bam1_t* record = nullptr;
  kstring_t line = KS_INITIALIZE;
  std::string write_path;  // the temporary file, or "-"
  PendingFiles pending;
  std::string error;  // the first failure
  ~Hts() {
    if (record) bam_destroy1(record);
    if (header) sam_hdr_destroy(header);
    if (file) hts_close(file);
    ks_free(&line);
  }
};

SamOutput::SamOutput(const std::string& path, SamFormat format, const std::string& reference, int threads)
    : path_(path.empty() ? "-" : path), format_(format) {
  if (format == SamFormat::sam) {
    text_ = std::make_unique<OutputStream>(path);
    return;
  }
  hts_ = std::make_unique<Hts>();
  hts_->write_path = path_ == "-" ? path_ : hts_->pending.add(path_);
  hts_->file = sam_open(hts_->write_path.c_str(), format == SamFormat::bam ? "wb" : "wc");
  if (!hts_->file) throw dimmap::Error("cannot create '" + path_ + "': " + std::strerror(errno ? errno : EIO));
  if (format == SamFormat::cram) {
    if (hts_set_fai_filename(hts_->file, reference.c_str()) != 0)
      throw dimmap::Error("cannot use '" + reference + "' as the CRAM reference (is it a FASTA? its .fai writable?)");
    // By default CRAM drops MD and NM and makes them anew when read, after the other tags:
    // stored as bwa wrote them, the records read back in bwa's tag order.
    if (hts_set_opt(hts_->file, CRAM_OPT_STORE_MD, 1) != 0 || hts_set_opt(hts_->file, CRAM_OPT_STORE_NM, 1) != 0)
      throw dimmap::Error("cannot set CRAM options for '" + path_ + "'");
  }
  if (threads > 1 && hts_set_threads(hts_->file, threads) != 0)
    throw dimmap::Error("cannot start " + std::to_string(threads) + " compression threads for '" + path_ + "'");
  hts_->record = bam_init1();
  if (!hts_->record) throw dimmap::Error("out of memory");
}

SamOutput::~SamOutput() = default;

void SamOutput::write_header(const bntseq_t* bns, const char* hdr_line, const std::string& pg) {
  if (text_) {
    std::string pg_line = pg;
    bwa_pg = pg_line.data();
    bwa_print_sam_hdr(bns, hdr_line);
    bwa_pg = nullptr;
    return;
  }
  const std::string text = sam_header_text(bns, hdr_line, pg);
  hts_->header = sam_hdr_parse(text.size(), text.c_str());
  if (!hts_->header) throw dimmap::Error("the SAM header is not valid for " + std::string(to_string(format_)) + ": " + text.substr(0, 200));
  if (sam_hdr_write(hts_->file, hts_->header) != 0) throw dimmap::Error("cannot write the header of '" + path_ + "'");
}

void SamOutput::write(const char* sam) {
  if (text_) {
    text_->write(sam);
    return;
  }
  if (!hts_->error.empty()) return;
  for (const char* p = sam; *p;) {
    const char* end = std::strchr(p, '\n');
    const size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
    hts_->line.l = 0;
    kputsn(p, n, &hts_->line);
    if (sam_parse1(&hts_->line, hts_->header, hts_->record) < 0) {
      hts_->error = "this SAM line cannot be stored in " + std::string(to_string(format_)) + ": " +
                    std::string(p, std::min<size_t>(n, 200)) +
                    " (with -C, FASTA/FASTQ comments must be SAM tags)";
      return;
    }
    if (sam_write1(hts_->file, hts_->header, hts_->record) < 0) {
      hts_->error = std::string("cannot write '") + path_ + "': " + std::strerror(errno ? errno : EIO);
      return;
    }
    p = end ? end + 1 : p + n;
  }
}

void SamOutput::commit() {
  if (text_) {
    text_->commit();
    return;
  }
  const int closed = hts_close(hts_->file);
  hts_->file = nullptr;
  if (!hts_->error.empty()) throw dimmap::Error(hts_->error);
  if (closed != 0) throw dimmap::Error("cannot write '" + path_ + "': " + std::strerror(errno ? errno : EIO));
  if (path_ == "-") return;
  // Durable before it gets its final name, as the SAM output.
  const int fd = ::open(hts_->write_path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw dimmap::Error("cannot write '" + path_ + "': " + std::strerror(err));
  }
  ::close(fd);
  hts_->pending.commit();
}

}  // namespace bwammap
