// page_files.cpp - see page_files.hpp.
#include "page_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "pattern.hpp"

namespace dimmap::reliability {

void create_pattern_file(const std::string& path, uint64_t pages, uint64_t version) {
  const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  constexpr uint64_t kChunk = 64;  // pages per write
  std::vector<uint64_t> buf(kChunk * kWordsPerPage);
  for (uint64_t first = 0; first < pages; first += kChunk) {
    const uint64_t n = std::min(kChunk, pages - first);
    for (uint64_t i = 0; i < n; ++i) fill_page(&buf[i * kWordsPerPage], first + i, version);
    const ssize_t want = static_cast<ssize_t>(n * kPageBytes);
    if (pwrite(fd, buf.data(), static_cast<size_t>(want), static_cast<off_t>(first * kPageBytes)) != want) {
      const int err = errno;
      close(fd);
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
    }
  }
  fsync(fd);
  close(fd);
}

int64_t page_version(int fd, uint64_t page) {
  alignas(4096) uint64_t buf[kWordsPerPage];  // fd may be O_DIRECT
  if (pread(fd, buf, kPageBytes, static_cast<off_t>(page * kPageBytes)) != static_cast<ssize_t>(kPageBytes))
    return -1;
  const uint64_t v = version_of(buf[0]);
  for (size_t w = 0; w < kWordsPerPage; ++w)
    if (!tag_matches(buf[w], page, w) || version_of(buf[w]) != v) return -1;
  return static_cast<int64_t>(v);
}

uint64_t count_wrong_pages(int fd, const std::vector<uint64_t>& expected, std::string* first) {
  uint64_t wrong = 0;
  for (uint64_t p = 0; p < expected.size(); ++p) {
    const int64_t v = page_version(fd, p);
    if (v == static_cast<int64_t>(expected[p])) continue;
    if (first && wrong < 5)
      *first += "page " + std::to_string(p) + " holds " + (v < 0 ? std::string("a torn or misplaced page") : "version " + std::to_string(v)) +
                ", expected version " + std::to_string(expected[p]) + "; ";
    ++wrong;
  }
  return wrong;
}

std::string stats_violations(const struct dimmap_stats& s) {
  std::string out;
  // The kernel module counts a recovery at its fault; the user-space engine when the page
  // reaches the head of the eviction queue (the kernel mapped it again without a fault).
  const uint64_t sum = s.misses + s.hits + s.write_faults;
  if (s.faults < sum || s.faults > sum + s.recoveries)
    out += "faults " + std::to_string(s.faults) + " outside misses + hits + write_faults = " + std::to_string(sum) +
           " (+ recoveries " + std::to_string(s.recoveries) + ")\n";
  if (s.resident_pages > s.buffer_pages)
    out += "resident pages " + std::to_string(s.resident_pages) + " > buffer pages " + std::to_string(s.buffer_pages) +
           "\n";
  if (s.dirty_pages > s.resident_pages)
    out += "dirty pages " + std::to_string(s.dirty_pages) + " > resident pages " + std::to_string(s.resident_pages) +
           "\n";
  return out;
}

StderrCapture::StderrCapture() {
  std::fflush(stderr);
  char name[] = "/tmp/dimmap-stderr-XXXXXX";
  file_ = mkstemp(name);
  if (file_ < 0) return;
  unlink(name);
  saved_ = dup(2);
  dup2(file_, 2);
}

StderrCapture::~StderrCapture() { finish(); }

std::string StderrCapture::finish() {
  if (saved_ < 0) return text_;
  std::fflush(stderr);
  dup2(saved_, 2);
  close(saved_);
  saved_ = -1;
  char buf[4096];
  for (off_t off = 0;;) {
    const ssize_t n = pread(file_, buf, sizeof buf, off);
    if (n <= 0) break;
    text_.append(buf, static_cast<size_t>(n));
    off += n;
  }
  close(file_);
  std::fputs(text_.c_str(), stderr);
  return text_;
}

}  // namespace dimmap::reliability
