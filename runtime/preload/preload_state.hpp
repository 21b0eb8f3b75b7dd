// preload_state.hpp - what the parts of libdimmap-preload.so share: the per-thread guard that
// keeps the preload's own work off its placements, its configuration, one-line reports and
// the DI-MMAP buffer (one per process, for big allocations and --files mappings alike).
#pragma once

#include <dimmap/dimmap.h>

#include "preload_config.hpp"

namespace dimmap::preload {

class OverlayTable;

// Preload or runtime code on this thread's stack: allocations and mappings made then are the
// preload's own and go straight to glibc and the kernel. initial-exec TLS: reading it never
// allocates (a dynamic TLS block would be allocated with malloc on first use).
extern thread_local int t_depth __attribute__((tls_model("initial-exec")));

struct Guard {
  Guard() { ++t_depth; }
  ~Guard() { --t_depth; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// Reads the configuration on first use (safe before constructors ran).
void ensure_init();
const PreloadConfig& config();
// A child made by fork() without exec: it has no DI-MMAP fault server.
bool in_forked_child();
OverlayTable& overlay_table();
// The process's DI-MMAP buffer, created on first use; NULL (reported once) if it cannot be.
dimmap_instance* get_dimmap();
// One line "dimmap-run[PID]: ..." to stderr, without allocating.
__attribute__((format(printf, 1, 2))) void report(const char* fmt, ...);

}  // namespace dimmap::preload
