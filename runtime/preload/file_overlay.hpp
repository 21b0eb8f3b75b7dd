// file_overlay.hpp - dimmap-run --files=DIR: an unmodified program's read-only mappings of
// files under DIR go through the process's DI-MMAP buffer instead of the Linux page cache.
//
// file_overlay.cpp interposes mmap (and mmap64), munmap, msync, mremap and mprotect. A mapping
// is taken over when its descriptor's file (/proc/self/fd, so symlinks and relative paths
// are resolved by the kernel) lies under one of DIMMAP_RUN_FILES's directories and it is
// read-only in every sense: no PROT_WRITE or PROT_EXEC, and a descriptor opened O_RDONLY, so
// the program cannot change the file through it with write()/pwrite() behind the buffer's
// back. Everything else under DIR (writable mappings, files opened for writing) stays
// Linux's, with one line on stderr saying so; mappings of other files are never touched.
// A mapping longer than the file keeps its tail past the end as a Linux mapping (touching it
// raises SIGBUS as without the overlay); only the part inside the file is the buffer's.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace dimmap::preload {

struct OverlayMapping {
  uintptr_t base = 0;
  size_t length = 0;         // what the program mapped, in whole pages
  size_t dimmap_length = 0;  // the part inside the file, served by the buffer
  int prot = 0;
  int flags = 0;
  off_t offset = 0;
  bool linux_only = false;  // in a forked child: the same file mapped by Linux at the same place
  bool used = false;
  char path[PATH_MAX] = "";
};

struct OverlayCounters {
  uint64_t mapped = 0;         // mappings the buffer took over
  uint64_t left_to_linux = 0;  // mappings of files under DIR that Linux kept (each was reported)
};

// The live mappings the overlay made. Fixed storage, one mutex, constant-initialised and
// trivially destructible (it lives in the preload's state, which must survive exit()).
class OverlayTable {
 public:
  static constexpr size_t kCapacity = 256;

  std::mutex mu;
  OverlayMapping slots[kCapacity];
  std::atomic<size_t> live{0};
  std::atomic<uint64_t> mapped{0};
  std::atomic<uint64_t> left_to_linux{0};

  OverlayCounters counters() const { return {mapped.load(), left_to_linux.load()}; }
  void lock_for_fork() { mu.lock(); }
  void unlock_after_fork() { mu.unlock(); }
  // fork() child, table locked: maps every taken-over file again with Linux at the same
  // address (the buffer's part of the parent is not inherited and nobody would serve it).
  void remap_with_linux_locked();
};

}  // namespace dimmap::preload
