// pagecache_yield.hpp - how far the pagecache engine's buffer yields to a memory-cgroup limit
// (why and how: pagecache_yield.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

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

}  // namespace dimmap::detail::pagecache
