// pagecache_yield.hpp - how far the pagecache engine's buffer yields to a memory-cgroup limit
// (why and how: pagecache_yield.cpp).
#pragma once

#include <dimmap/memory_limit.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace dimmap::detail::pagecache {

// How many pages the buffer lends back, given the cgroup's usage now, the pages lent so far
// and the pool's slots that no page uses yet (free beyond the policy's reserve: a buffer not
// yet full). While the usage is within `headroom` of the limit, the pages in use must shrink
// by the shortfall: the slots not in use are lent first, then that many more. Once the usage
// is more than twice the headroom below the limit, the surplus is taken back, at most what
// was lent. Between the two nothing changes (the band keeps it from swinging round by round).
inline uint64_t pages_to_lend(uint64_t usage, uint64_t limit, uint64_t headroom, uint64_t lent, uint64_t unused,
                              uint64_t page_size) {
  if (usage + headroom > limit) return std::max(lent, unused) + (usage + headroom - limit + page_size - 1) / page_size;
  if (usage + 2 * headroom < limit) return lent - std::min(lent, (limit - usage - 2 * headroom) / page_size);
  return lent;
}

// A memory cgroup's page cache, from its memory.stat (bytes).
struct CgroupFileCache {
  uint64_t lru = 0;  // on the file LRU lists (active + inactive): tmpfs and shared memory are not
  uint64_t mapped = 0;
  uint64_t dirty = 0;
  uint64_t writeback = 0;
};

// Reads memory.stat: v2's names, or v1's hierarchical ones (total_*, which count the cgroups
// below too, as its usage does). Missing ones count 0.
inline CgroupFileCache parse_file_cache(std::string_view stat, bool v2) {
  const std::string prefix = v2 ? "" : "total_";
  auto value = [&](const char* name) { return cgroup_keyed_value(stat, prefix + name).value_or(0); };
  CgroupFileCache c;
  c.lru = value("active_file") + value("inactive_file");
  c.mapped = value(v2 ? "file_mapped" : "mapped_file");
  c.dirty = value(v2 ? "file_dirty" : "dirty");
  c.writeback = value(v2 ? "file_writeback" : "writeback");
  return c;
}

// The cgroup's page cache that the kernel reclaims first and without waiting, and that is
// not the buffer's: clean, unmapped, and none of the buffer's own unmapped pages (its
// eviction queue and those leaving it, `ours_unmapped` bytes). A lower bound: a dirty page
// that is mapped is taken away twice. It is as good as free room: a cgroup that read other
// files is full of it, and the buffer need not shrink for it.
inline uint64_t others_clean_cache(const CgroupFileCache& c, uint64_t ours_unmapped) {
  uint64_t left = c.lru;
  for (uint64_t taken : {c.mapped, c.dirty, c.writeback, ours_unmapped}) left -= std::min(left, taken);
  return left;
}

}  // namespace dimmap::detail::pagecache
