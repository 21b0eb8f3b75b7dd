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

// Appends the pages of [begin, end) to a read-ahead request, merged with the last range
// when they overlap or are at most a page apart (one read instead of two).
void add_pages(std::vector<struct iovec>& ranges, const void* begin, const void* end) {
  constexpr uintptr_t kPage = 4096;
  const uintptr_t b = reinterpret_cast<uintptr_t>(begin) & ~(kPage - 1);
  const uintptr_t e = reinterpret_cast<uintptr_t>(end);
  if (e <= b) return;
  if (!ranges.empty()) {
    struct iovec& last = ranges.back();
    const uintptr_t lb = reinterpret_cast<uintptr_t>(last.iov_base), le = lb + last.iov_len;
    if (b >= lb && b <= le + kPage) {
      if (e > le) last.iov_len = e - lb;
      return;
    }
  }
  ranges.push_back({reinterpret_cast<void*>(b), e - b});
}

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
  // vertex range (at least one per thread) those of the levels being filled and expanded,
  // shared early or sealed at a level change, and some per thread. More is absorbed by the
  // overflow path, which costs speed (unsorted visits without read-ahead), not correctness.
  // Only chunks in use take memory.
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
        capacity(static_cast<uint32_t>(std::min<size_t>(bytes / sizeof(Chunk), UINT32_MAX))) {}

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
  // Up to `max` chunks of the lowest key, newest first (the likeliest to be cached), and
  // in `next` up to `ahead` of the chunks that follow them in queue order.
  // The caller holds one extra `live` reference until it has expanded them.
  bool pop(std::vector<uint32_t>& out, unsigned max, std::vector<uint32_t>& next, unsigned ahead) {
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
    next.clear();
    for (auto b = buckets.begin(); b != buckets.end() && next.size() < ahead; ++b)
      for (auto i = b->second.rbegin(); i != b->second.rend() && next.size() < ahead; ++i) next.push_back(*i);
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

// The chunk of one vertex range and level that threads are filling, shared by all of them.
// It is gathered on the heap and written to the queue file whole, when it is full or
// shared: written a few visitors at a time over a whole level, the open chunks' pages were
// the queue's randomly written set, and a small buffer on storage evicted and re-read them
// again and again.
struct LevelAsyncBfs::OpenChunk {
  std::mutex mu;
  Chunk chunk{};  // count > 0: holds one `live` reference
};

struct LevelAsyncBfs::Worker {
  std::vector<uint32_t> popped;  // chunk indices taken from the queue
  std::vector<uint32_t> next_chunks;  // those that follow them (read-ahead)
  std::vector<uint32_t> batch;   // their vertices, sorted
  std::vector<struct iovec> ranges;  // pages a batch will read (read-ahead)
  // Visitors of stage_level not yet in an open chunk, kStage per vertex range: they join the
  // range's open chunk in blocks, one lock per 64 visitors.
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
      sort_batch_(std::max(order.sort_batch, 1u)), queue_readahead_(order.queue_readahead) {
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
  open_.reset(new OpenChunk[open_slots()]);
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
  for (size_t i = 0; i < open_slots(); ++i) open_[i].chunk.count = 0;
  counters_ = {};
  for (auto& w : workers_) {
    w->counters = {};
    w->staged.assign(ranges_, 0);
    w->staged_total = 0;
    w->overflow.clear();
    for (auto& box : w->outboxes) box.clear();
  }
}

// claim: lower a vertex's level to `level` (< kCacheSaturated) in its cache byte; true if
// this visitor won. Saturated (254) and unreached (255) compare above every such level.
inline bool LevelAsyncBfs::claim(uint64_t local, uint32_t level) {
  uint8_t* byte = arrays_.cache + local;
  uint8_t current = load(byte);
  while (level < current)
    if (__atomic_compare_exchange_n(byte, &current, static_cast<uint8_t>(level), true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return true;
  return false;
}

// Lowers the progress word to (level, parent) unless it already holds a level as low.
inline bool LevelAsyncBfs::record(uint64_t local, vertex_t parent, uint32_t level) {
  uint64_t* word = arrays_.progress + local;
  uint64_t current = load(word);
  const uint64_t wanted = (static_cast<uint64_t>(level) << 32) | parent;
  while (level < level_of(current))
    if (__atomic_compare_exchange_n(word, &current, wanted, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return true;
  return false;
}

// pre_visit for a visitor that brings its parent (a seed: the root or a remote visitor)
// or whose level is too deep for the cache byte: the progress word is written now.
bool LevelAsyncBfs::pre_visit(uint64_t local, vertex_t parent, uint32_t level) {
  if (level < kCacheSaturated) {
    if (!claim(local, level)) return false;
    record(local, parent, level);
    return true;
  }
  uint8_t* byte = arrays_.cache + local;
  if (load(byte) < kCacheSaturated) return false;  // reached at a level below 254
  if (!record(local, parent, level)) return false;
  uint8_t unreached = kCacheUnreached;
  __atomic_compare_exchange_n(byte, &unreached, kCacheSaturated, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return true;
}

LevelAsyncBfs::OpenChunk& LevelAsyncBfs::open_chunk(uint32_t range, uint32_t lane, uint32_t level) {
  return open_[(size_t{range} * lanes_ + lane) * 2 + (level & 1)];
}

// Writes an open chunk of range r to the queue file (the caller holds its lock); if the
// file is full, its visitors overflow to the worker's stack.
void LevelAsyncBfs::seal(Worker& w, OpenChunk& open, uint32_t r) {
  Chunk& c = open.chunk;
  uint32_t idx;
  if (queue_->allocate(idx)) {
    Chunk& out = queue_->chunks[idx];
    out.count = c.count;
    out.level = c.level;
    std::memcpy(out.items, c.items, c.count * sizeof(uint32_t));
    queue_->publish(idx, key(c.level, r));
  } else {
    w.counters.overflow += c.count;
    for (uint32_t i = 0; i < c.count; ++i) w.overflow.push_back({c.items[i], 0, c.level});
  }
  c.count = 0;
  queue_->unhold();
}

// Moves range r's staged visitors into its open chunk for their level; a chunk that fills
// up, or holds another level (two levels back), goes to the queue.
void LevelAsyncBfs::flush(Worker& w, uint32_t r) {
  const uint32_t* items = w.stage.data() + size_t{r} * kStage;
  uint32_t n = w.staged[r];
  if (n == 0) return;
  {
    OpenChunk& open = open_chunk(r, w.lane, w.stage_level);
    std::lock_guard<std::mutex> lock(open.mu);
    Chunk& c = open.chunk;
    while (n > 0) {
      if (c.count > 0 && c.level != w.stage_level) seal(w, open, r);
      if (c.count == 0) {
        c.level = w.stage_level;
        queue_->live.fetch_add(1);
      }
      const uint32_t take = std::min(n, Chunk::kItems - c.count);
      std::memcpy(c.items + c.count, items, take * sizeof(uint32_t));
      c.count += take;
      items += take;
      n -= take;
      if (c.count == Chunk::kItems) seal(w, open, r);
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
    // The range's lowest open chunk (its two levels' lanes), if below `below`.
    OpenChunk* lowest = nullptr;
    uint64_t lowest_key = below;
    for (uint32_t slot = 0; slot < 2 * lanes_; ++slot) {
      OpenChunk& open = open_[size_t{r} * 2 * lanes_ + slot];
      std::lock_guard<std::mutex> lock(open.mu);
      if (open.chunk.count == 0) continue;
      const uint64_t k = key(open.chunk.level, r);
      if (k < lowest_key) lowest = &open, lowest_key = k;
    }
    if (!lowest) continue;
    std::lock_guard<std::mutex> lock(lowest->mu);
    // Another thread may have shared it meanwhile, and a chunk of a later level be open.
    if (lowest->chunk.count == 0 || key(lowest->chunk.level, r) >= below) continue;
    seal(w, *lowest, r);
    return true;
  }
  return false;
}

// A queued visitor is a vertex: its level is in the chunk, its parent is found when it is visited.
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
// Below level 254 the cache byte holds the level and visitors carry no parent: the parent
// is found here, among the neighbours read anyway, as one a level up (the neighbour that
// claimed this vertex is one while `level` is final; a seed's parent is recorded already).
// So the expansion touches only cache bytes at random, and each progress word is written
// once, when its vertex is visited - in vertex order in a sorted batch - rather than at
// random positions whenever a vertex is discovered (on storage, the progress file was the
// largest randomly written set: with a small buffer its pages were evicted dirty and
// written back again and again).
void LevelAsyncBfs::visit(Worker& w, vertex_t local, uint32_t level) {
  const bool cached_level = level < kCacheSaturated;
  if (cached_level ? load(arrays_.cache + local) != level : level_of(load(arrays_.progress + local)) != level) {
    ++w.counters.stale;
    return;
  }
  ++w.counters.visits;
  const uint64_t first = part_.first(), count = part_.count();
  const vertex_t self = static_cast<vertex_t>(first + local);
  const vertex_t* t = graph_.targets - graph_.edge_base;
  const uint64_t begin = graph_.offsets[local], end = graph_.offsets[local + 1];
  if (cached_level && level > 0) {  // the parent: the first local neighbour one level up
    for (uint64_t e = begin; e < end; ++e) {
      const uint64_t target_local = t[e] - first;
      if (target_local < count && load(arrays_.cache + target_local) == level - 1) {
        record(local, t[e], level);
        break;
      }
    }
  }
  const bool claim_children = level + 1 < kCacheSaturated;
  for (uint64_t e = begin; e < end; ++e) {
    const uint64_t target = t[e];
    const uint64_t target_local = target - first;  // wraps around for vertices below first
    if (target_local < count) {
      if (claim_children ? claim(target_local, level + 1) : pre_visit(target_local, self, level + 1))
        push(w, static_cast<vertex_t>(target_local), level + 1);
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
      __builtin_prefetch(arrays_.cache + items[i + 16]);
      __builtin_prefetch(arrays_.progress + items[i + 16], 1);
    }
    if (i + 8 < count) __builtin_prefetch(targets + graph_.offsets[items[i + 8]]);
    visit(w, items[i], level);
  }
}

// A batch read from storage: ask for the pages it will read before reading them (vertex
// records and progress words first, then the adjacency lists the records point to), so
// the DI-MMAP buffer or the page cache (MADV_WILLNEED) fetches them at a deep queue
// instead of one fault per page per thread. Items are sorted, so neighbouring ranges
// merge into few requests.
void LevelAsyncBfs::prefetch_batch(Worker& w, const uint32_t* items, uint32_t count) {
  w.ranges.clear();
  for (uint32_t i = 0; i < count; ++i) add_pages(w.ranges, graph_.offsets + items[i], graph_.offsets + items[i] + 2);
  if (count > 0) add_pages(w.ranges, arrays_.progress + items[0], arrays_.progress + items[count - 1] + 1);
  dimmap::prefetch(w.ranges.data(), w.ranges.size());
  w.ranges.clear();
  const vertex_t* t = graph_.targets - graph_.edge_base;
  for (uint32_t i = 0; i < count; ++i) add_pages(w.ranges, t + graph_.offsets[items[i]], t + graph_.offsets[items[i] + 1]);
  dimmap::prefetch(w.ranges.data(), w.ranges.size());
}

// Chunks written a level ago, on storage, have often left the buffer by the time they are
// taken: ask for the next ones in queue order now, so they are read at a deep queue, not
// one page fault at a time when a thread takes them.
void LevelAsyncBfs::prefetch_chunks(Worker& w) {
  if (w.next_chunks.empty()) return;
  std::sort(w.next_chunks.begin(), w.next_chunks.end());
  w.ranges.clear();
  for (uint32_t idx : w.next_chunks) add_pages(w.ranges, queue_->chunks + idx, queue_->chunks + idx + 1);
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
    if (q.pop(w.popped, sort_batch_, w.next_chunks, queue_readahead_)) {
      prefetch_chunks(w);
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
