// bfs_files.hpp - the five memory-mapped files of the BFS and where each one lives.
//
//   queue     visitor queue          (algorithmic, read-write scratch)
//   progress  BFS level/parent        (algorithmic, read-write scratch)
//   cache     vertex level cache      (algorithmic, read-write scratch)
//   vertex    CSR offsets, vertex.dat (graph, read-only)
//   edge      CSR targets, edge.dat   (graph, read-only)
//
// Where each lives comes from a dimmap::PlacementPlan (the runtime's vocabulary) with the five
// files as its structures. Presets, as in the DI-MMAP paper:
//   in-memory      all five in memory (tmpfs --memory-dir, or anonymous memory)
//   semi-external  graph files on storage (--backend), algorithmic files in memory
//   full-external  all five on storage (algorithmic scratch files in --storage)
// Any file can be moved with --place-NAME. All dimmap files share the plan's buffer. In
// --storage and --memory-dir, "%r" becomes the MPI rank.
#pragma once

#include <graph/bfs.hpp>
#include <graph/csr.hpp>

#include <dimmap/placement.hpp>
#include <dimmap/placement_plan.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace graph {

enum class BfsFile { queue, progress, cache, vertex, edge };
inline constexpr std::array<BfsFile, 5> kBfsFiles = {BfsFile::queue, BfsFile::progress, BfsFile::cache,
                                                     BfsFile::vertex, BfsFile::edge};
const char* to_string(BfsFile file);

// A placement plan with the five files as its structures (default preset: in-memory).
std::shared_ptr<dimmap::PlacementPlan> make_bfs_plan();

struct BfsPlacements {
  std::array<dimmap::Placement, 5> file;
  const dimmap::Placement& operator[](BfsFile f) const { return file[static_cast<size_t>(f)]; }
  std::string describe() const;  // "queue=memory(/dev/shm) progress=... "
};

// The five files' placements for MPI rank `rank`; throws dimmap::Error on a bad setting.
BfsPlacements resolve_placements(dimmap::PlacementPlan& plan, int rank);

// The five regions of one process (its slice of the graph in a distributed run).
class BfsFiles {
 public:
  BfsFiles(const std::string& graph_dir, const CsrInfo& info, const Partition& part, const BfsPlacements& where,
           int threads, unsigned vertex_ranges = 1);
  LocalGraph graph() const { return graph_; }
  BfsArrays arrays() const { return arrays_; }
  const dimmap::Region& region(BfsFile f) const { return *regions_[static_cast<size_t>(f)]; }

 private:
  // optional: Region() = default does not compile outside libdimmap (incomplete DontneedHelper).
  std::array<std::optional<dimmap::Region>, 5> regions_;
  LocalGraph graph_;
  BfsArrays arrays_;
  const void* open_slice(BfsFile f, const dimmap::Placement& where, const std::string& path, uint64_t begin,
                         uint64_t bytes, uint64_t file_bytes);
};

}  // namespace graph
