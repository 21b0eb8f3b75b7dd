// uffd_writeback.cpp - dirty pages back to storage: coalesced writebacks of pages leaving
// the buffer, msync, and what a failed write leaves (the data stays, the error is reported).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "log.hpp"
#include "uffd_engine.hpp"

namespace dimmap::detail {

size_t UffdEngine::io_len(const Region* r, size_t first_page, size_t npages) const {
  const uint64_t off = r->file_offset + first_page * page_size_;
  const uint64_t len = uint64_t(npages) * page_size_;
  return static_cast<size_t>(std::min<uint64_t>(len, r->file.size() - off));
}

// Write-protects the pages that may be mapped writable, so a store after this point faults
// and marks the page dirty again instead of slipping past its writeback. Adjacent pages of a
// region share one call; on an empty page-table entry the protection is a marker that the
// kernel's next mapping of the page inherits.
void UffdEngine::protect_for_writeback(const std::vector<uint32_t>& slots) {
  std::vector<std::pair<uint64_t, uint32_t>> todo;  // (key, slot)
  for (uint32_t s : slots)
    if ((pages_[s].flags & F_WRITABLE) && region_of_slot(s)->track_dirty) todo.emplace_back(pages_[s].key, s);
  std::sort(todo.begin(), todo.end());
  for (size_t i = 0, j; i < todo.size(); i = j) {
    for (j = i + 1; j < todo.size() && todo[j].first == todo[j - 1].first + 1; ++j) {
    }
    uffd_writeprotect(uffd_, app_addr(todo[i].second), (j - i) * page_size_, true);
    for (size_t k = i; k < j; ++k) pages_[todo[k].second].flags &= ~F_WRITABLE;
  }
}

// Queues writebacks of dirty pages, sorted into runs of adjacent pages (one write per run).
// The pages are busy until their write completes. pump_writes() starts them, at most
// io_depth at a time; any thread holding the lock may queue, only the server starts.
void UffdEngine::submit_writes(std::vector<uint32_t>& dirty, bool eviction, SyncRequest* sync) {
  std::sort(dirty.begin(), dirty.end(), [this](uint32_t a, uint32_t b) { return pages_[a].key < pages_[b].key; });
  for (size_t i = 0; i < dirty.size();) {
    WriteJob job;
    job.region = region_of_slot(dirty[i]);
    job.first_page = page_of_slot(dirty[i]);
    job.eviction = eviction;
    job.sync = sync;
    size_t j = i;
    while (j < dirty.size() && j - i < kMaxWriteRun && pages_[dirty[j]].key == pages_[dirty[i]].key + (j - i)) {
      pages_[dirty[j]].flags |= DMP_F_BUSY;
      pages_[dirty[j]].flags &= ~F_DIRTY;
      job.slots.push_back(dirty[j]);
      ++j;
    }
    job.len = io_len(job.region, job.first_page, job.slots.size());
    const uint64_t id = next_job_++;
    for (uint32_t slot : job.slots) slot_job_[slot] = id;
    job.region->writes++;
    job.region->live_jobs.insert(id);
    if (sync) sync->pending++;
    jobs_.emplace(id, std::move(job));
    write_backlog_.push_back(id);
    i = j;
  }
}

// Starts queued writebacks, each from a staging copy of its pages (the memfd is read, never
// mapped by the engine), bounded by the I/O depth and by the write staging pool.
void UffdEngine::pump_writes() {
  while (!write_backlog_.empty() && writes_in_flight_ < cfg_.io_depth) {
    const uint64_t id = write_backlog_.front();
    WriteJob& job = jobs_.at(id);
    const size_t pages = job.slots.size();
    // A job is at most kMaxWriteRun pages and the pool at least that: with no write in
    // flight the whole pool is free, so a job waits here only for writes that will finish.
    const StagingPool::Block block = write_staging_.find(pages);
    if (block.pages < pages) break;
    write_backlog_.pop_front();
    write_staging_.take(block.first, pages);
    job.staging = block.first;
    char* const data = write_staging_.at(block.first);
    const ssize_t n = pread(job.region->memfd, data, pages * page_size_, static_cast<off_t>(job.first_page * page_size_));
    writes_in_flight_++;  // finish_write counts it out again
    if (n != static_cast<ssize_t>(pages * page_size_)) {
      finish_write(id, n < 0 ? -errno : -EIO);
      continue;
    }
    const uint64_t off = job.region->file_offset + job.first_page * page_size_;
    current_->io->push(IoOp{true, job.region->file.write_fd_for(off, job.len), data, job.len, off, kWriteTag | id});
  }
}

void UffdEngine::finish_write(uint64_t id, ssize_t result) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  WriteJob job = std::move(it->second);
  jobs_.erase(it);
  write_staging_.give(job.staging, job.slots.size());  // a job finishes only once started
  Region* r = job.region;
  r->writes--;
  r->live_jobs.erase(id);
  writes_in_flight_--;
  const bool ok = result >= 0 && static_cast<size_t>(result) == job.len;
  if (ok) {
    if (r->fresh)
      for (size_t i = 0; i < job.slots.size(); ++i) r->written[job.first_page + i] = true;
    st_.writebacks += job.slots.size();
    st_.write_ios++;
    st_.bytes_written += job.len;
    note_write_progress();
  } else {
    const int err = result < 0 ? static_cast<int>(-result) : EIO;
    st_.write_errors++;
    // One line per region until the next msync/munmap reports the error (stats count all).
    if (!r->write_error) {
      r->write_error = err;
      log(LogLevel::error, "writing %zu pages at offset %llu of '%s' back failed: %s; they stay in the buffer",
          job.slots.size(), static_cast<unsigned long long>(r->file_offset + job.first_page * page_size_),
          r->file.path().c_str(), std::strerror(err));
    }
    if (job.eviction) {
      failed_evictions_ += job.slots.size();
      if (writes_refused()) write_retry_at_ = std::chrono::steady_clock::now() + kWriteRetryInterval;
    }
  }
  if (job.sync) {
    if (!ok && !job.sync->error) job.sync->error = result < 0 ? static_cast<int>(-result) : EIO;
    job.sync->pending--;
  }
  // Pages touched while being written (mapped again by a read) stay, as if faulted.
  if (job.eviction) touched_since_demotion(job.slots.data(), job.slots.size(), &touched_);
  for (size_t i = 0; i < job.slots.size(); ++i) {
    const uint32_t s = job.slots[i];
    uint8_t& f = pages_[s].flags;
    f &= ~DMP_F_BUSY;
    // Without write-protect tracking a stored page may change at any time: it stays dirty.
    if (!ok || !r->track_dirty) f |= F_DIRTY;
    if (!job.eviction) continue;
    if (ok && !(f & F_WANTED) && !touched_[i]) {
      release_slot(s);
      continue;
    }
    // Faulted or touched while leaving, or not written: back into the buffer (data kept).
    const bool wanted = f & F_WANTED;
    const bool writer_waits = f & F_WP_WAIT;
    f &= ~(F_WANTED | F_WP_WAIT);
    if (wanted || touched_[i]) st_.recoveries++;
    pages_[s].flags &= ~F_ZAP;
    demote(dmp_recover(&policy_, s));
    char* addr = r->page_addr(page_of_slot(s), page_size_);
    if (writer_waits) {  // the write that waited: dirty again, and let it through
      f |= F_DIRTY | F_WRITABLE;
      uffd_writeprotect(uffd_, addr, page_size_, false);
    } else if (wanted) {
      uffd_wake(uffd_, addr, page_size_);
    }
  }
  flush_frees();
  io_done_.notify_all();
}

// Resident pages of r in [first, end), from the page table or a scan of the pool,
// whichever is shorter.
std::vector<uint32_t> UffdEngine::slots_in(const Region* r, size_t first, size_t end) const {
  std::vector<uint32_t> out;
  if (end - first < par_.npages) {
    for (size_t p = first; p < end; ++p) {
      uint32_t s = dmp_lookup(&policy_, key_of(r, p));
      if (s != DMP_NIL) out.push_back(s);
    }
  } else {
    for (uint32_t s = 0; s < par_.npages; ++s) {
      if (pages_[s].state == DMP_FREE || key_region(pages_[s].key) != r->id) continue;
      size_t p = page_of_slot(s);
      if (p >= first && p < end) out.push_back(s);
    }
  }
  return out;
}

// Writes back the dirty pages of r in [first, end) through the fault server's I/O queue and
// waits for them, and for any writeback of r already under way (evictions, other threads).
// Returns 0 or -errno; pages that could not be written stay dirty.
int UffdEngine::write_back(Region* r, size_t first, size_t end, std::unique_lock<std::mutex>& lock) {
  // A dirty page already in a writeback queued before this call may be written from a copy
  // older than its last store: write it again once that writeback is done. Writebacks queued
  // after this call copy the page when they start, so they include every earlier store.
  const uint64_t entry = next_job_;
  std::vector<uint32_t> todo = slots_in(r, first, end), again;
  SyncRequest req;
  for (int round = 0; round == 0 || !todo.empty(); ++round) {
    std::vector<uint32_t> dirty;
    for (uint32_t s : todo) {
      uint8_t& f = pages_[s].flags;
      if (!(f & F_DIRTY) || pages_[s].state == DMP_LOADING || pages_[s].state == DMP_LEAVING) continue;
      if (f & DMP_F_BUSY) {
        if (slot_job_[s] < entry) again.push_back(s);
        continue;
      }
      dirty.push_back(s);
    }
    // Write-protect first, so a store during the write faults and marks the page dirty again.
    protect_for_writeback(dirty);
    if (!dirty.empty()) {
      submit_writes(dirty, false, &req);
      wake_server();
    }
    // Every writeback of r queued so far, this call's and others', must land.
    const uint64_t upto = next_job_;
    io_done_.wait(lock, [&] { return req.pending == 0 && (r->live_jobs.empty() || *r->live_jobs.begin() >= upto); });
    todo.swap(again);
    again.clear();
    if (round == 1) break;  // after the wait no writeback older than this call is left
  }
  int err = req.error ? req.error : r->write_error;
  r->write_error = 0;
  return -err;
}

int UffdEngine::sync(void* addr, size_t length, int flags) {
  if ((flags & MS_ASYNC) && (flags & MS_SYNC)) return fail(EINVAL, "dimmap_msync: both MS_ASYNC and MS_SYNC");
  if (reinterpret_cast<uintptr_t>(addr) % page_size_)
    return fail(EINVAL, "dimmap_msync(%p): address not page aligned", addr);
  std::unique_lock<std::mutex> lock(mu_);
  size_t first = 0, end = 0;
  Region* r = region_range(addr, length, "dimmap_msync", &first, &end);
  if (!r) return -ENOMEM;
  int err = 0;
  if (r->writable) err = write_back(r, first, end, lock);
  if (flags & MS_INVALIDATE) {
    for (uint32_t s : slots_in(r, first, end)) {
      const uint8_t st = pages_[s].state;
      if ((pages_[s].flags & (F_DIRTY | DMP_F_BUSY)) || st == DMP_LOADING || st == DMP_LEAVING) continue;
      frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);  // also drops the PTE
      forget_held(s);
      dmp_remove(&policy_, s);
      st_.evictions++;
    }
    frees_.flush();
  }
  const std::string path = r->file.path();
  const int sync_fd = (flags & MS_SYNC) && r->writable ? r->file.buffered_fd() : -1;
  lock.unlock();
  if (err) return fail(-err, "dimmap_msync('%s'): writeback failed: %s", path.c_str(), std::strerror(-err));
  if (sync_fd >= 0 && fdatasync(sync_fd) != 0)
    return fail(errno, "dimmap_msync('%s'): fdatasync failed: %s", path.c_str(), std::strerror(errno));
  return 0;
}

}  // namespace dimmap::detail
