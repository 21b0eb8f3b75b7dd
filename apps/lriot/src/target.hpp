// target.hpp - how one LRIOT process reaches the file's pages (one per --mode).
#pragma once

#include <lriot/lriot.hpp>

#include <cstdint>
#include <memory>

namespace lriot::detail {

// Shared by the threads of one process. Methods throw dimmap::Error on I/O failures.
class Target {
 public:
  virtual ~Target() = default;
  // The words of page `page`; scratch is the calling thread's page-aligned kPageSize buffer.
  // Memory-mapped targets return the mapping itself: the caller's load is what faults.
  virtual const uint64_t* read(uint64_t page, uint64_t* scratch) = 0;
  // Read-modify-write of one page: load it, check its identity (if check), add one to its write
  // counter, store it. Returns false (and writes nothing) if the identity check failed.
  virtual bool write(uint64_t page, uint64_t* scratch, bool check) = 0;
  // Makes every write durable: msync(MS_SYNC), dimmap_msync or fdatasync.
  virtual void sync() = 0;
  // The DI-MMAP buffer's counters (dimmap mode only).
  virtual bool stats(struct dimmap_stats* out) const { return false; }
};

// Opens the file for this process in config.mode; buffer_bytes is this process's share.
std::unique_ptr<Target> open_target(const Config& config, uint64_t pages, uint64_t buffer_bytes);

}  // namespace lriot::detail
