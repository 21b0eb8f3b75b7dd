// bfs_run.hpp - the BFS benchmark driver: roots, timing, TEPS, validation, output files.
// One driver serves the single-process and the MPI runs through the small Comm interface.
#pragma once

#include <graph/bfs.hpp>
#include <graph/bfs_files.hpp>

#include <dimmap/placement_plan.hpp>
#include <dimmap/dimmap.h>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace graph {

// What the driver needs from the process group (one process: SerialComm).
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  virtual double max(double x) = 0;
  virtual void sum(std::vector<uint64_t>& values) = 0;  // element-wise, in place, on every rank
  virtual void broadcast(std::vector<uint64_t>& values) = 0;  // from rank 0 (resizes)
  // Sends outboxes[r] to rank r; returns everything sent to this rank.
  virtual std::vector<RemoteVisit> exchange(std::vector<std::vector<RemoteVisit>>& outboxes) = 0;
  // Concatenates every rank's block (in rank order) into `global` on every rank.
  virtual void allgather(const std::vector<int64_t>& local, std::vector<int64_t>& global) = 0;
  // Any rank's failure becomes every rank's: true if some rank passed `failed`.
  virtual bool any(bool failed) = 0;
};

class SerialComm : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void barrier() override {}
  double max(double x) override { return x; }
  void sum(std::vector<uint64_t>&) override {}
  void broadcast(std::vector<uint64_t>&) override {}
  std::vector<RemoteVisit> exchange(std::vector<std::vector<RemoteVisit>>& outboxes) override;
  void allgather(const std::vector<int64_t>& local, std::vector<int64_t>& global) override { global = local; }
  bool any(bool failed) override { return failed; }
};

struct BfsOptions {
  std::string graph_dir;
  std::shared_ptr<dimmap::PlacementPlan> placement = make_bfs_plan();  // shared by copies
  int threads = 0;                  // 0: OpenMP default (one per core)
  unsigned sort_batch = 0;          // queue chunks expanded in vertex order (0: by placement)
  unsigned vertex_ranges = 0;       // (level, vertex range) queue order (0: by placement)
  std::optional<uint64_t> source;   // one search from this vertex ...
  unsigned roots = 64;              // ... or this many random roots of degree >= 1
  uint64_t seed = 1;
  bool validate = false;
  std::string levels_out, parents_out;  // of the first search
  bool verbose = false;
};

struct RootResult {
  uint64_t root = 0;
  uint64_t visited = 0;
  uint64_t edges = 0;                 // Graph500 count: undirected edges in the component
  std::vector<uint64_t> level_counts;  // vertices per level
  double seconds = 0;
  double teps = 0;
  BfsCounters counters;               // summed over ranks
  bool valid = true;
};

struct BfsSummary {
  std::vector<RootResult> results;
  double harmonic_mean_teps = 0;
  double mean_seconds = 0;  // per search
  bool validated = false, all_valid = true;
  uint64_t vertices = 0, undirected_edges = 0;
  int threads = 0, ranks = 1;
  std::optional<struct dimmap_stats> dimmap_stats;  // summed over ranks, when a file was on DI-MMAP
};

// The run as one JSON object (dimmap/json_summary.hpp): rate = harmonic mean TEPS.
std::string summary_json(const BfsOptions& options, const BfsSummary& summary, double wall_seconds);

// Random distinct roots of degree >= 1 (fewer if the graph has fewer), reproducible from seed.
std::vector<uint64_t> choose_roots(const std::string& graph_dir, const CsrInfo& info, unsigned count, uint64_t seed);

// Runs the searches; rank 0 prints to `out`. Throws GraphError / dimmap::Error.
BfsSummary run_bfs(BfsOptions options, Comm& comm, std::ostream& out);

}  // namespace graph
