// preload_config.hpp - what dimmap-run tells libdimmap-preload.so, through the environment.
//
//   DIMMAP_RUN_PLACEMENT   memory | mmap | dimmap | hpmmap   (unset: big allocations stay on the heap)
//   DIMMAP_RUN_FILES       absolute directories (resolved, ':' between them) whose files the
//                          program maps read-only are mapped through the DI-MMAP buffer
//   DIMMAP_RUN_DIR         absolute directory for backing files ("" = anonymous, memory only)
//   DIMMAP_RUN_MIN_ALLOC   bytes: requests at least this big leave the normal heap
//   DIMMAP_RUN_ARENA       bytes: HPMMAP arena size (hpmmap)
//   DIMMAP_RUN_HUGE_PAGES  auto | hugetlb | thp | small (hpmmap)
//   DIMMAP_RUN_STATS       1: each process that used the preload prints a line at exit
//   DIMMAP_RUN_LEADER      pid of the command dimmap-run started: that process (also after it
//                          execs) reserves its arena at start; its descendants on first use
//   DIMMAP_BUFFER etc.     libdimmap's own variables configure the dimmap buffer
// Parsing allocates nothing, so it is safe inside malloc before constructors have run.
#pragma once

#include <dimmap/hpmmap.h>

#include <cstddef>
#include <cstdint>

namespace dimmap::preload {

enum class PlacementKind { none, memory, mmap, dimmap, hpmmap };

inline constexpr const char* kEnvPlacement = "DIMMAP_RUN_PLACEMENT";
inline constexpr const char* kEnvDir = "DIMMAP_RUN_DIR";
inline constexpr const char* kEnvMinAlloc = "DIMMAP_RUN_MIN_ALLOC";
inline constexpr const char* kEnvArena = "DIMMAP_RUN_ARENA";
inline constexpr const char* kEnvHugePages = "DIMMAP_RUN_HUGE_PAGES";
inline constexpr const char* kEnvStats = "DIMMAP_RUN_STATS";
inline constexpr const char* kEnvLeader = "DIMMAP_RUN_LEADER";
inline constexpr const char* kEnvFiles = "DIMMAP_RUN_FILES";

inline constexpr uint64_t kDefaultMinAlloc = 64ull << 20;

struct PreloadConfig {
  PlacementKind placement = PlacementKind::none;
  char dir[4096] = "";
  uint64_t min_alloc = kDefaultMinAlloc;
  uint64_t arena_bytes = 0;
  dimmap_hpmmap_pages huge_pages = DIMMAP_HPMMAP_AUTO;
  bool stats = false;
  long leader_pid = 0;
  char files[8192] = "";  // DIMMAP_RUN_FILES as given ("" = no file overlay)
};

// "memory", "mmap", "dimmap", "hpmmap" -> kind; false for anything else.
bool parse_placement(const char* text, PlacementKind* out);
const char* placement_name(PlacementKind kind);

// True if `path` (absolute, as /proc/self/fd shows it) is inside one of the ':'-separated
// directories of `dirs` (absolute, resolved, no trailing '/'): "/d/x" is under "/d", "/dx" is not.
bool path_under_dirs(const char* path, const char* dirs);

// Reads the variables above. On a malformed value returns false with a message in err.
bool read_preload_config(PreloadConfig* cfg, char* err, size_t err_len);

}  // namespace dimmap::preload
