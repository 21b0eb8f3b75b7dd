// placement_plan.hpp - where bwa-mmap keeps the big index arrays.
//
// The placement flags every dimmap tool shares (dimmap::PlacementFlags: --backend, --storage,
// --memory-dir, --buffer, ...) plus one preset:
//   --placement=memory         every array in RAM (anonymous memory, or --memory-dir tmpfs)
//   --placement=mmap           every array in a file, cached by the Linux page cache
//   --placement=dimmap         every array in a file, cached by one DI-MMAP buffer (--buffer)
//   --placement=full-external  every array on storage; --backend says mmap or dimmap
//   --placement=semi-external  (mem only) .pac in RAM, .bwt and .sa on storage (--backend)
// "in-memory" is accepted for "memory", as in the other apps.
#pragma once

#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/placement.hpp>

#include <memory>
#include <string>

namespace bwammap {

// The three arrays of a bwa index that are worth placing (.amb and .ann are tiny).
enum class Structure { bwt, sa, pac };
const char* to_string(Structure s);

class PlacementPlan {
 public:
  // Registers --placement and the shared placement flags in the "Placement" group.
  void add_to(CLI::App& app);

  // The placement for index construction: all big arrays share it. Scratch files go to
  // --storage when given, else to `default_storage_dir` (the index's own directory).
  // Throws dimmap::Error for semi-external (index arrays are anonymous heap blocks, not
  // named structures).
  dimmap::Placement for_index(const std::string& default_storage_dir);

  // The placement of one mapped index file for `bwa-mmap mem`.
  dimmap::Placement for_structure(Structure s);

  // The DI-MMAP buffer, if any placement uses one (for statistics), else nullptr.
  std::shared_ptr<dimmap::Buffer> buffer() const { return buffer_; }

  const std::string& preset() const { return preset_; }

 private:
  dimmap::Backend backend_for(Structure s) const;
  dimmap::Placement make(dimmap::Backend backend, const std::string& storage_dir);

  std::string preset_ = "mmap";
  dimmap::PlacementFlags flags_;
  CLI::Option* storage_option_ = nullptr;
  std::shared_ptr<dimmap::Buffer> buffer_;
};

}  // namespace bwammap
