// memory_limit.hpp - how much memory this process may use, and the defaults that follow.
//
// Tools size what they keep in RAM (the DI-MMAP buffer, the arrays left on the heap) from
// the memory the user actually has: the smallest memory-cgroup limit on the way from the
// process's own cgroup up to the root of its hierarchy (v2 memory.max, v1
// memory.limit_in_bytes; hybrid setups take the smaller), or, with no limit below the
// machine's memory, MemAvailable from /proc/meminfo.
//
// A DI-MMAP buffer size is resolved once, with the same precedence in every tool:
//   1. the tool's --buffer option, when given;
//   2. else DIMMAP_BUFFER from the environment;
//   3. else default_buffer_bytes(memory limit, engine): 7/8 of the limit for the pagecache
//      engine, half for the others, at most 256M.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dimmap {

struct MemoryLimit {
  uint64_t bytes = 0;
  // Where the number came from, for messages: "cgroup v1 limit in /sys/fs/cgroup/memory/x"
  // or "MemAvailable in /proc/meminfo".
  std::string source;
  // The cgroup's usage file when the limit is a cgroup's (v2 memory.current, v1
  // memory.usage_in_bytes of the cgroup whose limit it is), else empty.
  std::string usage_file;
  // That cgroup's memory.stat (its counts of page cache, mapped, dirty), or empty; v2 names its
  // hierarchical counts "active_file", v1 "total_active_file".
  std::string stat_file;
  bool v2 = false;
};

// The memory limit of the calling process. `root` is prefixed to every /proc and /sys path
// it reads (tests point it at a fake tree; "" = the real system). Never throws: files that
// are missing or unreadable are skipped, and with nothing readable the physical memory is
// returned (for root "" only; else 0 bytes with source "unknown").
MemoryLimit memory_limit(const std::string& root = "");

// The DI-MMAP buffer when no size is asked for, at most 256M (the papers' size, enough to
// cache a random-access working set on machines with plenty of memory), rounded down to whole
// MiB, and at least the 16 pages a buffer needs:
//   - page_cache (the pagecache engine, the default): 7/8 of the limit. The buffer is page
//     cache, which the kernel may reclaim when the program leaves less room than that (no
//     OOM kill), while a buffer much smaller than the room makes the engine drop pages the
//     program still needs (bwa index in 32M: docs/measurements.md).
//   - else (the userfaultfd and kernel engines, whose buffer is memory of their own that
//     cannot be reclaimed): half the limit; the other half is for the program's heap and the
//     kernel's page tables and caches.
uint64_t default_buffer_bytes(uint64_t limit_bytes, bool page_cache);

// The value of `key` in a cgroup's flat keyed file, one "key value" pair a line (memory.stat,
// memory.events, v1 memory.oom_control): nullopt where the key is missing or its value is
// not a number.
std::optional<uint64_t> cgroup_keyed_value(std::string_view text, std::string_view key);

// The smallest allocation worth placing in a file instead of leaving it on the heap, for a
// process whose memory is limited to limit_bytes: 1/32 of the limit, rounded down to whole
// MiB, between 1M and 64M. A program keeps a handful of arrays alive at once (bwa index
// about a dozen), so what stays on the heap takes well under half the limit, leaving the
// rest to the page cache or the DI-MMAP buffer. With plenty of memory (a limit of 2G or
// more) it is 64M, which keeps bwa's 48M bwtsw workspace (accessed at random) in RAM.
uint64_t default_min_alloc(uint64_t limit_bytes);

struct BufferChoice {
  uint64_t bytes = 0;
  std::string why;      // e.g. "--buffer", "DIMMAP_BUFFER", "half the memory limit of 48M (...)"
  std::string warning;  // non-empty when the size asked for is more than the memory limit
};

// Resolves a buffer size with the precedence above. option_text is the --buffer value as
// given ("" = not given); option_name names it in messages. Throws dimmap::Error for a size
// that does not parse (naming the option or DIMMAP_BUFFER).
BufferChoice choose_buffer(std::string_view option_text, const MemoryLimit& limit,
                           std::string_view option_name = "--buffer");

}  // namespace dimmap
