// launcher.hpp - what dimmap-run does once its arguments are parsed: check the request,
// set the preload's environment, run the command and report how it ended.
#pragma once

#include <dimmap/hpmmap.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "preload_config.hpp"

namespace dimmap::preload {

// A request dimmap-run refuses; the message names the flag and the problem.
class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LaunchOptions {
  std::string placement;    // "" = DIMMAP_PLACEMENT, else mmap, or none when --files is given
  std::string backend;      // "" = DIMMAP_BACKEND, else mmap (with full-external)
  double hot_fraction = -1;  // < 0 = DIMMAP_HOT_FRACTION, else libdimmap's default
  std::vector<std::string> files;  // --files: directories whose read-only mappings use the buffer
  std::string dir;         // "" = default for the placement
  std::string buffer;      // "" = DIMMAP_BUFFER, else from the memory limit (memory_limit.hpp)
  std::string min_alloc;   // "" = from the memory limit (dimmap::default_min_alloc)
  std::string huge_pages = "auto";
  bool reserve_huge_pages = false;
  bool stats = false;
  std::vector<std::string> command;
};

// The checked request, ready to become environment variables.
struct LaunchPlan {
  PlacementKind placement = PlacementKind::mmap;
  std::string dir;  // absolute, "" = anonymous memory
  std::vector<std::string> files;  // resolved --files directories
  uint64_t buffer_bytes = 0;
  bool buffer_given = false;
  double hot_fraction = -1;
  uint64_t min_alloc = 0;
  dimmap_hpmmap_pages huge_pages = DIMMAP_HPMMAP_AUTO;
  bool reserve_huge_pages = false;
  bool stats = false;
  std::vector<std::string> command;
};

// Validates everything that can be checked before the command starts: placement name,
// sizes (parseable, above the minimum, not beyond this machine's memory), the directory
// (exists, writable, not read-only, room for at least one big allocation; tmpfs for
// memory). Throws LaunchError. Warnings (ignored flags) go to stderr.
LaunchPlan plan_launch(const LaunchOptions& opt);

// Sets the environment for the preload (LD_PRELOAD and DIMMAP_RUN_*).
void apply_environment(const LaunchPlan& plan, const std::string& preload_library);

// libdimmap-preload.so next to this executable (build tree) or in the install's library
// directory; DIMMAP_PRELOAD_LIB overrides. Throws LaunchError if it is nowhere.
std::string find_preload_library();

// Runs the command as a child, forwarding SIGTERM, SIGHUP, SIGUSR1/2 and ignoring SIGINT and
// SIGQUIT (the terminal sends those to the child too). Returns its exit status, or 128 +
// signal number if a signal killed it; 127 if the command was not found, 126 if it could not
// be executed. With plan.stats prints one "stats" line with the child's resource usage.
int run_command(const LaunchPlan& plan);

}  // namespace dimmap::preload
