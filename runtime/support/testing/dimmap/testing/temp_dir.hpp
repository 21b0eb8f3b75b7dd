// temp_dir.hpp - a fresh directory on real disk for one test, removed with its contents.
//
// Where: $DIMMAP_TEST_DIR if set (point it at the file system under test), else the build
// tree's test-scratch directory (DIMMAP_TEST_SCRATCH_DIR, set by the dimmap::test_support
// target): real disk, so O_DIRECT and page-cache behaviour are those of storage, not tmpfs.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dimmap::testing {

inline std::string test_scratch_root() {
  const char* dir = std::getenv("DIMMAP_TEST_DIR");
  if (dir && *dir) return dir;
#ifdef DIMMAP_TEST_SCRATCH_DIR
  return DIMMAP_TEST_SCRATCH_DIR;
#else
  return "/var/tmp";
#endif
}

class TempDir {
 public:
  // "<root>/<prefix>-XXXXXX"; `parent` replaces the root (e.g. /dev/shm for a tmpfs case).
  explicit TempDir(const std::string& prefix = "dimmap-test", const std::string& parent = "") {
    const std::string root = parent.empty() ? test_scratch_root() : parent;
    std::filesystem::create_directories(root);
    std::string tmpl = root + "/" + prefix + "-XXXXXX";
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot create a directory under '" + root + "': " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string str() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string operator/(const std::string& name) const { return file(name); }
  // Writes `text` to file(name) and returns that path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream out(file(name), std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write '" + file(name) + "'");
    return file(name);
  }
  // Names of the entries in the directory (to check that nothing is left behind), sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

}  // namespace dimmap::testing
