// bfs.hpp - HavoqGT-style level-asynchronous BFS.
//
// A visitor (vertex, parent, level) is applied to a vertex in two steps, as in HavoqGT:
// pre_visit atomically lowers the vertex's level and, if it did, the visitor is queued;
// visit, when the visitor is popped, sends a visitor for level + 1 to every neighbour. The
// visitor queue is a priority queue ordered by level, made of 4 KiB chunks that live in a
// memory-mapped file; threads always take the lowest-level chunk available, and nobody
// waits at the end of a level: a thread that runs out of level-L work goes on with level
// L+1 while others finish L. Visitors that arrive out of order simply lower a level again
// (label correcting), so the levels at the end are exact BFS distances and every parent
// is one level up.
//
// The algorithmic data are three memory-mapped arrays (visitor queue, BFS progress,
// vertex cache); the graph is two (vertex data, edge data). Where each lives is the
// caller's choice (see bfs_files.hpp). The vertex cache is one byte per vertex holding
// the level below 254 (254 = deeper, 255 = unreached), and pre_visit lowers it with one
// byte-wide compare-and-swap, so the random accesses of a search stay in a structure 8x
// smaller than the progress words (level << 32 | parent). A progress word is written when
// its vertex is visited, with a parent found among the neighbours the visit reads anyway;
// visitors that bring a parent (the root, remote visitors) and levels from 254 on write it
// in pre_visit, the cache then only saying "254 or deeper".
//
// The engine owns the vertices [first, first + count) of a block partition; visitors to
// other vertices go to per-destination outboxes (the distributed driver exchanges them).
#pragma once

#include <graph/csr.hpp>
#include <graph/types.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace graph {

// Vertices [first, first + count) of this process, and who owns the others.
struct Partition {
  uint64_t vertices = 0;  // global
  uint64_t block = 0;     // vertices per rank (the last rank may have fewer)
  int ranks = 1;
  int rank = 0;

  static Partition block_partition(uint64_t vertices, int ranks, int rank);
  uint64_t first() const { return std::min(vertices, block * static_cast<uint64_t>(rank)); }
  uint64_t count() const { return std::min(vertices, first() + block) - first(); }
  int owner(uint64_t v) const { return static_cast<int>(v / block); }
};

// This process's slice of the CSR: offsets[0] is vertex `first`'s; offsets hold global
// edge indices and targets[0] is global edge `edge_base`.
struct LocalGraph {
  const uint64_t* offsets = nullptr;  // count + 1 entries
  const vertex_t* targets = nullptr;
  uint64_t edge_base = 0;
};

// The three algorithmic arrays, wherever they are mapped.
struct BfsArrays {
  uint64_t* progress = nullptr;  // count entries: level << 32 | parent, ~0 = unreached
  uint8_t* cache = nullptr;      // count entries
  void* queue = nullptr;         // visitor queue chunks
  size_t queue_bytes = 0;
};

// Bytes each array needs for `count` local vertices.
size_t progress_bytes(uint64_t count);
size_t cache_bytes(uint64_t count);
size_t queue_bytes(uint64_t count, int threads, unsigned ranges = 1);

struct RemoteVisit {
  vertex_t vertex;  // global id, owned by the destination
  vertex_t parent;
  uint32_t level;
};

struct BfsCounters {
  uint64_t visits = 0;          // visitors expanded
  uint64_t stale = 0;           // visitors skipped because a lower level arrived first
  uint64_t pushes = 0;          // visitors queued locally
  uint64_t remote = 0;          // visitors sent to other ranks
  uint64_t overflow = 0;        // visitors handled on a thread stack because the queue file was full
};

// The order in which the queue hands out visitors of one level. HavoqGT orders its queue by
// (level, vertex) so that on storage a level reads the graph in file order; we approximate
// that with two knobs:
//  ranges      the local vertices are cut into this many ranges (a power of two; fewer if
//              there are fewer vertices) and the queue hands out (level, range) in order, so
//              all threads sweep one level's adjacency lists front to back together, and an
//              edge page is read once per level instead of once per chunk that touches it.
//              Threads gather visitors per range (64 at a time, on the heap) and add them
//              to the range's open chunk for their level, shared by all threads and kept on
//              the heap until it is full or shared, so the queue file gets whole chunks.
//  sort_batch  a thread takes up to this many chunks of the lowest (level, range) at once
//              and expands their vertices in id order (1 = chunk by chunk, in place).
//  queue_readahead  with the queue file on storage: chunks that follow a thread's batch in
//              queue order, which it asks storage for when it takes the batch (0 = none).
struct BfsOrder {
  unsigned sort_batch = 1;
  unsigned ranges = 1;
  unsigned queue_readahead = 0;
};
// What suits a placement: on storage, ranges of ~512 KiB of edge data (at most 256, so
// that 16 threads on 16 ranges read ahead a few MiB, well inside a buffer a quarter of
// the graph); in memory, none.
BfsOrder default_bfs_order(bool graph_on_storage, uint64_t local_edge_bytes);

class LevelAsyncBfs {
 public:
  LevelAsyncBfs(const Partition& part, const LocalGraph& graph, const BfsArrays& arrays, int threads,
                const BfsOrder& order = {});
  ~LevelAsyncBfs();

  // Marks every local vertex unreached (parallel).
  void reset();
  // Applies the seeds (visitors for local vertices), then runs until the local queue is
  // empty. Visitors for remote vertices accumulate in the outboxes.
  void run(const std::vector<RemoteVisit>& seeds);
  // Remote visitors gathered since the last call, per destination rank.
  std::vector<std::vector<RemoteVisit>> take_outboxes();

  // Results for local vertex i (0 <= i < count): level or -1, parent or -1.
  int64_t level(uint64_t i) const;
  int64_t parent(uint64_t i) const;
  const BfsCounters& counters() const { return counters_; }
  int threads() const { return threads_; }
  uint32_t vertex_ranges() const { return ranges_; }  // in use: at most BfsOrder::ranges

 private:
  struct Queue;
  struct OpenChunk;
  struct Worker;
  Partition part_;
  LocalGraph graph_;
  BfsArrays arrays_;
  int threads_;
  unsigned sort_batch_;
  unsigned queue_readahead_;
  uint32_t ranges_ = 1;        // vertex ranges in use
  unsigned range_shift_ = 0;   // local vertex >> range_shift_ = its range
  std::unique_ptr<Queue> queue_;
  // Open chunks: per vertex range, `lanes_` of them for each level parity. Two levels are
  // filled at once whenever threads expand adjacent levels (level-asynchronous search);
  // with one open chunk per range they took turns publishing each other's chunk after
  // every 64 visitors, and the queue filled up with chunks a few percent full (a 35 MiB
  // buffer search once overflowed the queue file and took twice as long).
  uint32_t lanes_ = 1;
  std::unique_ptr<OpenChunk[]> open_;  // [(range * lanes_ + lane) * 2 + level % 2]
  size_t open_slots() const { return size_t{ranges_} * lanes_ * 2; }
  OpenChunk& open_chunk(uint32_t range, uint32_t lane, uint32_t level);
  std::vector<std::unique_ptr<Worker>> workers_;
  BfsCounters counters_;

  bool claim(uint64_t local, uint32_t level);
  bool record(uint64_t local, vertex_t parent, uint32_t level);
  bool pre_visit(uint64_t local, vertex_t parent, uint32_t level);
  void push(Worker& w, vertex_t vertex, uint32_t level);
  void visit(Worker& w, vertex_t vertex, uint32_t level);
  uint32_t range_of(uint64_t local) const { return static_cast<uint32_t>(local >> range_shift_); }
  uint64_t key(uint32_t level, uint32_t range) const { return uint64_t{level} * ranges_ + range; }
  void seal(Worker& w, OpenChunk& open, uint32_t range);
  void flush(Worker& w, uint32_t range);
  bool share_lowest(Worker& w, uint64_t below);
  void expand(Worker& w, const uint32_t* items, uint32_t count, uint32_t level);
  void prefetch_batch(Worker& w, const uint32_t* items, uint32_t count);
  void prefetch_chunks(Worker& w);
  void drain_overflow(Worker& w);
  void worker_loop(Worker& w);
};

// ---- the verifier (bfs_verify.cpp): the five Graph500 checks ----

struct ValidationReport {
  uint64_t errors = 0;
  uint64_t by_check[6] = {0, 0, 0, 0, 0, 0};  // [k]: violations of check k (0: inconsistent level/parent)
  std::string first_error;
  bool ok() const { return errors == 0; }
};

// Checks the local vertices [first, first + count) of a search from `root` against global
// levels and parents (index = global vertex id):
//  1. the parents form a tree rooted at root (root is its own parent at level 0, no other
//     vertex has level 0, every other reached vertex has a reached parent);
//  2. tree edges join vertices whose levels differ by exactly one;
//  3. every graph edge joins vertices whose levels differ by at most one;
//  4. the tree spans the component: no edge joins a reached and an unreached vertex;
//  5. every tree edge (v, parent[v]) is an edge of the graph.
ValidationReport validate_bfs(const Partition& part, const LocalGraph& graph, const int64_t* levels,
                              const int64_t* parents, uint64_t root);

}  // namespace graph
