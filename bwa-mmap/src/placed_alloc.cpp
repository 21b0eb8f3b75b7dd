// placed_alloc.cpp - the --wrap'ed malloc family of libbwammap.so (see placed_alloc.hpp).
//
// Fast paths first: while disarmed and with no block placed, every call is one relaxed load
// and a tail call into the C library, so `bwa-mmap mem` (which never arms) pays nothing.
// Placed blocks are kept in an ordered map under one mutex; only calls that may concern a
// placed block take it (index construction is single-threaded where it allocates big).
#include <bwammap/placed_alloc.hpp>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>

extern "C" {
void* __real_malloc(size_t bytes);
void* __real_calloc(size_t count, size_t size);
void* __real_realloc(void* ptr, size_t bytes);
void __real_free(void* ptr);
void* __wrap_malloc(size_t bytes);
void* __wrap_calloc(size_t count, size_t size);
void* __wrap_realloc(void* ptr, size_t bytes);
void __wrap_free(void* ptr);
}

namespace bwammap {
namespace {

// Constant-initialised, so heap calls made before main() (or after exit) are safe.
std::atomic<bool> g_armed{false};
std::atomic<size_t> g_min_bytes{SIZE_MAX};
std::atomic<size_t> g_live_regions{0};
std::atomic<bool> g_fatal_failures{true};
thread_local bool t_inside = false;  // creating a Region must not route its own allocations

// std::optional because Region's inline default constructor needs a type that placement.hpp
// keeps private (it does not compile outside libdimmap).
struct Block {
  std::optional<dimmap::Region> region;
  size_t requested = 0;
};

struct Heap {
  std::mutex mu;
  std::map<const void*, Block> blocks;
  dimmap::Placement placement;
  PlacedHeapStats stats;
  std::string first_failure;
};

// Never destroyed: libbwa may free blocks from atexit handlers after static destructors.
Heap& heap() {
  static Heap* h = new Heap;
  return *h;
}

// A zeroed block of `bytes` in a new Region, or nullptr with errno = ENOMEM.
void* place(size_t bytes) {
  Heap& h = heap();
  std::unique_lock<std::mutex> lock(h.mu);
  t_inside = true;
  try {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    dimmap::Region region = dimmap::Region::scratch(h.placement, (bytes + page - 1) / page * page, "bwa-array");
    void* p = region.data();
    Block& b = h.blocks[p];
    b.region.emplace(std::move(region));
    b.requested = bytes;
    g_live_regions.fetch_add(1, std::memory_order_release);
    PlacedHeapStats& s = h.stats;
    ++s.placed_allocations;
    s.placed_bytes += bytes;
    s.live_bytes += bytes;
    ++s.live_regions;
    if (s.live_bytes > s.peak_live_bytes) s.peak_live_bytes = s.live_bytes;
    if (bytes > s.largest_allocation) s.largest_allocation = bytes;
    t_inside = false;
    return p;
  } catch (const std::exception& e) {
    t_inside = false;
    if (h.first_failure.empty()) h.first_failure = e.what();
    std::fprintf(stderr, "bwa-mmap: cannot place a %s array: %s\n", dimmap::format_size(bytes).c_str(), e.what());
    if (g_fatal_failures.load()) {
      lock.unlock();  // exit() runs atexit handlers, which may free placed blocks
      std::exit(1);
    }
    errno = ENOMEM;
    return nullptr;
  }
}

bool routed(size_t bytes) {
  return !t_inside && g_armed.load(std::memory_order_relaxed) &&
         bytes >= g_min_bytes.load(std::memory_order_relaxed);
}

// Removes and returns the block starting at p (empty Region if p is not placed).
bool take_block(const void* p, Block* out) {
  if (g_live_regions.load(std::memory_order_acquire) == 0) return false;
  Heap& h = heap();
  std::lock_guard<std::mutex> lock(h.mu);
  auto it = h.blocks.find(p);
  if (it == h.blocks.end()) return false;
  *out = std::move(it->second);
  h.blocks.erase(it);
  g_live_regions.fetch_sub(1, std::memory_order_release);
  h.stats.live_bytes -= out->requested;
  --h.stats.live_regions;
  return true;
}

// The block at p if placed: its capacity (Region size) and requested size.
bool find_block(const void* p, size_t* capacity, size_t* requested) {
  if (g_live_regions.load(std::memory_order_acquire) == 0) return false;
  Heap& h = heap();
  std::lock_guard<std::mutex> lock(h.mu);
  auto it = h.blocks.find(p);
  if (it == h.blocks.end()) return false;
  *capacity = it->second.region->size();
  *requested = it->second.requested;
  return true;
}

void set_requested(const void* p, size_t bytes) {
  Heap& h = heap();
  std::lock_guard<std::mutex> lock(h.mu);
  Block& b = h.blocks.at(p);
  h.stats.live_bytes = h.stats.live_bytes - b.requested + bytes;
  if (h.stats.live_bytes > h.stats.peak_live_bytes) h.stats.peak_live_bytes = h.stats.live_bytes;
  b.requested = bytes;
}

void release(Block&& b) {
  t_inside = true;
  // A freed array is dead: on DI-MMAP drop its pages instead of writing them back to a
  // file that is about to disappear (best effort; unmapping is correct either way).
  if (b.region && b.region->backend() == dimmap::Backend::dimmap)
    dimmap_discard(b.region->data(), b.region->size());
  b.region.reset();  // unmaps; the unlinked file disappears with it
  t_inside = false;
}

}  // namespace

PlacedHeap::PlacedHeap(dimmap::Placement placement, size_t min_bytes, bool fatal_failures) {
  Heap& h = heap();
  {
    std::lock_guard<std::mutex> lock(h.mu);
    if (g_armed.load()) throw dimmap::Error("internal error: two PlacedHeap scopes at once");
    h.placement = std::move(placement);
    h.stats = PlacedHeapStats{};
    h.stats.live_regions = h.blocks.size();
    h.first_failure.clear();
  }
  g_fatal_failures.store(fatal_failures);
  g_min_bytes.store(min_bytes == 0 ? 1 : min_bytes);
  g_armed.store(true);
}

PlacedHeap::~PlacedHeap() {
  g_armed.store(false);
  g_min_bytes.store(SIZE_MAX);
}

PlacedHeapStats PlacedHeap::stats() const { return placed_heap_stats(); }

std::string PlacedHeap::last_failure() {
  Heap& h = heap();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.first_failure;
}

PlacedHeapStats placed_heap_stats() {
  Heap& h = heap();
  std::lock_guard<std::mutex> lock(h.mu);
  return h.stats;
}

bool is_placed(const void* ptr) {
  size_t capacity = 0, requested = 0;
  return ptr && find_block(ptr, &capacity, &requested);
}

void* heap_malloc(size_t bytes) {
  if (routed(bytes)) return place(bytes);
  return __real_malloc(bytes);
}

void* heap_calloc(size_t count, size_t size) {
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (routed(bytes)) return place(bytes);  // scratch regions start zeroed
  return __real_calloc(count, size);
}

void heap_free(void* ptr) {
  if (!ptr) return;
  Block b;
  if (take_block(ptr, &b)) {
    release(std::move(b));
    return;
  }
  __real_free(ptr);
}

void* heap_realloc(void* ptr, size_t bytes) {
  if (!ptr) return heap_malloc(bytes);
  if (bytes == 0) {  // glibc semantics: free and return NULL
    heap_free(ptr);
    return nullptr;
  }
  size_t capacity = 0, requested = 0;
  if (find_block(ptr, &capacity, &requested)) {
    if (bytes <= capacity) {  // shrinking, or growing within the last page: stay
      set_requested(ptr, bytes);
      return ptr;
    }
    void* fresh = routed(bytes) ? place(bytes) : __real_malloc(bytes);
    if (!fresh) return nullptr;  // the old block stays valid, as realloc promises
    std::memcpy(fresh, ptr, requested);
    {
      Heap& h = heap();
      std::lock_guard<std::mutex> lock(h.mu);
      h.stats.moved_bytes += requested;
    }
    heap_free(ptr);
    return fresh;
  }
  if (routed(bytes)) {  // a C-library block outgrowing the threshold moves to the placement
    void* fresh = place(bytes);
    if (!fresh) return nullptr;
    const size_t old_bytes = malloc_usable_size(ptr);
    std::memcpy(fresh, ptr, old_bytes < bytes ? old_bytes : bytes);
    {
      Heap& h = heap();
      std::lock_guard<std::mutex> lock(h.mu);
      h.stats.moved_bytes += old_bytes < bytes ? old_bytes : bytes;
    }
    __real_free(ptr);
    return fresh;
  }
  return __real_realloc(ptr, bytes);
}

}  // namespace bwammap

extern "C" {
void* __wrap_malloc(size_t bytes) { return bwammap::heap_malloc(bytes); }
void* __wrap_calloc(size_t count, size_t size) { return bwammap::heap_calloc(count, size); }
void* __wrap_realloc(void* ptr, size_t bytes) { return bwammap::heap_realloc(ptr, bytes); }
void __wrap_free(void* ptr) { bwammap::heap_free(ptr); }
}
