// pagecache_sweep.cpp - the pagecache engine's sweeps of writable mappings, and its hunt for
// cached pages that no list holds. How the engine works: pagecache_engine.hpp.
//
// Why sweeps. Unmapping a page whose PTE is dirty costs a TLB flush, and the kernel flushes
// once per page table a call's range touches, not once per page: a demoted written page
// unmapped on its own costs one TLB-flush IPI (tens of microseconds in a VM). A page in the
// primary or hot FIFO may lose its PTE at any time without changing the policy (only a
// demoted page's PTE is watched), so every kSweepRounds rounds the keeper unmaps each sparse
// page table's reach of a writable mapping in a few long ranges: one flush for many written
// pages, and a page demoted later is most often unmapped already. Before the buffer's first
// demotion there is nothing to save: sweeps start with it (sweeps_now).
//
// What a sweep leaves alone. A chunk whose pages are mostly in the FIFOs (dense: in use, a hot
// region) would fault again at once, and so would hot-FIFO pages; a chunk with few dirty pages
// gains nothing (clean PTEs are unmapped cheaply one by one); pages read ahead for a pass are
// about to be used.
//
// Strays. The ranges are planned before the round's scan and unmapped right after it, so only a
// page the program maps between the scan's look at it and the unmap loses its PTE unseen: it
// stays cached, in no FIFO or queue. So does a page whose drop the kernel refused. After the
// unmap the sweep looks for such pages in the chunks it swept (mincore); one found so by two
// sweeps in a row, outside the passes' read-ahead, leaves as an evicted page does (written
// first if dirty) without counting as a miss. Pages another process or engine instance keeps
// cached in the same file look alike and leave too: that costs it a refault, never data.
#include <sys/mman.h>

#include <algorithm>

#include "pagecache_engine.hpp"

namespace dimmap::detail::pagecache {

namespace {

// Pages of r's FIFOs in [first, end), which is word aligned.
size_t known_pages(const Region& r, size_t first, size_t end) {
  size_t n = 0;
  for (size_t w = first >> 6; w < (end + 63) >> 6; ++w) n += static_cast<size_t>(__builtin_popcountll(r.in_fifo.words[w]));
  return n;
}

// Whether page p of r lies in what was read ahead of a pass that goes on.
bool read_ahead_of_a_pass(const Region& r, uint64_t p, uint64_t round) {
  for (const Stream& s : r.streams)
    if (s.ahead_end && round - s.round < kPassRounds && p < s.ahead_end && p + 2 * s.window + kStreamMinPages >= s.ahead_end)
      return true;
  return false;
}

}  // namespace

void PageCacheEngine::plan_sweep(Region* r) {
  swept_.clear();
  for (size_t first = 0; first < r->npages; first += kSweepChunk) {
    const size_t end = std::min(r->npages, first + kSweepChunk);
    if (known_pages(*r, first, end) * 2 > end - first) continue;  // dense: its pages are in use
    // With few dirty pages, the unmap costs more than the flushes it saves (a call's flush
    // beside the cheap unmaps of clean PTEs one by one).
    if (dirty_pages(r->writeback_fd, r->file_offset + first * page_size_, (end - first) * page_size_) < kSweepMinDirty)
      continue;
    swept_.push_back(first);
    size_t from = first;  // the range being built
    for (size_t p = first; p <= end; ++p) {
      const bool kept = p == end || (r->known(p) && pages_[dmp_lookup(&policy_, page_key(r->id, p))].state == DMP_HOT) ||
                        read_ahead_of_a_pass(*r, p, round_);
      if (!kept) continue;
      if (p > from) sweeps_.add(r->addr + from * page_size_, (p - from) * page_size_);
      from = p + 1;
    }
  }
}

void PageCacheEngine::sweep(Region* r) {
  sweeps_.flush();
  for (size_t first : swept_) {
    const size_t end = std::min(r->npages, first + kSweepChunk);
    if (mincore(r->addr + first * page_size_, (end - first) * page_size_, cached_) != 0) continue;
    for (size_t p = first; p < end; ++p) {
      const bool was_unheld = r->unheld.test(p);
      const bool unheld = (cached_[p - first] & 1) && !r->known(p) &&
                          dmp_lookup(&policy_, page_key(r->id, p)) == DMP_NIL && !read_ahead_of_a_pass(*r, p, round_);
      r->unheld.set(p, unheld && !was_unheld);
      if (!unheld || !was_unheld) continue;
      leaving_.push_back({r->id, p});  // found so twice: a stray, it leaves
      add_write_extent(r->id, p);
    }
  }
}

}  // namespace dimmap::detail::pagecache
