// memory_probe.cpp - see memory_probe.hpp.
#include "memory_probe.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace dimmap::reliability {

MemorySample sample_memory() {
  MemorySample m;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    uint64_t* field = line.rfind("RssAnon:", 0) == 0 ? &m.rss_anon : line.rfind("RssShmem:", 0) == 0 ? &m.rss_shmem : nullptr;
    if (field) *field = std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10) * 1024;
  }
  // The engine backs each mapping with memfd_create("dimmap"): its allocated blocks are the
  // pages the buffer holds, mapped or not.
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return m;
  for (struct dirent* e; (e = readdir(dir)) != nullptr;) {
    if (e->d_name[0] == '.') continue;
    const std::string link = std::string("/proc/self/fd/") + e->d_name;
    char target[256];
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::strncmp(target, "/memfd:dimmap", 13) != 0) continue;
    struct stat st;
    if (stat(link.c_str(), &st) == 0) m.buffer_bytes += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  closedir(dir);
  return m;
}

}  // namespace dimmap::reliability
