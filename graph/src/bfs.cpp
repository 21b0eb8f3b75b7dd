// bfs.cpp - the level-asynchronous BFS kernel (its verifier is bfs_verify.cpp).
#include <graph/bfs.hpp>

#include <dimmap/placement.hpp>
#include <omp.h>
#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace graph {
namespace {

constexpr uint64_t kUnreachedWord = ~uint64_t{0};
constexpr uint8_t kCacheUnreached = 255;
constexpr uint8_t kCacheSaturated = 254;  // level >= 254: ask the progress word
constexpr uint32_t kNoChunk = ~uint32_t{0};
constexpr uint64_t kNoKey = ~uint64_t{0};
constexpr uint32_t kStage = 64;  // visitors a thread gathers per vertex range before taking its lock

// One 4 KiB page of the visitor queue file: visitors for local vertices, all of one level.
struct Chunk {
  static constexpr uint32_t kItems = 1022;
  uint32_t count;
  uint32_t level;
  uint32_t items[kItems];  // local vertex indices
};
static_assert(sizeof(Chunk) == 4096, "a chunk is one page");

inline uint64_t load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline uint8_t load(const uint8_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline uint32_t level_of(uint64_t word) { return static_cast<uint32_t>(word >> 32); }

}  // namespace

Partition Partition::block_partition(uint64_t vertices, int ranks, int rank) {
  Partition p;
  p.vertices = vertices;
  p.ranks = std::max(ranks, 1);
  p.rank = rank;
  p.block = std::max<uint64_t>(1, (vertices + static_cast<uint64_t>(p.ranks) - 1) / static_cast<uint64_t>(p.ranks));
  return p;
}

size_t progress_bytes(uint64_t count) { return std::max<uint64_t>(count, 1) * sizeof(uint64_t); }
size_t cache_bytes(uint64_t count) { return std::max<uint64_t>(count, 1); }
size_t queue_bytes(uint64_t count, int threads, unsigned ranges) {
  // Every vertex queued up to twice (a level corrected by a late visitor queues it again:
  // 1.0-1.6 visitors per reached vertex on R-MAT graphs), plus partly filled chunks: per
  // vertex range (at least one per thread) the open chunk of the level being filled and
  // partial chunks of it and of the level being expanded shared early, and some per
  // thread. More is absorbed by the overflow path, which costs speed (unsorted visits
  // without read-ahead), not correctness. Only chunks in use take memory.
  const uint64_t partial = 4 * std::max<uint64_t>(ranges, threads) + 8 * static_cast<uint64_t>(std::max(threads, 1));
  const uint64_t chunks = 2 * ((count + Chunk::kItems - 1) / Chunk::kItems) + partial + 16;
  return chunks * sizeof(Chunk);
}

BfsOrder default_bfs_order(bool graph_on_storage, uint64_t local_edge_bytes) {
  if (!graph_on_storage) return {};
  constexpr uint64_t kRangeBytes = 512 << 10, kMaxRanges = 256;
  unsigned ranges = 1;
  while (ranges < kMaxRanges && uint64_t{ranges} * kRangeBytes < local_edge_bytes) ranges *= 2;
  return {4, ranges};
}

// The priority queue: chunk storage in the mapped file, bookkeeping (a few bytes per chunk)
// on the heap under one mutex taken once per chunk, i.e. once per ~1000 visitors. Chunks
// are ordered by key = (level, vertex range): see LevelAsyncBfs's `ranges`.
struct LevelAsyncBfs::Queue {
  Chunk* chunks;
  uint32_t capacity;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint32_t> free_list;
  uint32_t next_unused = 0;
  std::map<uint64_t, std::vector<uint32_t>> buckets;  // by key, no empty bucket
  std::atomic<uint64_t> lowest{kNoKey};               // lowest key queued (written under mu)
  std::atomic<uint64_t> live{0};                      // chunks allocated and not yet released

  Queue(void* memory, size_t bytes)
      : chunks(static_cast<Chunk*>(memory)),
        capacity(static_cast<uint32_t>(std::min<size_t>(bytes / sizeof(Chunk), kNoChunk - 1))) {}

  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    free_list.clear();
    next_unused = 0;
    buckets.clear();
    lowest = kNoKey;
    live = 0;
  }
  bool allocate(uint32_t& idx) {
    std::lock_guard<std::mutex> lock(mu);
    if (!free_list.empty()) {
      idx = free_list.back();
      free_list.pop_back();
    } else if (next_unused < capacity) {
      idx = next_unused++;
    } else {
      return false;
    }
    live.fetch_add(1);
    return true;
  }
  void publish(uint32_t idx, uint64_t key) {
    {
      std::lock_guard<std::mutex> lock(mu);
      buckets[key].push_back(idx);
      if (key < lowest.load(std::memory_order_relaxed)) lowest = key;
    }
    cv.notify_one();
  }
  // Up to `max` chunks of the lowest key, newest first (the likeliest to be cached).
  // The caller holds one extra `live` reference until it has expanded them.
  bool pop(std::vector<uint32_t>& out, unsigned max) {
    std::lock_guard<std::mutex> lock(mu);
    if (buckets.empty()) return false;
    auto first = buckets.begin();
    auto& bucket = first->second;
    out.clear();
    while (!bucket.empty() && out.size() < max) {
      out.push_back(bucket.back());
      bucket.pop_back();
    }
    if (bucket.empty()) buckets.erase(first);
    lowest = buckets.empty() ? kNoKey : buckets.begin()->first;
    live.fetch_add(1);
    return true;
  }
  void unhold() {
    bool idle;
    {
      std::lock_guard<std::mutex> lock(mu);
      idle = live.fetch_sub(1) == 1;
    }
    if (idle) cv.notify_all();
  }
  void release(uint32_t idx) {
    bool idle;
    {
      std::lock_guard<std::mutex> lock(mu);
      free_list.push_back(idx);
      idle = live.fetch_sub(1) == 1;
    }
    if (idle) cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(1), [&] { return !buckets.empty() || live.load() == 0; });
  }
};

// The chunk of one vertex range that threads are filling, shared by all of them.
struct LevelAsyncBfs::OpenChunk {
  std::mutex mu;
  uint32_t chunk = kNoChunk;
};

struct LevelAsyncBfs::Worker {
  std::vector<uint32_t> popped;  // chunk indices taken from the queue
  std::vector<uint32_t> batch;   // their vertices, sorted
  std::vector<struct iovec> ranges;  // pages a batch will read (read-ahead)
  // Visitors of stage_level not yet in the queue file, kStage per vertex range: they go into
  // the range's open chunk in blocks, so the file holds one partly filled chunk per range,
  // not one per range and thread.
  uint32_t stage_level = 0;
  std::vector<uint32_t> stage;   // ranges x kStage
  std::vector<uint32_t> staged;  // per range
  uint64_t staged_total = 0;     // while > 0 the worker holds one `live` reference
  uint32_t lane = 0;             // which of a range's open chunks this thread fills
  std::vector<RemoteVisit> overflow;
  std::vector<std::vector<RemoteVisit>> outboxes;
  BfsCounters counters;
};

LevelAsyncBfs::LevelAsyncBfs(const Partition& part, const LocalGraph& graph, const BfsArrays& arrays, int threads,
                             const BfsOrder& order)
    : part_(part), graph_(graph), arrays_(arrays), threads_(std::max(threads, 1)),
      sort_batch_(std::max(order.sort_batch, 1u)) {
  if (arrays.queue_bytes < 4 * sizeof(Chunk)) throw GraphError("visitor queue file too small");
  // Ranges of 2^range_shift_ vertices, at most order.ranges of them (rounded up to a power of two).
  const uint64_t wanted = std::max(order.ranges, 1u);
  const uint64_t per_range = std::max<uint64_t>(1, (part.count() + wanted - 1) / wanted);
  while ((uint64_t{1} << range_shift_) < per_range) ++range_shift_;
  ranges_ = static_cast<uint32_t>(std::max<uint64_t>(1, (part.count() + (uint64_t{1} << range_shift_) - 1) >> range_shift_));
  queue_ = std::make_unique<Queue>(arrays.queue, arrays.queue_bytes);
  // Few ranges (one, in memory) would make threads queue for the open chunk's lock: then
  // each range has several open chunks ("lanes"), thread t filling lane t % lanes_.
  lanes_ = static_cast<uint32_t>(std::max(1, threads_ / static_cast<int>(ranges_)));
  open_.reset(new OpenChunk[size_t{ranges_} * lanes_]);
  for (int t = 0; t < threads_; ++t) {
    workers_.push_back(std::make_unique<Worker>());
    workers_.back()->outboxes.resize(static_cast<size_t>(part.ranks));
    workers_.back()->stage.resize(size_t{ranges_} * kStage);
    workers_.back()->staged.assign(ranges_, 0);
    workers_.back()->lane = static_cast<uint32_t>(t) % lanes_;
  }
}

LevelAsyncBfs::~LevelAsyncBfs() = default;

void LevelAsyncBfs::reset() {
  const uint64_t n = part_.count();
  const uint64_t block = 1 << 16;
#pragma omp parallel for schedule(dynamic) num_threads(threads_)
  for (uint64_t b = 0; b < n; b += block) {
    const uint64_t len = std::min(block, n - b);
    std::memset(arrays_.progress + b, 0xff, len * sizeof(uint64_t));
    std::memset(arrays_.cache + b, kCacheUnreached, len);
  }
  queue_->clear();
  for (size_t i = 0; i < size_t{ranges_} * lanes_; ++i) open_[i].chunk = kNoChunk;
  counters_ = {};
  for (auto& w : workers_) {
    w->counters = {};
    w->staged.assign(ranges_, 0);
    w->staged_total = 0;
    w->overflow.clear();
    for (auto& box : w->outboxes) box.clear();
  }
}

// pre_visit: lower the vertex's level to `level` with `parent`; true if this visitor won.
inline bool LevelAsyncBfs::pre_visit(uint64_t local, vertex_t parent, uint32_t level) {
  const uint8_t cached = load(arrays_.cache + local);
  if (cached < kCacheSaturated && cached <= level) return false;  // the cache never understates a level
  uint64_t* word = arrays_.progress + local;
  uint64_t current = load(word);
  const uint64_t wanted = (static_cast<uint64_t>(level) << 32) | parent;
  while (level < level_of(current)) {
    if (__atomic_compare_exchange_n(word, &current, wanted, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      __atomic_store_n(arrays_.cache + local, static_cast<uint8_t>(std::min<uint32_t>(level, kCacheSaturated)),
                       __ATOMIC_RELAXED);
      return true;
    }
  }
  return false;
}

// Moves range r's staged visitors into its open chunk; a chunk that fills up, or holds
// another level, goes to the queue. If the queue file is full, the rest overflow to the stack.
void LevelAsyncBfs::flush(Worker& w, uint32_t r) {
  const uint32_t* items = w.stage.data() + size_t{r} * kStage;
  uint32_t n = w.staged[r];
  if (n == 0) return;
  {
    OpenChunk& open = open_[size_t{r} * lanes_ + w.lane];
    std::lock_guard<std::mutex> lock(open.mu);
    while (n > 0) {
      if (open.chunk != kNoChunk) {
        const Chunk& c = queue_->chunks[open.chunk];
        if (c.level != w.stage_level || c.count == Chunk::kItems) {
          queue_->publish(open.chunk, key(c.level, r));
          open.chunk = kNoChunk;
        }
      }
      if (open.chunk == kNoChunk) {
        uint32_t idx;
        if (!queue_->allocate(idx)) {
          w.counters.overflow += n;
          for (; n > 0; --n) w.overflow.push_back({*items++, 0, w.stage_level});
          break;
        }
        queue_->chunks[idx].count = 0;
        queue_->chunks[idx].level = w.stage_level;
        open.chunk = idx;
      }
      Chunk& c = queue_->chunks[open.chunk];
      const uint32_t take = std::min(n, Chunk::kItems - c.count);
      std::memcpy(c.items + c.count, items, take * sizeof(uint32_t));
      c.count += take;
      items += take;
      n -= take;
    }
  }
  w.staged_total -= w.staged[r];
  w.staged[r] = 0;
  if (w.staged_total == 0) queue_->unhold();
}

// Shares the open chunk with the lowest key, if that key is below `below` (the lowest key
// queued), so that a thread out of work gets some; the worker's own staged visitors join
// their chunks first. One chunk at a time: the other ranges keep filling meanwhile, so a
// level is still handed out, and read, in range order.
bool LevelAsyncBfs::share_lowest(Worker& w, uint64_t below) {
  for (uint32_t r = 0; r < ranges_; ++r) {
    if (key(w.stage_level, r) < below) flush(w, r);
    for (uint32_t lane = 0; lane < lanes_; ++lane) {
      OpenChunk& open = open_[size_t{r} * lanes_ + lane];
      std::lock_guard<std::mutex> lock(open.mu);
      if (open.chunk == kNoChunk) continue;
      const uint64_t k = key(queue_->chunks[open.chunk].level, r);
      if (k >= below) continue;
      queue_->publish(open.chunk, k);
      open.chunk = kNoChunk;
      return true;
    }
  }
  return false;
}

// The parent is already in the progress word (pre_visit): a queued visitor is a vertex.
void LevelAsyncBfs::push(Worker& w, vertex_t vertex, uint32_t level) {
  ++w.counters.pushes;
  if (level != w.stage_level) {  // rare: a visitor out of level order; the staged ones go first
    for (uint32_t r = 0; r < ranges_; ++r) flush(w, r);
    w.stage_level = level;
  }
  const uint32_t r = range_of(vertex);
  if (w.staged_total++ == 0) queue_->live.fetch_add(1);
  w.stage[size_t{r} * kStage + w.staged[r]++] = vertex;
  if (w.staged[r] == kStage) flush(w, r);
}

// visit: expand a vertex whose level is still `level` (otherwise a better visitor exists).
void LevelAsyncBfs::visit(Worker& w, vertex_t local, uint32_t level) {
  if (level_of(load(arrays_.progress + local)) != level) {
    ++w.counters.stale;
    return;
  }
  ++w.counters.visits;
  const uint64_t first = part_.first(), count = part_.count();
  const vertex_t self = static_cast<vertex_t>(first + local);
  const vertex_t* t = graph_.targets - graph_.edge_base;
  const uint64_t end = graph_.offsets[local + 1];
  for (uint64_t e = graph_.offsets[local]; e < end; ++e) {
    const uint64_t target = t[e];
    const uint64_t target_local = target - first;  // wraps around for vertices below first
    if (target_local < count) {
      if (pre_visit(target_local, self, level + 1)) push(w, static_cast<vertex_t>(target_local), level + 1);
    } else {
      ++w.counters.remote;
      w.outboxes[static_cast<size_t>(part_.owner(target))].push_back({static_cast<vertex_t>(target), self, level + 1});
    }
  }
}

// Expands visitors of one level. Software pipeline: the vertex records of visitor i+16 and
// the first edges of visitor i+8 are on their way while visitor i is expanded (random
// accesses that would otherwise stall on memory).
void LevelAsyncBfs::expand(Worker& w, const uint32_t* items, uint32_t count, uint32_t level) {
  const vertex_t* targets = graph_.targets - graph_.edge_base;
  for (uint32_t i = 0; i < count; ++i) {
    if (i + 16 < count) {
      __builtin_prefetch(graph_.offsets + items[i + 16]);
      __builtin_prefetch(arrays_.progress + items[i + 16]);
    }
    if (i + 8 < count) __builtin_prefetch(targets + graph_.offsets[items[i + 8]]);
    visit(w, items[i], level);
  }
}

// A batch read from storage: ask for the pages it will read before reading them (vertex
// records first, then the adjacency lists they point to), so the DI-MMAP buffer or the page
// cache (MADV_WILLNEED) fetches them at a deep queue instead of one fault per page per
// thread. Items are sorted, so neighbouring ranges merge into few requests.
void LevelAsyncBfs::prefetch_batch(Worker& w, const uint32_t* items, uint32_t count) {
  constexpr uintptr_t kPage = 4096;
  auto add = [&w](const void* begin, const void* end) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(begin) & ~(kPage - 1);
    const uintptr_t e = reinterpret_cast<uintptr_t>(end);
    if (e <= b) return;
    if (!w.ranges.empty()) {
      struct iovec& last = w.ranges.back();
      const uintptr_t lb = reinterpret_cast<uintptr_t>(last.iov_base), le = lb + last.iov_len;
      if (b >= lb && b <= le + kPage) {
        if (e > le) last.iov_len = e - lb;
        return;
      }
    }
    w.ranges.push_back({reinterpret_cast<void*>(b), e - b});
  };
  w.ranges.clear();
  for (uint32_t i = 0; i < count; ++i) add(graph_.offsets + items[i], graph_.offsets + items[i] + 2);
  dimmap::prefetch(w.ranges.data(), w.ranges.size());
  w.ranges.clear();
  const vertex_t* t = graph_.targets - graph_.edge_base;
  for (uint32_t i = 0; i < count; ++i) add(t + graph_.offsets[items[i]], t + graph_.offsets[items[i] + 1]);
  dimmap::prefetch(w.ranges.data(), w.ranges.size());
}

// Visitors that found the queue file full wait on the thread's own stack.
void LevelAsyncBfs::drain_overflow(Worker& w) {
  while (!w.overflow.empty()) {
    const RemoteVisit v = w.overflow.back();
    w.overflow.pop_back();
    visit(w, v.vertex, v.level);
  }
}

void LevelAsyncBfs::worker_loop(Worker& w) {
  Queue& q = *queue_;
  for (;;) {
    drain_overflow(w);
    if (q.pop(w.popped, sort_batch_)) {
      const uint32_t level = q.chunks[w.popped[0]].level;
      if (sort_batch_ == 1) {  // chunk by chunk: expand it in place
        const Chunk& c = q.chunks[w.popped[0]];
        expand(w, c.items, c.count, level);
        q.release(w.popped[0]);
      } else {  // several: copy out, free the chunks, expand in vertex order
        w.batch.clear();
        for (uint32_t idx : w.popped) {
          const Chunk& c = q.chunks[idx];
          w.batch.insert(w.batch.end(), c.items, c.items + c.count);
          q.release(idx);
        }
        std::sort(w.batch.begin(), w.batch.end());
        prefetch_batch(w, w.batch.data(), static_cast<uint32_t>(w.batch.size()));
        expand(w, w.batch.data(), static_cast<uint32_t>(w.batch.size()), level);
      }
      drain_overflow(w);
      q.unhold();
      share_lowest(w, q.lowest.load(std::memory_order_relaxed));
      continue;
    }
    if (share_lowest(w, kNoKey) || w.staged_total > 0) continue;
    if (q.live.load() == 0) break;
    q.wait();
  }
}

void LevelAsyncBfs::run(const std::vector<RemoteVisit>& seeds) {
  const uint64_t first = part_.first();
#pragma omp parallel num_threads(threads_)
  {
    Worker& w = *workers_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (size_t i = 0; i < seeds.size(); ++i) {
      const uint64_t local = seeds[i].vertex - first;
      if (pre_visit(local, seeds[i].parent, seeds[i].level))
        push(w, static_cast<vertex_t>(local), seeds[i].level);
    }
    worker_loop(w);
  }
  BfsCounters total{};
  for (auto& w : workers_) {
    total.visits += w->counters.visits;
    total.stale += w->counters.stale;
    total.pushes += w->counters.pushes;
    total.remote += w->counters.remote;
    total.overflow += w->counters.overflow;
  }
  counters_ = total;
}

std::vector<std::vector<RemoteVisit>> LevelAsyncBfs::take_outboxes() {
  std::vector<std::vector<RemoteVisit>> merged(static_cast<size_t>(part_.ranks));
  for (auto& w : workers_)
    for (size_t r = 0; r < merged.size(); ++r) {
      merged[r].insert(merged[r].end(), w->outboxes[r].begin(), w->outboxes[r].end());
      w->outboxes[r].clear();
    }
  return merged;
}

int64_t LevelAsyncBfs::level(uint64_t i) const {
  const uint64_t word = arrays_.progress[i];
  return word == kUnreachedWord ? kUnreached : static_cast<int64_t>(level_of(word));
}

int64_t LevelAsyncBfs::parent(uint64_t i) const {
  const uint64_t word = arrays_.progress[i];
  return word == kUnreachedWord ? kUnreached : static_cast<int64_t>(word & 0xffffffffULL);
}

}  // namespace graph
