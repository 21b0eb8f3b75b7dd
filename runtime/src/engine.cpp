// engine.cpp - what every engine does the same way.
#include "engine.hpp"

#include <algorithm>
#include <cerrno>

#include "log.hpp"

extern "C" {
#include "dimmap_policy.h"
}

namespace dimmap::detail {

int policy_params_for(const dimmap_config& cfg, size_t page_size, struct dmp_params* par) {
  const uint64_t npages = cfg.buffer_bytes / page_size;
  const unsigned hot = static_cast<unsigned>(cfg.hot_fraction * 1000.0 + 0.5);
  const unsigned evict = std::max(1u, static_cast<unsigned>(cfg.evict_fraction * 1000.0 + 0.5));
  if (dmp_params_init(par, static_cast<uint32_t>(npages), std::min(hot, 999u), std::min(evict, 499u),
                      cfg.evict_batch) != 0)
    return fail(EINVAL, "buffer of %llu pages is too small (minimum %u)", static_cast<unsigned long long>(npages),
                DMP_MIN_PAGES);
  return 0;
}

int check_whole_mapping(void* addr, size_t length, size_t page_size, size_t mapping_pages, size_t mapping_bytes) {
  if ((length + page_size - 1) / page_size != mapping_pages)
    return fail(EINVAL, "dimmap_munmap(%p): length %zu does not match the mapping (%zu bytes): unmap it whole", addr,
                length, mapping_bytes);
  return 0;
}

}  // namespace dimmap::detail
