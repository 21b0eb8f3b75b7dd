// memory_probe.hpp - how much memory this process holds, for the soak test's growth checks.
#pragma once

#include <cstdint>

namespace dimmap::reliability {

struct MemorySample {
  uint64_t rss_anon = 0;      // heap, stacks, engine tables (bytes)
  uint64_t rss_shmem = 0;     // mapped shared-memory pages: the buffer's pages as mapped
  uint64_t buffer_bytes = 0;  // pages allocated in the engine's memfds (what the buffer really holds)
};

// Reads /proc/self/status and fstat()s every memfd named "dimmap" this process has open.
MemorySample sample_memory();

}  // namespace dimmap::reliability
