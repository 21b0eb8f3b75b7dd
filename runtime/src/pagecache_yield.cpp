// pagecache_yield.cpp - the pagecache engine's buffer under a memory-cgroup limit.
//
// The buffer's pages and the pages on their way out of it (dirty ones wait for their writes,
// which the block layer queues behind the program's reads) are all page cache charged to the
// process's cgroup. When their sum reaches the cgroup's limit, the kernel reclaims inside the
// faulting threads: it finds the leaving pages dirty or being written, wakes the flusher
// (which writes every dirty page of the file, mapped ones too, one TLB shootdown each) and
// makes the threads wait for writeback (up to 100 ms a time). Measured on a partitioned load
// in a cgroup 61M over the buffer: 258 reclaims and 134 such waits in 3 s, and the program's
// rate down to a fifth for half a second at a time.
//
// So the keeper looks at the cgroup's usage once a round and keeps a headroom below the limit:
// the policy lends pages back (dmp_lend; its FIFOs hold fewer and more slots stay free), the
// oldest of the eviction queue leave in this round, clean ones at once. What the buffer holds
// shrinks by what the pages on their way out take, and grows back when they are gone. The
// headroom covers the faults of three scan intervals (those the program maps between two
// looks, the pages demoted in a round that stay cached until the next round's look, and a
// round that runs long) and the cgroup's charges ahead to each CPU; no more, as what it keeps
// free the buffer does not hold (with 4 MiB, k-mer lookups through a 14M buffer in a 17M
// cgroup lost a tenth of their rate).
// The usage counts the page cache of every file the cgroup's processes read, and a cgroup
// that read more than its limit stays full of it. Its clean, unmapped pages of other files
// are not counted near the limit (memory.stat): the kernel reclaims them first, and cheaply.
// Counted, they made a 32M buffer over a 16M file, in a 64M cgroup that had read a 1G file,
// lend 3838 of its 8192 pages and unmap and recover 196K pages a second.
// Without a cgroup limit nothing changes: the kernel's reclaim of the whole machine is not
// the process's to avoid.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <dimmap/memory_limit.hpp>

#include "log.hpp"
#include "pagecache_engine.hpp"
#include "pagecache_yield.hpp"

namespace dimmap::detail::pagecache {

namespace {

// A cgroup charges pages ahead to each CPU in batches of this many (the kernel's
// MEMCG_CHARGE_BATCH): its usage may read that many pages a CPU above what is in use.
constexpr uint64_t kChargeBatchPages = 64;

}  // namespace

void PageCacheEngine::watch_memory_limit() {
  const MemoryLimit limit = memory_limit();
  if (limit.usage_file.empty()) return;
  usage_fd_ = ::open(limit.usage_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (usage_fd_ < 0) {
    log(LogLevel::debug, "pagecache engine: cannot read %s: the buffer does not yield to the memory limit",
        limit.usage_file.c_str());
    return;
  }
  limit_bytes_ = limit.bytes;
  stat_fd_ = ::open(limit.stat_file.c_str(), O_RDONLY | O_CLOEXEC);
  stat_v2_ = limit.v2;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  headroom_bytes_ = (3 * scan_after_ + kChargeBatchPages * static_cast<uint64_t>(std::max(1L, cpus))) * page_size_;
  log(LogLevel::info, "pagecache engine: yields to the %s (%llu bytes), keeping %llu bytes free", limit.source.c_str(),
      static_cast<unsigned long long>(limit_bytes_), static_cast<unsigned long long>(headroom_bytes_));
}

void PageCacheEngine::yield_to_limit() {
  if (usage_fd_ < 0) return;
  char text[32];
  const ssize_t n = pread(usage_fd_, text, sizeof text - 1, 0);
  if (n <= 0) return;
  text[n] = '\0';
  uint64_t usage = std::strtoull(text, nullptr, 10);
  // Near the limit, the other files' clean page cache in the cgroup does not count: the
  // kernel reclaims it first, without waits.
  if (usage + 2 * headroom_bytes_ >= limit_bytes_ && stat_fd_ >= 0) {
    char stat[8192];
    const ssize_t len = pread(stat_fd_, stat, sizeof stat, 0);
    const uint64_t ours_unmapped = (uint64_t{policy_.evict.len} + policy_.leaving) * page_size_;
    if (len > 0)
      usage -= std::min(usage, others_clean_cache(parse_file_cache({stat, static_cast<size_t>(len)}, stat_v2_),
                                                  ours_unmapped));
  }
  const uint64_t unused = policy_.free.len > policy_.par.reserve ? policy_.free.len - policy_.par.reserve : 0;
  const uint64_t want = pages_to_lend(usage, limit_bytes_, headroom_bytes_, policy_.lent, unused, page_size_);
  if (want == policy_.lent) return;
  dmp_lend(&policy_, static_cast<uint32_t>(std::min<uint64_t>(want, UINT32_MAX)));
  for (uint32_t s = dmp_shrink(&policy_); s != DMP_NIL; s = dmp_shrink(&policy_)) demoted(s);
}

}  // namespace dimmap::detail::pagecache
