// placement_plan.hpp - the placement vocabulary every dimmap tool shares, in one place.
//
// An application declares its big data structures; the plan turns the user's settings into
// one Placement per structure. The settings, each given by a flag, else a DIMMAP_* variable,
// else the default (the same rule for every setting in every tool):
//
//   setting            flag                         variable                  default
//   placement preset   --placement                  DIMMAP_PLACEMENT          the tool's
//   storage backend    --backend=mmap|dimmap        DIMMAP_BACKEND            mmap
//   DI-MMAP buffer     --buffer=SIZE                DIMMAP_BUFFER             7/8 of the memory limit (uffd: half), <= 256M
//   hot-page share     --hot-fraction=F             DIMMAP_HOT_FRACTION       0.75
//   storage directory  --storage=DIR                DIMMAP_STORAGE            the tool's (".")
//   memory directory   --memory-dir=DIR             DIMMAP_MEMORY_DIR         /dev/shm
//   madvise helper     --dontneed-interval=S        DIMMAP_DONTNEED_INTERVAL  0 (off)
//   one structure      --place-NAME=memory|storage|mmap|dimmap                from the preset
//
// Presets: in-memory (every structure in memory), semi-external (the structures declared
// memory_when_semi_external in memory, the rest on storage), full-external (all on storage).
// "On storage" means a file cached by --backend. Aliases kept for scripts: memory = in-memory,
// external = full-external, mmap = full-external with --backend=mmap, dimmap = full-external
// with --backend=dimmap. --memory-dir=anonymous (or "") means anonymous memory. In
// --storage and --memory-dir, "%r" becomes the MPI rank (set_rank).
//
// validate() checks every setting without opening anything, so a bad value is refused before
// any data is read. All dimmap placements share one buffer, which the plan owns.
#pragma once

#include <dimmap/placement.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dimmap {

enum class Preset { in_memory, semi_external, full_external };
const char* to_string(Preset preset);

// One big data structure of an application (e.g. bfs's "edge", bwa's "sa").
struct Structure {
  std::string name;                        // --place-NAME
  bool memory_when_semi_external = false;  // semi-external keeps it in memory
  bool read_only = true;                   // the --dontneed-interval helper only runs on read-only data
};

// The settings as text, as the command line gives them ("" = not given).
struct PlacementSettings {
  std::string placement, backend, buffer, hot_fraction, storage, memory_dir, dontneed_interval;
  std::map<std::string, std::string> place;  // structure name -> memory|storage|mmap|dimmap
};

// One setting's flag, variable and help text (the same words in every tool's --help).
struct SettingInfo {
  const char* flag;
  const char* variable;  // nullptr for --place-NAME
  const char* help;
};
enum class Setting { placement, backend, buffer, hot_fraction, storage, memory_dir, dontneed_interval, place };
const SettingInfo& setting_info(Setting setting);

// "" or what is wrong with `text` as a value of `setting` (used by the command-line checks).
std::string check_setting(Setting setting, std::string_view text);

class PlacementPlan {
 public:
  // default_storage: where files on storage go without --storage/DIMMAP_STORAGE.
  PlacementPlan(std::vector<Structure> structures, Preset default_preset, std::string default_storage = ".");
  ~PlacementPlan();
  PlacementPlan(const PlacementPlan&) = delete;
  PlacementPlan& operator=(const PlacementPlan&) = delete;

  const std::vector<Structure>& structures() const { return structures_; }
  Preset default_preset() const { return default_preset_; }
  PlacementSettings& settings() { return settings_; }  // what the command line fills

  // Resolves every setting (flag, else variable, else default) and checks it; throws Error
  // naming the flag or variable and the problem. Opens nothing and makes no buffer.
  void validate();
  // "%r" in the storage and memory directories becomes `rank`.
  void set_rank(int rank);

  Preset preset();
  Backend backend();  // the storage backend (mmap or dimmap)
  const std::string& storage_dir();
  bool storage_given();  // --storage or DIMMAP_STORAGE was set
  const std::string& memory_dir();  // "" = anonymous memory
  double hot_fraction();            // < 0: not set (libdimmap's default)

  // Where `structure` lives; throws Error for a name that was not declared.
  Placement placement_of(std::string_view structure);
  // A file on storage or in memory, whatever the preset (for tools with their own layout).
  Placement storage_placement();
  Placement memory_placement();

  // The DI-MMAP buffer size: --buffer, else DIMMAP_BUFFER, else the memory-limit default.
  // The first call prints the size and where it came from on stderr.
  uint64_t buffer_bytes();
  // The buffer every dimmap placement shares (made on first use), or nullptr if none yet.
  std::shared_ptr<Buffer> shared_buffer();
  std::shared_ptr<Buffer> buffer() const { return buffer_; }
  // Forget the shared buffer: the next dimmap placement gets a fresh, cold one (benchmark
  // repeats). Placements already made keep theirs alive.
  void release_buffer() { buffer_.reset(); }

  // The tool name used in the buffer-size message ("dimmap" by default).
  void set_tool_name(std::string name) { tool_ = std::move(name); }

 private:
  struct Resolved;
  const Resolved& resolved();
  Placement make(const std::string& where, const Structure& s);

  std::vector<Structure> structures_;
  Preset default_preset_;
  std::string default_storage_;
  PlacementSettings settings_;
  std::unique_ptr<Resolved> resolved_;
  int rank_ = -1;
  std::string tool_ = "dimmap";
  std::optional<uint64_t> buffer_bytes_;
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace dimmap
