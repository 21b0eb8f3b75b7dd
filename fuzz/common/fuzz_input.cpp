// fuzz_input.cpp - see fuzz_input.hpp.
#include "fuzz_input.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dimmap::fuzz {

std::vector<std::string_view> split_parts(const uint8_t* data, size_t size, size_t parts) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t at = rest.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kPartSeparator.size());
  }
  out.push_back(rest);
  while (out.size() < parts) out.emplace_back();
  return out;
}

std::vector<std::string> split_lines(const uint8_t* data, size_t size, size_t max_lines) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> out;
  while (!rest.empty() && out.size() + 1 < max_lines) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) break;
    out.emplace_back(rest.substr(0, nl));
    rest.remove_prefix(nl + 1);
  }
  out.emplace_back(rest);
  return out;
}

std::vector<std::string> set_environment(const uint8_t* data, size_t size, const char* const* names, size_t count) {
  const auto lines = split_lines(data, size, count);
  for (size_t i = 0; i < count; ++i) {
    if (i < lines.size() && lines[i] != "-")
      setenv(names[i], lines[i].substr(0, lines[i].find('\0')).c_str(), 1);
    else
      unsetenv(names[i]);
  }
  return lines;
}

namespace {

std::string g_scratch;

void remove_scratch() {
  if (g_scratch.empty()) return;
  nftw(
      g_scratch.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return remove(path); }, 8,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace

const std::string& scratch_dir() {
  if (g_scratch.empty()) {
    char templ[] = "/dev/shm/dimmap-fuzz-XXXXXX";
    if (!mkdtemp(templ)) property_failed(std::string("cannot create a scratch directory: ") + std::strerror(errno));
    g_scratch = templ;
    std::atexit(remove_scratch);
  }
  return g_scratch;
}

std::string write_scratch_file(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) property_failed("cannot create " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) property_failed("cannot write " + path + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  close(fd);
  return path;
}

void property_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz: property broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace dimmap::fuzz
