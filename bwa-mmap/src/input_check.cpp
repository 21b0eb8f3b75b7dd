// input_check.cpp - reference and read files checked before libbwa parses them.
#include <bwammap/input_check.hpp>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace bwammap {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw dimmap::Error("'" + path + "': " + problem);
}

// Opens a plain or gzip file (zlib reads both) after checking it is a non-empty regular file.
gzFile open_input(const std::string& path, bool* empty) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail(path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory");
  *empty = S_ISREG(st.st_mode) && st.st_size == 0;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) fail(path, errno ? std::strerror(errno) : "cannot open");
  gzbuffer(gz, 1 << 16);
  return gz;
}

// The first non-space character, or -1 at the end. Throws on a decompression error.
int first_non_space(gzFile gz, const std::string& path) {
  int c;
  while ((c = gzgetc(gz)) != -1)
    if (!std::isspace(c)) return c;
  int err = 0;
  const char* msg = gzerror(gz, &err);
  if (err != Z_OK && err != Z_STREAM_END) fail(path, std::string("cannot decompress: ") + msg);
  return -1;
}

std::string describe_char(int c) {
  if (std::isprint(c)) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c & 0xff);
  return buf;
}

}  // namespace

uint64_t reference_text_bytes(const std::string& path) {
  bool empty = false;
  gzFile gz = open_input(path, &empty);
  uint64_t bytes = 0;
  if (gzdirect(gz)) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) bytes = static_cast<uint64_t>(st.st_size);
  } else {
    static char buf[1 << 16];
    int n;
    while ((n = gzread(gz, buf, sizeof buf)) > 0) bytes += static_cast<uint64_t>(n);
  }
  gzclose(gz);
  return bytes;
}

void check_reference_fasta(const std::string& path) {
  bool empty = false;
  gzFile gz = open_input(path, &empty);
  struct Closer {
    gzFile gz;
    ~Closer() { gzclose(gz); }
  } closer{gz};
  if (empty) fail(path, "the reference FASTA is empty");
  const int first = first_non_space(gz, path);
  if (first == -1) fail(path, "the reference FASTA holds only white space");
  if (first != '>' && first != '@')
    fail(path, "not a FASTA file: it starts with " + describe_char(first) + " where '>' was expected");
  // Walk line by line: header lines start with '>' (or '@'); any other line with a
  // non-space character holds bases. Stop at the first base.
  bool in_header = true;
  bool line_start = false;
  for (int c; (c = gzgetc(gz)) != -1;) {
    if (c == '\n') {
      in_header = false;
      line_start = true;
      continue;
    }
    if (line_start) {
      line_start = false;
      if (c == '>') {
        in_header = true;
        continue;
      }
    }
    if (!in_header && !std::isspace(c)) return;
  }
  int err = 0;
  const char* msg = gzerror(gz, &err);
  if (err != Z_OK && err != Z_STREAM_END) fail(path, std::string("cannot decompress: ") + msg);
  fail(path, "the reference FASTA has no sequence (only header lines)");
}

ReadsFile::ReadsFile(const std::string& path) : path_(path) {
  if (path == "-") {
    gz_ = gzdopen(STDIN_FILENO, "rb");
    if (!gz_) fail("standard input", "cannot read");
    path_ = "standard input";
  } else {
    gz_ = open_input(path, &empty_);
  }
  const int first = first_non_space(gz_, path_);
  if (first == -1) {
    empty_ = true;
    return;
  }
  if (first != '@' && first != '>') {
    gzclose(gz_);
    gz_ = nullptr;
    fail(path_, "not a FASTQ or FASTA file: it starts with " + describe_char(first) +
                    " where '@' or '>' was expected");
  }
  fastq_ = first == '@';
  // Give the record marker back: libbwa's parser looks for it. (Skipped white space it
  // would skip too.)
  gzungetc(first, gz_);
}

ReadsFile::~ReadsFile() {
  if (gz_) gzclose(gz_);
}

}  // namespace bwammap
