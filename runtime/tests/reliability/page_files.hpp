// page_files.hpp - files of pattern pages (pattern.hpp) on disk: create, read back, compare.
#pragma once

#include <dimmap/dimmap.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dimmap::reliability {

// Creates (or truncates) path with `pages` pages of version `version`, fsynced. Throws
// std::runtime_error naming the file on failure.
void create_pattern_file(const std::string& path, uint64_t pages, uint64_t version);

// The version every word of page `page` of fd holds, or -1 if the page is not one version
// of itself (a wrong tag, or words of different versions).
int64_t page_version(int fd, uint64_t page);

// Pages of fd whose version differs from expected[p]; the first few described in *first.
uint64_t count_wrong_pages(int fd, const std::vector<uint64_t>& expected, std::string* first);

// The invariants every buffer keeps, as one line per broken one ("" if all hold):
// misses + hits + write_faults <= faults <= that + recoveries, resident <= buffer, dirty <= resident.
std::string stats_violations(const struct dimmap_stats& s);

// Captures what this process writes to stderr (fd 2) while it lives, e.g. runtime log lines.
class StderrCapture {
 public:
  StderrCapture();
  ~StderrCapture();
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  // Stops capturing (once) and returns the text, which is also echoed to the real stderr.
  std::string finish();

 private:
  int saved_ = -1;
  int file_ = -1;
  std::string text_;
};

}  // namespace dimmap::reliability
