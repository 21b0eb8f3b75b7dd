// preload_config.cpp - reading dimmap-run's environment variables without allocating.
#include "preload_config.hpp"

#include <dimmap/dimmap.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dimmap::preload {
namespace {

// Strictly decimal, no sign, no junk.
bool parse_u64(const char* text, uint64_t* out) {
  if (!text || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

}  // namespace

bool parse_placement(const char* text, PlacementKind* out) {
  static const struct {
    const char* name;
    PlacementKind kind;
  } names[] = {{"memory", PlacementKind::memory},
               {"mmap", PlacementKind::mmap},
               {"dimmap", PlacementKind::dimmap},
               {"hpmmap", PlacementKind::hpmmap}};
  for (const auto& n : names) {
    if (text && !std::strcmp(text, n.name)) {
      *out = n.kind;
      return true;
    }
  }
  return false;
}

const char* placement_name(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::none: return "none";
    case PlacementKind::memory: return "memory";
    case PlacementKind::mmap: return "mmap";
    case PlacementKind::dimmap: return "dimmap";
    case PlacementKind::hpmmap: return "hpmmap";
  }
  return "?";
}

bool path_under_dirs(const char* path, const char* dirs) {
  if (!path || path[0] != '/' || !dirs) return false;
  for (const char* d = dirs; *d;) {
    const char* end = std::strchr(d, ':');
    const size_t len = end ? static_cast<size_t>(end - d) : std::strlen(d);
    // "/" itself holds everything; otherwise the directory and then a '/'.
    if (len == 1 && d[0] == '/') return true;
    if (len > 0 && std::strncmp(path, d, len) == 0 && path[len] == '/') return true;
    if (!end) break;
    d = end + 1;
  }
  return false;
}

bool read_preload_config(PreloadConfig* cfg, char* err, size_t err_len) {
  *cfg = PreloadConfig();
  const char* v = std::getenv(kEnvFiles);
  if (v && *v) {
    if (std::strlen(v) >= sizeof cfg->files) {
      std::snprintf(err, err_len, "%s is longer than %zu bytes", kEnvFiles, sizeof cfg->files - 1);
      return false;
    }
    for (const char* d = v; d;) {
      if (*d != '/') {
        std::snprintf(err, err_len, "%s='%s': every directory must be an absolute path", kEnvFiles, v);
        return false;
      }
      d = std::strchr(d, ':');
      if (d) ++d;
    }
    std::strcpy(cfg->files, v);
  }
  v = std::getenv(kEnvStats);
  cfg->stats = v && *v && std::strcmp(v, "0") != 0;
  v = std::getenv(kEnvPlacement);
  if (!v || !*v) return true;  // no placement: big allocations stay on the heap
  if (!parse_placement(v, &cfg->placement)) {
    std::snprintf(err, err_len, "%s='%s' is not memory, mmap, dimmap or hpmmap", kEnvPlacement, v);
    return false;
  }
  if ((v = std::getenv(kEnvDir)) && *v) {
    if (v[0] != '/' || std::strlen(v) >= sizeof cfg->dir) {
      std::snprintf(err, err_len, "%s='%s' must be an absolute path shorter than %zu bytes", kEnvDir, v,
                    sizeof cfg->dir);
      return false;
    }
    std::strcpy(cfg->dir, v);
  }
  if ((cfg->placement == PlacementKind::mmap || cfg->placement == PlacementKind::dimmap) && !cfg->dir[0]) {
    std::snprintf(err, err_len, "%s=%s needs %s", kEnvPlacement, placement_name(cfg->placement), kEnvDir);
    return false;
  }
  if ((v = std::getenv(kEnvMinAlloc)) && *v) {
    if (!parse_u64(v, &cfg->min_alloc) || cfg->min_alloc == 0) {
      std::snprintf(err, err_len, "%s='%s' is not a byte count above 0", kEnvMinAlloc, v);
      return false;
    }
  }
  if ((v = std::getenv(kEnvArena)) && *v) {
    if (!parse_u64(v, &cfg->arena_bytes)) {
      std::snprintf(err, err_len, "%s='%s' is not a byte count", kEnvArena, v);
      return false;
    }
  }
  if (cfg->placement == PlacementKind::hpmmap && cfg->arena_bytes == 0) {
    std::snprintf(err, err_len, "%s=hpmmap needs %s (the arena size in bytes)", kEnvPlacement, kEnvArena);
    return false;
  }
  if ((v = std::getenv(kEnvHugePages)) && *v && dimmap_hpmmap_parse_pages(v, &cfg->huge_pages) < 0) {
    std::snprintf(err, err_len, "%s='%s' is not auto, hugetlb, thp or small", kEnvHugePages, v);
    return false;
  }
  uint64_t leader = 0;
  if ((v = std::getenv(kEnvLeader)) && *v && parse_u64(v, &leader)) cfg->leader_pid = static_cast<long>(leader);
  return true;
}

}  // namespace dimmap::preload
