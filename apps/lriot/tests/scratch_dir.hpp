// scratch_dir.hpp - a fresh directory on real disk (under the build tree) for one test.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace lriot::testing {

class ScratchDir {
 public:
  ScratchDir() {
    static int serial = 0;
    path_ = std::string(LRIOT_TEST_DIR) + "/t." + std::to_string(getpid()) + "." + std::to_string(serial++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace lriot::testing
