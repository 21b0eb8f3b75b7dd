// replay_main.cpp - runs a fuzz target over files instead of under libFuzzer.
//
// Builds without clang's libFuzzer (gcc, or the sanitizer presets) link this main, so every
// committed corpus input (seeds and regression inputs of fixed crashes) is replayed as a
// unit test:   TARGET FILE_OR_DIR...   (exit 0 when every input ran)
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_input.hpp"

namespace {

void collect(const std::string& path, std::vector<std::string>* files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: cannot read '%s'\n", path.c_str());
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    files->push_back(path);
    return;
  }
  DIR* dir = opendir(path.c_str());
  for (struct dirent* e; dir && (e = readdir(dir)) != nullptr;)
    if (e->d_name[0] != '.') collect(path + "/" + e->d_name, files);
  if (dir) closedir(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) collect(argv[i], &files);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_DIR...)\n", argv[0]);
    return 2;
  }
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("replay: %zu inputs ran cleanly\n", files.size());
  return 0;
}
