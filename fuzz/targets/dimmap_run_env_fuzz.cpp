// Fuzz target: what libdimmap-preload.so reads from dimmap-run's environment (DIMMAP_RUN_*:
// placement, directory, sizes, huge-page mode, stats, leader pid). This parser runs inside
// malloc in every preloaded process, before constructors, so it must never crash or
// allocate. One input line per variable ("-" leaves it unset). Properties: a refusal always
// says why; an accepted configuration is usable (a directory for file placements, an arena
// for hpmmap, a non-zero threshold).
//
// dimmap-run's own argument checks (launcher.cpp's plan_launch) are compiled into the
// dimmap-run executable only, not a library, so they are not fuzzed here.
#include <preload_config.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_input.hpp"

namespace {

using namespace dimmap::preload;
const char* const kVariables[] = {kEnvPlacement, kEnvDir, kEnvMinAlloc, kEnvArena, kEnvHugePages, kEnvStats, kEnvLeader};
constexpr size_t kCount = sizeof kVariables / sizeof kVariables[0];

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  dimmap::fuzz::set_environment(data, size, kVariables, kCount);
  PreloadConfig cfg;
  char err[256] = "";
  if (!read_preload_config(&cfg, err, sizeof err)) {
    if (!err[0]) property_failed("a refused configuration gives no reason");
  } else {
    const bool file_backed = cfg.placement == PlacementKind::mmap || cfg.placement == PlacementKind::dimmap;
    if (file_backed && cfg.dir[0] != '/') property_failed("a file placement was accepted without an absolute directory");
    if (cfg.placement == PlacementKind::hpmmap && cfg.arena_bytes == 0) property_failed("hpmmap without an arena");
    if (cfg.placement != PlacementKind::none && cfg.min_alloc == 0) property_failed("a zero allocation threshold");
    if (std::memchr(cfg.dir, '\0', sizeof cfg.dir) == nullptr) property_failed("the directory is not terminated");
    PlacementKind again;
    if (cfg.placement != PlacementKind::none &&
        (!parse_placement(placement_name(cfg.placement), &again) || again != cfg.placement))
      property_failed("placement names do not round-trip");
  }
  for (const char* v : kVariables) unsetenv(v);
  return 0;
}
