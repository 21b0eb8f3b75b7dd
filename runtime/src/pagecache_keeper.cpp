// pagecache_keeper.cpp - the pagecache engine's keeper thread: it finds the pages mapped since
// its last round, runs the DI-MMAP policy on them, unmaps demoted pages in bulk, and writes
// back and drops the pages leaving the buffer. How it works: pagecache_engine.hpp.
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log.hpp"
#include "pagecache_engine.hpp"

namespace dimmap::detail::pagecache {

namespace {

uint64_t process_faults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_minflt) + static_cast<uint64_t>(ru.ru_majflt);
}

}  // namespace

void PageCacheEngine::keep() {
  pthread_setname_np(pthread_self(), "dimmap-keeper");
  priority_.start();
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t seen = process_faults();
  while (!stop_) {
    cv_.wait_for(lock, kPollInterval);
    if (stop_) break;
    const uint64_t now = process_faults();
    const uint64_t ticket = requested_;
    if (now - seen < scan_after_ && ticket == served_ && !passing_ && !settling_) continue;
    seen = now;
    lock.unlock();
    {
      // Lock order: regions, then policy. The unmaps and drops need only the regions.
      std::shared_lock<std::shared_mutex> regions(regions_mu_);
      {
        std::lock_guard<std::mutex> policy(mu_);
        scan(ticket != served_);  // a stats() caller's round counts every page mapped before its call
      }
      apply();
      if (log_enabled(LogLevel::debug)) log_state();
    }
    priority_.tick(std::chrono::steady_clock::now());
    lock.lock();
    // The round let in every page mapped before the stats() calls it serves.
    served_ = ticket;
    served_cv_.notify_all();
  }
}

void PageCacheEngine::log_state() {
  constexpr auto kLogInterval = std::chrono::milliseconds(100);
  const auto now = std::chrono::steady_clock::now();
  if (now - logged_ < kLogInterval) return;
  logged_ = now;
  std::lock_guard<std::mutex> policy(mu_);
  uint64_t cached = 0;
  size_t waiting = 0;
  for (auto& [id, r] : by_id_) {
    Cachestat cs;
    if (cache_state(r->file.buffered_fd(), r->file_offset, r->length, &cs)) cached += cs.nr_cache;
    waiting += r->fresh.size();
  }
  log(LogLevel::debug,
      "pagecache keeper: round %llu: FIFOs %u primary + %u hot, eviction queue %u, free %u (lent %u); "
      "%zu mapped pages waiting to be let in, %zu leaving runs waiting for their writes; "
      "%llu pages of the mapped files cached, buffer %u",
      static_cast<unsigned long long>(round_), policy_.primary.len, policy_.hot.len, policy_.evict.len,
      policy_.free.len, policy_.lent, waiting, rewrite_.size(), static_cast<unsigned long long>(cached), par_.npages);
}

void PageCacheEngine::scan(bool admit_all) {
  passing_ = false;
  // The eviction queue's pages lost their PTEs in earlier rounds' unmaps: once this scan has
  // recovered the touched ones, the rest may leave. Pages demoted in this round are still
  // mapped, so a touch of them cannot be seen yet: they wait for the next round's look.
  evictable_ = policy_.evict.len;
  settling_ = false;
  for (auto& [id, region] : by_id_) {
    Region* r = region.get();
    for (const Stream& s : r->streams)
      if (s.ahead_end && round_ - s.round < kPassRounds) passing_ = true;
    // A sweep's ranges are planned before the scan and unmapped right after it: a page the
    // program maps between the scan's look at it and the unmap leaves the lists' sight.
    if (sweeps_now(*r)) plan_sweep(r);
    collect_mapped(r);
  }
  // Every mapping is looked at before any page is demoted: a page demoted now is still
  // mapped, and a later look would take it for touched.
  for (auto& [id, region] : by_id_) recover_touched(region.get());
  for (auto& [id, region] : by_id_) {
    admit_fresh(region.get(), admit_all);
    if (sweeps_now(*region)) sweep(region.get());
  }
  yield_to_limit();
  while (dmp_wants_eviction(&policy_) && evict_batch()) {
  }
  // Pages left waiting, or room still wanted: the next round comes at the next poll, faults
  // or not, so the buffer's bound holds once the program goes quiet.
  if (dmp_wants_eviction(&policy_)) settling_ = true;
}

void PageCacheEngine::recover_touched(Region* r) {
  for (size_t p : r->fresh) {
    const uint32_t s = dmp_lookup(&policy_, page_key(r->id, p));
    if (s == DMP_NIL) continue;
    if (pages_[s].state == DMP_EVICT) {
      st_.recoveries++;
      evictable_--;
      demoted(dmp_recover(&policy_, s));
    }
    r->set_known(p, true);
  }
}

void PageCacheEngine::admit_fresh(Region* r, bool admit_all) {
  size_t waiting = 0;
  for (size_t p : r->fresh) waiting += !r->known(p);
  uint64_t run_first = 0, run_end = 0;  // the current run of misses in a row
  size_t done = 0;                       // pages of r->fresh looked at
  for (; done < r->fresh.size(); ++done) {
    const size_t p = r->fresh[done];
    if (r->known(p)) continue;
    const uint64_t key = page_key(r->id, p);
    uint32_t s = dmp_alloc(&policy_, key);
    // Past an eviction queue's worth of pages left waiting, this round's oldest demotions go
    // after all: the pages mapped beyond the buffer stay within that and a round's faults.
    while (s == DMP_NIL && (evict_batch() || ((admit_all || waiting > par_.evict_pages) && evict_early())))
      s = dmp_alloc(&policy_, key);
    if (s == DMP_NIL) {  // no room in this round: the next one takes the rest
      settling_ = true;
      break;
    }
    waiting--;
    st_.misses++;
    st_.bytes_read += page_size_;
    r->set_known(p, true);
    demoted(dmp_loaded(&policy_, s));
    if (p != run_end) {
      follow_pass(r, run_first, run_end);
      run_first = p;
    }
    run_end = p + 1;
  }
  follow_pass(r, run_first, run_end);
  // The pages left wait in this list, not only in the page table: the kernel may unmap one
  // before the next look (seen with a file its writer left cached in large folios: 32 pages
  // went at once), and it was read all the same: a miss.
  r->fresh.erase(r->fresh.begin(), r->fresh.begin() + static_cast<std::ptrdiff_t>(done));
}

void PageCacheEngine::collect_mapped(Region* r) {
  const uint64_t base = reinterpret_cast<uintptr_t>(r->addr);
  PmScanArg arg{};
  arg.size = sizeof arg;
  arg.start = base;
  arg.end = base + r->length;
  arg.vec = reinterpret_cast<uintptr_t>(vec_);
  arg.vec_len = sizeof vec_ / sizeof vec_[0];
  arg.category_mask = kPageIsPresent;
  arg.return_mask = kPageIsPresent;
  const size_t left = r->fresh.size();  // left by the last round, in page order
  while (arg.start < arg.end) {
    const int n = ioctl(pagemap_fd_, kPagemapScan, &arg);
    if (n < 0) {
      log(LogLevel::warn, "PAGEMAP_SCAN failed: %s", std::strerror(errno));
      break;
    }
    for (int i = 0; i < n; ++i)
      for (uint64_t a = vec_[i].start; a < vec_[i].end; a += page_size_) {
        const size_t p = (a - base) / page_size_;
        if (!r->known(p)) r->fresh.push_back(p);
      }
    if (arg.walk_end <= arg.start) break;
    arg.start = arg.walk_end;
  }
  if (left > 0) {  // most are mapped still, and found again: once each, in page order
    std::inplace_merge(r->fresh.begin(), r->fresh.begin() + static_cast<std::ptrdiff_t>(left), r->fresh.end());
    r->fresh.erase(std::unique(r->fresh.begin(), r->fresh.end()), r->fresh.end());
  }
}

void PageCacheEngine::follow_pass(Region* r, uint64_t first, uint64_t end) {
  if (max_window_ == 0 || end - first < kStreamMinRun) return;
  // The pages just before the run that are in the buffer: the same pass, as earlier rounds
  // found it (a slow pass makes a few pages a round).
  uint64_t before = 0;
  while (before < kStreamMinPages && first > before && r->known(first - before - 1)) ++before;
  if (end - first + before < kStreamMinPages) return;
  // The pass this run continues: it starts inside what was read ahead of it, or right after.
  Stream* st = nullptr;
  for (Stream& s : r->streams)
    if (s.ahead_end && first <= s.ahead_end && end + s.window >= s.ahead_end) st = &s;
  if (!st) {  // a new pass takes the place of the one seen longest ago
    st = &r->streams[0];
    for (Stream& s : r->streams)
      if (s.round < st->round) st = &s;
    *st = Stream{end, first_window_, 0};
  } else if (end + st->window / 2 < st->ahead_end) {
    st->round = round_;  // half of what was read ahead is still to come: nothing more yet
    return;
  } else {
    st->window = std::min(st->window * 2, max_window_);  // the pass used it: read further ahead
  }
  st->round = round_;
  passing_ = true;
  const uint64_t from = std::max(st->ahead_end, end), to = std::min<uint64_t>(end + st->window, r->npages);
  if (to <= from) return;
  read_ahead_.push_back({r->id, from, to - from});
  st->ahead_end = to;
}

void PageCacheEngine::demoted(uint32_t s) {
  if (s == DMP_NIL) return;
  Region* r = by_id_.at(key_region(pages_[s].key)).get();
  const size_t p = key_page(pages_[s].key);
  r->set_known(p, false);
  zaps_.add(r->addr + p * page_size_, page_size_);
}

bool PageCacheEngine::evict_early() {
  evictable_ += par_.batch;
  return evict_batch();
}

bool PageCacheEngine::evict_batch() {
  const uint32_t n = dmp_evict_batch(&policy_, batch_.data(), static_cast<uint32_t>(std::min<uint64_t>(batch_.size(), evictable_)));
  if (n == 0) return false;
  evictable_ -= n;
  st_.eviction_batches++;
  for (uint32_t i = 0; i < n; ++i) {
    const dmp_page& pg = pages_[batch_[i]];
    const uint32_t id = key_region(pg.key);
    const uint64_t page = key_page(pg.key);
    leaving_.push_back({id, page});
    if (by_id_.at(id)->writable) add_write_extent(id, page);
  }
  for (uint32_t i = 0; i < n; ++i) {
    dmp_release(&policy_, batch_[i]);
    st_.evictions++;
  }
  return true;
}

void PageCacheEngine::add_write_extent(uint32_t id, uint64_t page) {
  const uint64_t lo = page / kWriteCluster * kWriteCluster, hi = lo + kWriteCluster;
  auto unmapped = [&](uint64_t q) {
    const uint32_t s = dmp_lookup(&policy_, page_key(id, q));
    return s != DMP_NIL && (pages_[s].state == DMP_EVICT || pages_[s].state == DMP_LEAVING);
  };
  uint64_t first = page, last = page;
  while (first > lo && unmapped(first - 1)) --first;
  while (last + 1 < hi && unmapped(last + 1)) ++last;
  for (uint64_t q = first; q <= last; ++q) to_write_.push_back({id, q});
}

void PageCacheEngine::apply() {
  ++round_;
  // Read-ahead first: the passes are waiting for it.
  for (const Run& run : read_ahead_)
    if (auto it = by_id_.find(run.region_id); it != by_id_.end()) {
      const Region* r = it->second.get();
      prefetched_.fetch_add(read_into_cache(r->file.buffered_fd(), r->file_offset + run.first * page_size_,
                                            run.pages * page_size_, page_size_),
                            std::memory_order_relaxed);
    }
  read_ahead_.clear();
  to_runs(&leaving_, &runs_);
  to_runs(&to_write_, &write_runs_);
  // The runs found dirty again last round leave again, written first.
  runs_.insert(runs_.end(), rewrite_.begin(), rewrite_.end());
  write_runs_.insert(write_runs_.end(), rewrite_.begin(), rewrite_.end());
  rewrite_.clear();
  // The pages demoted this round and the leaving ones lose their PTEs in one call: a leaving
  // page may have been mapped again since its demotion (touched after the scan, or by the
  // kernel's fault-around where it is on), and writing a mapped page costs a TLB shootdown.
  for (const Run& run : runs_)
    if (auto it = by_id_.find(run.region_id); it != by_id_.end())
      zaps_.add(it->second->addr + run.first * page_size_, run.pages * page_size_);
  zaps_.flush();
  // The writes go out together; the drops below wait for those of their runs.
  std::sort(write_runs_.begin(), write_runs_.end(), by_position);
  clean_writes_.clear();
  for (const Run& run : write_runs_)
    if (start_writeback(run)) clean_writes_.push_back(run);
  drop_leaving();
}

bool PageCacheEngine::start_writeback(const Run& run) {
  auto it = by_id_.find(run.region_id);
  if (it == by_id_.end()) return false;
  const Region* r = it->second.get();
  const uint64_t off = r->file_offset + run.first * page_size_, len = run.pages * page_size_;
  std::lock_guard<std::mutex> counting(count_mu_);
  Cachestat cs;
  if (!cache_state(r->writeback_fd, off, len, &cs)) return false;
  if (cs.nr_dirty == 0) return cs.nr_writeback == 0;  // nothing to start; clean unless being written
  sync_file_range(r->writeback_fd, static_cast<off_t>(off), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
  count_writeback(cs.nr_dirty, dirty_pages(r->writeback_fd, off, len));
  return false;
}

bool PageCacheEngine::writeback_failed(Region* r, off_t off, off_t len, bool wait) {
  if (r->checked_round != round_) {
    r->checked_round = round_;
    r->failed_this_round = false;
    r->looked_this_round = false;
  }
  if (r->failed_this_round) return true;
  // The caller classified every run of the round as clean or not before the first look, so
  // one look a round answers for the clean runs: a write that fails later is of a page that
  // was dirty or being written then, in a run that waits for its own write and looks again.
  if (!wait && r->looked_this_round) return false;
  // Waits for the writeback of [off, off + len) (started earlier in this round), then
  // reports any failure of the file's writeback since the last look. A page whose write
  // failed is clean: dropped before this look, its data would be lost.
  r->looked_this_round = true;
  if (sync_file_range(r->writeback_fd, off, len, SYNC_FILE_RANGE_WAIT_BEFORE) == 0) return false;
  r->failed_this_round = true;
  r->write_error.store(errno == 0 ? EIO : errno);
  keep_dirty(r, 0, r->npages);
  return true;
}

void PageCacheEngine::to_runs(std::vector<std::pair<uint32_t, uint64_t>>* pages, std::vector<Run>* runs) {
  std::sort(pages->begin(), pages->end());
  pages->erase(std::unique(pages->begin(), pages->end()), pages->end());
  runs->clear();
  for (size_t i = 0; i < pages->size();) {
    size_t j = i + 1;
    while (j < pages->size() && (*pages)[j].first == (*pages)[i].first &&
           (*pages)[j].second == (*pages)[j - 1].second + 1)
      ++j;
    runs->push_back({(*pages)[i].first, (*pages)[i].second, j - i});
    i = j;
  }
  pages->clear();
}

bool PageCacheEngine::inside_clean_write(const Run& run) const {
  auto it = std::upper_bound(clean_writes_.begin(), clean_writes_.end(), run, by_position);
  if (it == clean_writes_.begin()) return false;
  --it;
  return it->region_id == run.region_id && run.first + run.pages <= it->first + it->pages;
}

void PageCacheEngine::drop_leaving() {
  // Leaving runs lost their PTEs in this round's bulk unmap, moments ago: a touch since maps
  // one again, and the kernel does not drop a mapped page (the next scan finds it as a miss).
  // A run of a writable mapping is dropped only clean: it is settled when no page of it is
  // dirty or being written, else it waits for its write and is looked at again.
  settled_.clear();
  unsettled_.clear();
  for (const Run& run : runs_) {
    auto it = by_id_.find(run.region_id);
    if (it == by_id_.end()) continue;  // unmapped meanwhile: its pages went with it
    const Region* r = it->second.get();
    const auto [off, len] = file_range(*r, run);
    if (!r->writable) {
      // Unmapped once more right before the drop: with many threads on few cores, touches
      // between the bulk unmap and the drop are common enough to keep pages cached past the
      // buffer (a test of 64 busy readers under ThreadSanitizer: up to 2.8 times the buffer).
      madvise(r->addr + run.first * page_size_, static_cast<size_t>(len), MADV_DONTNEED);
      posix_fadvise(r->file.buffered_fd(), off, len, POSIX_FADV_DONTNEED);
      continue;
    }
    Cachestat cs;
    if (inside_clean_write(run) ||
        (cache_state(r->writeback_fd, static_cast<uint64_t>(off), static_cast<uint64_t>(len), &cs) &&
         cs.nr_dirty + cs.nr_writeback == 0))
      settled_.push_back(run);
    else
      unsettled_.push_back(run);
  }
  if (settled_.empty() && unsettled_.empty()) return;
  std::lock_guard<std::mutex> dropping(drop_mu_);
  for (const Run& run : unsettled_) {
    Region* r = by_id_.at(run.region_id).get();
    const auto [off, len] = file_range(*r, run);
    Cachestat cs;
    // A page dirty again (written while leaving, or made dirty after a failed writeback) is
    // written again and dropped by the next round: POSIX_FADV_DONTNEED would start its write
    // and drop it once done, and a write that failed would lose its data.
    if (writeback_failed(r, off, len, true) ||
        !cache_state(r->writeback_fd, static_cast<uint64_t>(off), static_cast<uint64_t>(len), &cs) ||
        cs.nr_dirty + cs.nr_writeback > 0) {
      rewrite_.push_back(run);
      continue;
    }
    // Its write took a while: a touch meanwhile mapped it again (a failed drop of a mapped
    // page costs the kernel a drain of every CPU's LRU cache).
    zaps_.add(r->addr + run.first * page_size_, run.pages * page_size_);
    settled_.push_back(run);
  }
  zaps_.flush();
  for (const Run& run : settled_) {
    Region* r = by_id_.at(run.region_id).get();
    const auto [off, len] = file_range(*r, run);
    if (writeback_failed(r, off, len, false)) {
      rewrite_.push_back(run);  // its data may be only in the page cache: it stays, and is written again
      continue;
    }
    posix_fadvise(r->file.buffered_fd(), off, len, POSIX_FADV_DONTNEED);
  }
}

}  // namespace dimmap::detail::pagecache
