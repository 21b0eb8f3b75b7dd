// engine.hpp - what a DI-MMAP engine (user-space uffd or kernel module) provides.
// All methods return 0 or -errno and describe failures with detail::fail().
#pragma once

#include <dimmap/dimmap.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>

struct dmp_params;

namespace dimmap::detail {

class Engine {
 public:
  virtual ~Engine() = default;
  // Maps [offset, offset + length) of fd; *out receives the address.
  virtual int map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) = 0;
  // Writes back and unmaps the whole mapping starting at addr.
  virtual int unmap(void* addr, size_t length) = 0;
  virtual int sync(void* addr, size_t length, int flags) = 0;
  // Drops the range's pages without writing them back (scratch data). The default keeps
  // them: correct, only slower.
  virtual int discard(void* addr, size_t length) { return 0; }
  // Starts reading the ranges' missing pages without waiting (a hint; default: nothing).
  virtual int prefetch(const struct iovec* ranges, size_t n) { return 0; }
  virtual void stats(struct dimmap_stats* out) const = 0;
  virtual size_t mapped_regions() const = 0;
};

// The policy's sizes for a buffer of cfg with pages of page_size: the same split of the
// buffer in every engine. 0, or -EINVAL with fail() set when the buffer is too small.
int policy_params_for(const dimmap_config& cfg, size_t page_size, struct dmp_params* par);
// dimmap_munmap's rule, the whole mapping at once: 0, or -EINVAL with fail() set.
int check_whole_mapping(void* addr, size_t length, size_t page_size, size_t mapping_pages, size_t mapping_bytes);

// The policy's key of a page of a mapping: the mapping's id above kRegionShift bits, the
// page's index below (256 TiB per mapping).
constexpr unsigned kRegionShift = 36;
constexpr uint64_t page_key(uint32_t region_id, uint64_t page) { return uint64_t{region_id} << kRegionShift | page; }
constexpr uint32_t key_region(uint64_t key) { return static_cast<uint32_t>(key >> kRegionShift); }
constexpr uint64_t key_page(uint64_t key) { return key & ((uint64_t{1} << kRegionShift) - 1); }

// The mapping of by_start (keyed by start address) that contains a, or null.
template <class Region>
Region* mapping_containing(const std::map<uintptr_t, Region*>& by_start, uintptr_t a) {
  auto it = by_start.upper_bound(a);
  if (it == by_start.begin()) return nullptr;
  Region* r = std::prev(it)->second;
  return a < reinterpret_cast<uintptr_t>(r->addr) + r->length ? r : nullptr;
}

// A new engine of type E, started: null with *err set if start() failed.
template <class E>
std::unique_ptr<Engine> make_started(const dimmap_config& config, int* err) {
  auto engine = std::make_unique<E>(config);
  if (int rc = engine->start(); rc < 0) {
    *err = rc;
    return nullptr;
  }
  return engine;
}

std::unique_ptr<Engine> make_uffd_engine(const dimmap_config& config, int* err);
std::unique_ptr<Engine> make_kmod_engine(const dimmap_config& config, int* err);
std::unique_ptr<Engine> make_pagecache_engine(const dimmap_config& config, int* err);

// Why the pagecache engine cannot run on this kernel, or nullptr when it can.
const char* pagecache_engine_unsupported();

// The engine DIMMAP_ENGINE_AUTO stands for with cfg: the pagecache engine, which costs what a
// Linux page-cache miss costs, unless cfg needs the userfaultfd engine's view of every miss
// (the PerMA model, in-thread faults, its own service threads) or the kernel lacks what the
// pagecache engine needs.
dimmap_engine auto_engine(const dimmap_config& cfg);

// Whether cfg's buffer is page cache (the pagecache engine's, which the kernel may reclaim)
// rather than memory of the engine's own.
bool buffer_is_page_cache(const dimmap_config& cfg);

// buffer_is_page_cache for the configuration DIMMAP_* variables make (false if they are bad).
bool environment_buffer_is_page_cache();

}  // namespace dimmap::detail
