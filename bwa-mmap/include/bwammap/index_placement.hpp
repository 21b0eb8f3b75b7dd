// index_placement.hpp - where bwa-mmap keeps the big index arrays.
//
// The runtime's placement plan (dimmap/placement_plan.hpp) with the three arrays worth placing
// as its structures (.amb and .ann are tiny). Default: full-external on mmap. semi-external
// (mem only) keeps .pac in RAM and .bwt and .sa on storage. --placement=memory|mmap|dimmap
// keep working as the runtime's aliases (memory = in-memory, mmap/dimmap = full-external on
// that backend).
#pragma once

#include <CLI/CLI.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/placement_plan.hpp>

#include <memory>
#include <string>

namespace bwammap {

enum class Structure { bwt, sa, pac };
const char* to_string(Structure s);

class IndexPlacement {
 public:
  IndexPlacement();

  // Registers the runtime's placement settings (the "Placement" group); with per_array,
  // --place-bwt, --place-sa and --place-pac too (mem maps each array on its own).
  void add_to(CLI::App& app, bool per_array = true);

  // The placement for index construction: all big arrays share it. Scratch files go to
  // --storage when given, else to `default_storage_dir` (the index's own directory).
  // Throws dimmap::Error for semi-external (index arrays are anonymous heap blocks, not
  // named structures).
  dimmap::Placement for_index(const std::string& default_storage_dir);

  // The placement of one mapped index file for `bwa-mmap mem`.
  dimmap::Placement for_structure(Structure s);

  // The DI-MMAP buffer, if any placement uses one (for statistics), else nullptr.
  std::shared_ptr<dimmap::Buffer> buffer() const { return plan_->buffer(); }

 private:
  std::unique_ptr<dimmap::PlacementPlan> plan_;
};

}  // namespace bwammap
