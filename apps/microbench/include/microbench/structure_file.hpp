// structure_file.hpp - the micro-benchmarks' data structures, each in a file of its own.
//
// After the dimmap-runtime paper (§5.2): binary search on a sorted vector, lookup in an
// ordered map (red-black tree) and in an unordered map (hash map). Each is built once into a
// file of a chosen size and then mapped read-only on any placement, at any address: the
// vector is a plain array; the maps are Boost.Interprocess containers (offset pointers) in a
// managed_external_buffer. A file whose data set is several times the memory budget is
// queried through the budget (mmap in a memory cgroup, or a DI-MMAP buffer).
//
// File layout: a 4 KiB header, then the structure's area.
#pragma once

#include <dimmap/placement.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace microbench {

enum class Structure : uint32_t { sorted_vector = 1, ordered_map = 2, unordered_map = 3 };

// "sorted-vector", "ordered-map", "unordered-map"; throws dimmap::Error otherwise.
Structure parse_structure(std::string_view text);
const char* to_string(Structure s);

struct Entry {
  uint64_t key;
  uint64_t value;
};

inline constexpr char kMagic[8] = {'D', 'M', 'M', 'B', 'E', 'N', 'C', 'H'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kHeaderBytes = 4096;

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t structure;       // Structure
  uint64_t entries;
  uint64_t seed;            // keys are key_of(i, seed), i < entries
  uint64_t file_bytes;      // the whole file
  uint64_t root_offset;     // from the start of the file: the entries (vector) or the map object
  uint64_t complete;        // 1 once the build finished (written last)
  uint64_t header_check;    // mix of the fields above
};
static_assert(sizeof(FileHeader) <= kHeaderBytes, "");

struct BuildOptions {
  Structure structure = Structure::sorted_vector;
  uint64_t bytes = 0;  // file size; the number of entries follows from it
  uint64_t seed = 1;
  std::string path;
  dimmap::Placement placement = dimmap::Placement::mmap(".");  // where the file is written
  std::function<void(double)> progress;                          // fraction done, may be empty
};

struct BuildReport {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  double seconds = 0;
};

// Builds the structure into path (written under a temporary name, renamed when complete, so
// an interrupted build leaves nothing that looks valid). Throws dimmap::Error.
BuildReport build_structure_file(const BuildOptions& opt);

// A structure file mapped read-only on a placement, its header checked.
class StructureFile {
 public:
  // Throws dimmap::Error naming the file for: not a structure file, wrong version, truncated,
  // unfinished build, corrupt header.
  static StructureFile open(const dimmap::Placement& placement, const std::string& path);

  Structure structure() const { return static_cast<Structure>(header().structure); }
  uint64_t entries() const { return header().entries; }
  uint64_t seed() const { return header().seed; }
  const std::string& path() const { return region_.path(); }
  const dimmap::Region& region() const { return region_; }
  // The structure's root: Entry[entries] for the vector, the container object for the maps.
  const void* root() const { return region_.as<const char>() + header().root_offset; }

 private:
  // From a Region only: a default-constructed Region member cannot be compiled outside
  // libdimmap (its helper type is incomplete here).
  explicit StructureFile(dimmap::Region region) : region_(std::move(region)) {}
  const FileHeader& header() const { return *region_.as<const FileHeader>(); }
  dimmap::Region region_;
};

}  // namespace microbench
