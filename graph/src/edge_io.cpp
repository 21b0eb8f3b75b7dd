// edge_io.cpp - binary and text edge readers and writers (HDF5 lives in edge_hdf5.cpp).
#include <graph/edge_io.hpp>
#include <graph/output_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

namespace graph {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int open_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw GraphError("cannot open edge file '" + path + "': " + std::strerror(errno));
  return fd;
}

// Reads as much as possible into buf; returns bytes read (short only at end of file).
size_t read_fully(int fd, char* buf, size_t bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::read(fd, buf + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw GraphError("cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

class BinaryReader : public EdgeReader {
 public:
  explicit BinaryReader(const std::string& path) : path_(path), fd_(open_input(path)) {
    try {
      total_ = edge_count();
    } catch (...) {  // the destructor does not run for a throwing constructor
      ::close(fd_);
      throw;
    }
  }
  ~BinaryReader() override { ::close(fd_); }

  size_t read(Edge* out, size_t max) override {
    const size_t bytes = read_fully(fd_, reinterpret_cast<char*>(out), max * sizeof(Edge), path_);
    if (bytes % sizeof(Edge) != 0) throw GraphError("'" + path_ + "' changed size while being read");
    const size_t n = bytes / sizeof(Edge);
    for (size_t i = 0; i < n; ++i)
      if (out[i].u < 0 || out[i].v < 0)
        throw GraphError("'" + path_ + "': edge " + std::to_string(seen_ + i) + " has a negative vertex id (" +
                         std::to_string(out[i].u) + ", " + std::to_string(out[i].v) + ")");
    seen_ += n;
    return n;
  }
  uint64_t size_hint() const override { return total_; }

 private:
  uint64_t edge_count() const {
    struct stat st;
    if (fstat(fd_, &st) != 0) throw GraphError("cannot stat '" + path_ + "': " + std::strerror(errno));
    if (st.st_size % static_cast<off_t>(sizeof(Edge)) != 0)
      throw GraphError("'" + path_ + "' is " + std::to_string(st.st_size) +
                       " bytes, not a whole number of 16-byte edges (two int64 each): truncated or not "
                       "a Graph500 binary edge file");
    return static_cast<uint64_t>(st.st_size) / sizeof(Edge);
  }

  std::string path_;
  int fd_;
  uint64_t total_ = 0, seen_ = 0;
};

class TextReader : public EdgeReader {
 public:
  explicit TextReader(const std::string& path) : path_(path), fd_(open_input(path)), buf_(1 << 20) {}
  ~TextReader() override { ::close(fd_); }

  size_t read(Edge* out, size_t max) override {
    size_t n = 0;
    while (n < max) {
      std::string_view line;
      if (!next_line(line)) break;
      ++line_no_;
      if (parse_line(line, out[n])) ++n;
    }
    return n;
  }

 private:
  std::string path_;
  int fd_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;
  std::string carry_;  // a line longer than the buffer

  bool next_line(std::string_view& line) {
    carry_.clear();
    for (;;) {
      const char* start = buf_.data() + begin_;
      const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
      if (nl) {
        const size_t len = static_cast<size_t>(nl - start);
        begin_ += len + 1;
        if (carry_.empty()) {
          line = std::string_view(start, len);
        } else {
          carry_.append(start, len);
          line = carry_;
        }
        return true;
      }
      if (eof_) {
        if (begin_ == end_ && carry_.empty()) return false;
        carry_.append(start, end_ - begin_);
        begin_ = end_;
        line = carry_;
        return true;
      }
      // Keep the partial line, refill the buffer.
      if (begin_ < end_) carry_.append(start, end_ - begin_);
      begin_ = 0;
      end_ = read_fully(fd_, buf_.data(), buf_.size(), path_);
      eof_ = end_ < buf_.size();
    }
  }

  [[noreturn]] void fail(const std::string& why, std::string_view line) const {
    std::string shown(line.substr(0, 60));
    throw GraphError("'" + path_ + "' line " + std::to_string(line_no_) + ": " + why + " in \"" + shown + "\"");
  }

  // Parses "u v" (extra whitespace allowed; '#' and '%' start comments). False for blank lines.
  bool parse_line(std::string_view line, Edge& e) const {
    size_t i = 0;
    auto skip_space = [&] {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == ',')) ++i;
    };
    skip_space();
    if (i == line.size() || line[i] == '#' || line[i] == '%') return false;
    int64_t ids[2];
    for (int k = 0; k < 2; ++k) {
      skip_space();
      if (i == line.size()) fail("expected two vertex ids", line);
      if (line[i] == '-') fail("negative vertex id", line);
      auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + line.size(), ids[k]);
      if (ec == std::errc::result_out_of_range) fail("vertex id out of range", line);
      if (ec != std::errc() ) fail("non-numeric vertex id", line);
      i = static_cast<size_t>(ptr - line.data());
      if (i < line.size() && !(line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == ','))
        fail("non-numeric vertex id", line);
    }
    skip_space();
    if (i < line.size() && line[i] != '#' && line[i] != '%') fail("more than two columns", line);
    e = {ids[0], ids[1]};
    return true;
  }
};

class BinaryWriter : public EdgeWriter {
 public:
  explicit BinaryWriter(const std::string& path) : out_(path) {}
  void write(const Edge* edges, size_t count) override { out_.write_array(edges, count); }
  void commit() override { out_.commit(); }

 private:
  OutputFile out_;
};

class TextWriter : public EdgeWriter {
 public:
  explicit TextWriter(const std::string& path) : out_(path) {}
  void write(const Edge* edges, size_t count) override {
    char line[48];
    for (size_t i = 0; i < count; ++i) {
      char* p = std::to_chars(line, line + 20, edges[i].u).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 20, edges[i].v).ptr;
      *p++ = '\n';
      out_.write(line, static_cast<size_t>(p - line));
    }
  }
  void commit() override { out_.commit(); }

 private:
  OutputFile out_;
};

}  // namespace

EdgeFormat parse_edge_format(const std::string& text) {
  if (text == "bin" || text == "binary") return EdgeFormat::bin;
  if (text == "text" || text == "txt") return EdgeFormat::text;
  if (text == "hdf5" || text == "h5") return EdgeFormat::hdf5;
  throw GraphError("unknown edge format '" + text + "' (expected bin, text or hdf5)");
}

EdgeFormat guess_edge_format(const std::string& path) {
  for (const char* ext : {".h5", ".hdf5"})
    if (ends_with(path, ext)) return EdgeFormat::hdf5;
  for (const char* ext : {".txt", ".el", ".tsv", ".edges", ".csv"})
    if (ends_with(path, ext)) return EdgeFormat::text;
  return EdgeFormat::bin;
}

std::unique_ptr<EdgeReader> open_edge_reader(const std::string& path, EdgeFormat format) {
  switch (format) {
    case EdgeFormat::bin: return std::make_unique<BinaryReader>(path);
    case EdgeFormat::text: return std::make_unique<TextReader>(path);
    case EdgeFormat::hdf5: return detail::open_hdf5_edge_reader(path);
  }
  throw GraphError("unknown edge format");
}

std::unique_ptr<EdgeWriter> create_edge_writer(const std::string& path, EdgeFormat format) {
  switch (format) {
    case EdgeFormat::bin: return std::make_unique<BinaryWriter>(path);
    case EdgeFormat::text: return std::make_unique<TextWriter>(path);
    case EdgeFormat::hdf5: return detail::create_hdf5_edge_writer(path);
  }
  throw GraphError("unknown edge format");
}

}  // namespace graph
