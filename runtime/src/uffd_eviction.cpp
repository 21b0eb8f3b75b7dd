// uffd_eviction.cpp - demotion (bulk unmap), and pages leaving the eviction queue: the ones
// touched since their demotion are recovered, the rest written back if dirty and freed.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "log.hpp"
#include "uffd_engine.hpp"

namespace dimmap::detail {

// A page entered the eviction queue: its PTE goes in the next bulk unmap.
void UffdEngine::demote(uint32_t s) {
  if (s == DMP_NIL) return;
  pages_[s].flags |= F_ZAP;
  zap_list_.emplace_back(s, pages_[s].key);
  if (zap_list_.size() >= zap_batch_) flush_zaps();
}

// One range per run of demoted pages, widened over gaps of pages that have no PTE, in page
// order: fewer, longer ranges make a shorter page-table walk. The PTEs are clean (the kernel's
// read fault maps them so), so the call costs one TLB flush, not one per range: pages
// written through a writable PTE are the exception. Demoted pages are sparse (a BFS level
// reads some adjacency lists and skips others): 64 of them made ~17 ranges, split by gaps
// of mostly 1-7 pages that were not even resident.
void UffdEngine::flush_zaps() {
  std::sort(zap_list_.begin(), zap_list_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const Region* prev_region = nullptr;
  size_t prev_page = 0;  // last page added to zaps_ (valid while prev_region is set)
  for (auto [s, key] : zap_list_) {
    // Skip pages recovered, freed or reused since they were demoted. Pages just chosen to
    // leave (evict) are still mapped and must be unmapped before they are written or freed.
    const uint8_t st = pages_[s].state;
    if (pages_[s].key != key || (st != DMP_EVICT && st != DMP_LEAVING) || !(pages_[s].flags & F_ZAP)) continue;
    pages_[s].flags &= ~F_ZAP;  // F_WRITABLE stays: the kernel may map it writable again
    Region* r = region_of_slot(s);
    const size_t page = page_of_slot(s);
    size_t first = page;
    if (r == prev_region && page > prev_page + 1 && page - prev_page <= kMaxZapGap + 1 &&
        unmapped(r, prev_page + 1, page))
      first = prev_page + 1;
    zaps_.add(r->addr + first * page_size_, (page + 1 - first) * page_size_);
    prev_region = r;
    prev_page = page;
  }
  zap_list_.clear();
  if (zaps_.size() == 0) return;
  zaps_.flush();
  st_.eviction_batches++;
}

// No page in [first, end) of `r` has a PTE that must stay: not in the buffer, still loading,
// or already demoted (its PTE is gone, or goes in the zap batch being built).
bool UffdEngine::unmapped(const Region* r, size_t first, size_t end) const {
  for (size_t page = first; page < end; ++page) {
    const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
    if (s == DMP_NIL) continue;
    const uint8_t st = pages_[s].state;
    if (st != DMP_LOADING && st != DMP_EVICT && st != DMP_LEAVING) return false;
  }
  return true;
}

// Keeps a reserve of free slots: pages leave the eviction queue in batches.
void UffdEngine::evict() {
  if (writes_refused() && std::chrono::steady_clock::now() < write_retry_at_) return;
  // Free slots plus those already on their way out should cover the reserve and the misses
  // waiting for a slot; writebacks in flight are bounded by the I/O depth.
  const size_t target = par_.reserve + std::min<size_t>(pending_.size() + std::min<size_t>(prefetch_.size(), par_.batch),
                                                      par_.npages / 4);
  while (policy_.evict.len > 0 && policy_.free.len + policy_.leaving < target &&
         writes_in_flight_ + write_backlog_.size() < cfg_.io_depth) {
    const uint32_t n = dmp_evict_batch(&policy_, batch_.data(), par_.batch);
    if (n == 0) break;
    bool pending_zap = false;
    for (uint32_t i = 0; i < n; ++i) pending_zap |= pages_[batch_[i]].flags & F_ZAP;
    if (pending_zap) flush_zaps();  // no page may stay mapped while it is written or freed
    std::vector<uint32_t> dirty;
    touched_since_demotion(batch_.data(), n, &touched_);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t s = batch_[i];
      if (touched_[i])
        recover(s);
      else if (pages_[s].flags & F_DIRTY)
        dirty.push_back(s);
      else
        release_slot(s);  // clean pages are write-protected: a write now faults and waits
    }
    flush_frees();
    // Dirty pages to write back are write-protected, then looked at again: a write after the
    // protection faults to the server (and waits for the page's recovery) instead of being
    // lost, and a page touched between the two looks stays. (Protecting before the first
    // look cost the recovered pages a second first-write fault.)
    protect_for_writeback(dirty);
    touched_since_demotion(dirty.data(), dirty.size(), &touched_);
    size_t kept = 0;
    for (size_t i = 0; i < dirty.size(); ++i) {
      if (touched_[i])
        recover(dirty[i]);
      else
        dirty[kept++] = dirty[i];
    }
    dirty.resize(kept);
    if (!dirty.empty()) submit_writes(dirty, true, nullptr);
  }
}

// (*out)[i]: slots[i]'s page has a PTE again, mapped by the kernel on a touch after its
// demotion unmapped it. One read of the page table per cluster of nearby pages.
void UffdEngine::touched_since_demotion(const uint32_t* slots, size_t n, std::vector<bool>* out) {
  out->assign(n, false);
  std::vector<std::pair<uint64_t, size_t>> order(n);  // (key, index) in page order
  for (size_t i = 0; i < n; ++i) order[i] = {pages_[slots[i]].key, i};
  std::sort(order.begin(), order.end());
  std::vector<bool> present;
  for (size_t i = 0, j; i < n; i = j) {
    // Pages of one region no more than kMaxZapGap apart share a read.
    for (j = i + 1; j < n && key_region(order[j].first) == key_region(order[i].first) &&
                    order[j].first - order[j - 1].first <= kMaxZapGap;
         ++j) {
    }
    const uint32_t first_slot = slots[order[i].second];
    Region* r = region_of_slot(first_slot);
    const size_t first = page_of_slot(first_slot);
    const size_t count = (order[j - 1].first - order[i].first) + 1;
    if (page_table_.present(r->page_addr(first, page_size_), count, &present) < 0) {
      // Cannot tell: treat them as touched (kept, not freed: only slower).
      for (size_t k = i; k < j; ++k) (*out)[order[k].second] = true;
      continue;
    }
    for (size_t k = i; k < j; ++k) (*out)[order[k].second] = present[order[k].first - order[i].first];
  }
}

// A leaving page was touched: back into the buffer, its fault count bumped (the policy's
// recovery). Its PTE stays until it is demoted again.
void UffdEngine::recover(uint32_t s) {
  st_.recoveries++;
  pages_[s].flags &= ~F_ZAP;
  demote(dmp_recover(&policy_, s));
}

// A leaving page is clean or written back: free its memory and its slot. Its PTE is gone
// already (bulk unmap), so the free needs no TLB shootdown.
void UffdEngine::release_slot(uint32_t s) {
  Region* r = region_of_slot(s);
  forget_held(s);
  frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);
  dmp_release(&policy_, s);
  st_.evictions++;
  note_write_progress();
}

void UffdEngine::flush_frees() {
  if (zaps_.size()) zaps_.flush();
  if (frees_.size()) frees_.flush();
}

}  // namespace dimmap::detail
