// placed_alloc.hpp - libbwa's big heap arrays on a placement.
//
// libbwammap.so is linked with --wrap=malloc,calloc,realloc,free, so every heap call made by
// libbwa's objects (and by this library) goes through placed_alloc.cpp. While a PlacedHeap is
// armed, each request of at least `min_bytes` gets a scratch Region of its own on the
// placement: an unlinked file in the storage directory (mmap, dimmap) or memory. Smaller
// requests, and all requests while disarmed, go to the C library as usual. This is how
// `bwa-mmap index` moves the packed sequence, the BWT under construction and update, and the
// suffix array out of anonymous memory without changing a line of bwa.
#pragma once

#include <dimmap/placement.hpp>

#include <cstddef>
#include <cstdint>

namespace bwammap {

struct PlacedHeapStats {
  uint64_t placed_allocations = 0;  // requests served by a Region
  uint64_t placed_bytes = 0;        // bytes of those requests, summed
  uint64_t moved_bytes = 0;         // bytes copied by realloc into a new Region
  uint64_t live_bytes = 0;          // bytes held in Regions now
  uint64_t peak_live_bytes = 0;
  uint64_t live_regions = 0;
  uint64_t largest_allocation = 0;
};

// Arms the routing for its lifetime. One at a time per process; blocks placed while armed
// stay valid after disarming until libbwa frees them.
class PlacedHeap {
 public:
  // When a Region cannot be created (storage full, directory missing), the heap call fails:
  // with fatal_failures (the default, because libbwa does not check for NULL) the process
  // prints the reason and exits with status 1 (atexit handlers run, removing temporary
  // outputs); otherwise the call returns NULL with errno = ENOMEM, as malloc does.
  PlacedHeap(dimmap::Placement placement, size_t min_bytes, bool fatal_failures = true);
  ~PlacedHeap();
  PlacedHeap(const PlacedHeap&) = delete;
  PlacedHeap& operator=(const PlacedHeap&) = delete;

  PlacedHeapStats stats() const;
  // The first failure to create a Region (e.g. "No space left on device"), or "".
  static std::string last_failure();
};

// The wrapped entry points, as libbwa sees them (for tests and for C code in this library).
void* heap_malloc(size_t bytes);
void* heap_calloc(size_t count, size_t size);
void* heap_realloc(void* ptr, size_t bytes);
void heap_free(void* ptr);
// True if ptr is the start of a block held in a Region.
bool is_placed(const void* ptr);
PlacedHeapStats placed_heap_stats();

}  // namespace bwammap
