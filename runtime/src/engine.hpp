// engine.hpp - what a DI-MMAP engine (user-space uffd or kernel module) provides.
// All methods return 0 or -errno and describe failures with detail::fail().
#pragma once

#include <dimmap/dimmap.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
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

std::unique_ptr<Engine> make_uffd_engine(const dimmap_config& config, int* err);
std::unique_ptr<Engine> make_kmod_engine(const dimmap_config& config, int* err);
std::unique_ptr<Engine> make_pagecache_engine(const dimmap_config& config, int* err);

}  // namespace dimmap::detail
