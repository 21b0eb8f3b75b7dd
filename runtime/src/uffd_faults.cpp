// uffd_faults.cpp - the fault server: the page-state switch of a fault, misses waiting for
// a slot, and write-protect faults (first writes: dirty tracking).
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log.hpp"
#include "uffd_engine.hpp"

namespace dimmap::detail {

// While faults keep coming the server polls without sleeping (for up to spin_us after the
// last event): waking a sleeping server costs more than a fault on a virtual machine.
void UffdEngine::serve() {
  struct pollfd fds[3] = {{uffd_, POLLIN, 0}, {io_->event_fd(), POLLIN, 0}, {ctl_fd_, POLLIN, 0}};
  std::vector<IoDone> done(256);
  const auto spin = std::chrono::microseconds(cfg_.spin_us);
  auto last_event = std::chrono::steady_clock::now() - spin;
  prctl(PR_SET_TIMERSLACK, 1000);  // latency-model sleeps to the microsecond
  for (;;) {
    // Completions held by a latency model are waited out as PerMA did: sleep when the next
    // is far, yield when near, spin when imminent.
    const int64_t due = io_->ns_until_next();
    if (std::chrono::steady_clock::now() - last_event >= spin && (due < 0 || due > 20000)) {
      if (due > 200000 || due < 0) {
        struct timespec ts = {static_cast<time_t>(due / 1000000000), static_cast<long>(due % 1000000000)};
        if (ppoll(fds, 3, due < 0 ? nullptr : &ts, nullptr) < 0 && errno != EINTR)
          log(LogLevel::error, "fault server: poll failed: %s", std::strerror(errno));
      } else {
        sched_yield();
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    uint64_t v;
    while (read(ctl_fd_, &v, sizeof v) > 0) {
    }
    size_t events = drain_faults();
    for (size_t n; (n = io_->reap(done.data(), done.size())) > 0;) {
      events += n;
      for (size_t i = 0; i < n; ++i) {
        if (done[i].tag & kWriteTag)
          finish_write(done[i].tag & ~kWriteTag, done[i].result);
        else if (done[i].tag & kRunTag)
          finish_read_run(done[i].tag & ~kRunTag, done[i].result);
        else
          finish_read(static_cast<uint32_t>(done[i].tag), done[i].result);
      }
    }
    if (events) last_event = std::chrono::steady_clock::now();
    // Start the reads just queued before the eviction work below: a faulting thread
    // should not wait for a batch of unmaps and frees it does not need.
    if (int rc = io_->submit(); rc < 0) log(LogLevel::error, "I/O submission failed: %s", std::strerror(-rc));
    evict();
    start_pending();
    pump_writes();
    lock.unlock();
    if (int rc = io_->submit(); rc < 0) log(LogLevel::error, "I/O submission failed: %s", std::strerror(-rc));
  }
}

size_t UffdEngine::drain_faults() {
  struct uffd_msg msgs[64];
  size_t total = 0;
  for (;;) {
    ssize_t n = read(uffd_, msgs, sizeof msgs);
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        log(LogLevel::error, "reading the userfaultfd failed: %s", std::strerror(errno));
      return total;
    }
    for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof msgs[0]); ++i, ++total)
      if (msgs[i].event == UFFD_EVENT_PAGEFAULT) handle_fault(msgs[i]);
  }
}

void UffdEngine::handle_fault(const struct uffd_msg& msg) {
  const uintptr_t a = msg.arg.pagefault.address & ~(uintptr_t(page_size_) - 1);
  const uint64_t flags = msg.arg.pagefault.flags;
  const uint32_t tid = features_.thread_id ? msg.arg.pagefault.feat.ptid : 0;
  Region* r = region_by_addr(a);
  if (!r) {
    // The mapping went away (dimmap_munmap): let the thread retry and meet the hole.
    uffd_wake(uffd_, reinterpret_cast<void*>(a), page_size_);
    return;
  }
  const size_t page = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
  st_.faults++;
  if (flags & UFFD_PAGEFAULT_FLAG_WP)
    handle_write_protect_fault(r, page);
  else
    on_missing(r, page, flags & UFFD_PAGEFAULT_FLAG_WRITE, tid, true);
}

// A thread touched a page the memfd does not hold (or held when the message was read: the
// fault raced with a store). first_sight: the fault's own message, not a retry of a miss
// that waited for a slot.
void UffdEngine::on_missing(Region* r, size_t page, bool write, uint32_t tid, bool first_sight) {
  touch(r, page);
  const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
  if (s == DMP_NIL) {
    start_fill(r, page, write, tid);
    if (first_sight) note_miss(r, page);
    return;
  }
  switch (pages_[s].state) {
    case DMP_LOADING:  // another thread's read is in flight: its completion wakes us all
      st_.hits++;
      if (write) pages_[s].flags |= F_LOAD_WRITE;
      return;
    case DMP_LEAVING:  // its writeback is in flight: keep it instead of freeing it
      st_.hits++;  // the recovery is counted when the writeback is done
      pages_[s].flags |= F_WANTED;
      return;
    default:  // stored: the fault raced with the store, or touch() just stored a held page
      st_.hits++;
      wake(r, page, 1);
      return;
  }
}

// The first write to a write-protected page: it is dirty from now on. A page on its way out
// keeps the writer waiting until its writeback is done and it is recovered.
void UffdEngine::handle_write_protect_fault(Region* r, size_t page) {
  st_.write_faults++;
  char* addr = r->page_addr(page, page_size_);
  const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
  if (s == DMP_NIL) {  // freed meanwhile: the retry misses and reads it again
    uffd_wake(uffd_, addr, page_size_);
    return;
  }
  if (pages_[s].state == DMP_LEAVING) {
    pages_[s].flags |= F_WANTED | F_WP_WAIT;
    return;
  }
  pages_[s].flags |= F_DIRTY | F_WRITABLE;
  if (int rc = uffd_writeprotect(uffd_, addr, page_size_, false); rc < 0 && rc != -ENOENT)
    log(LogLevel::error, "clearing write protection of page %zu of '%s' failed: %s", page, r->file.path().c_str(),
        std::strerror(-rc));
}

// Misses that waited for a free slot or an I/O slot, then read-ahead with what is spare.
void UffdEngine::start_pending() {
  while (!pending_.empty() && policy_.free.len > 0 && reads_in_flight_ < cfg_.io_depth) {
    PendingMiss m = pending_.front();
    pending_.pop_front();
    auto it = by_id_.find(m.region_id);
    if (it == by_id_.end()) continue;  // unmapped meanwhile
    on_missing(it->second, m.page, m.write, m.tid, false);
  }
  // Read-ahead only while it leaves the reserve to faults.
  while (pending_.empty() && !prefetch_.empty() && policy_.free.len > par_.reserve / 2 &&
         reads_in_flight_ < cfg_.io_depth) {
    auto [id, page] = prefetch_.front();
    prefetch_.pop_front();
    auto it = by_id_.find(id);
    if (it == by_id_.end() || dmp_lookup(&policy_, key_of(it->second, page)) != DMP_NIL) continue;
    // Holes of fresh regions are zero-filled, not read; with the staging pool full, single
    // pages keep the I/O depth up (small buffers have little run staging).
    Region* r = it->second;
    if (r->fresh || !start_read_run(r, page)) start_fill(r, page, false, 0, true);
  }
  fail_waiting_misses();
}

// Nothing can free a slot (every page dirty and unwritable): fail the waiters rather than
// leave them hanging.
void UffdEngine::fail_waiting_misses() {
  const bool idle = writes_in_flight_ == 0 && write_backlog_.empty() && policy_.evict.len == 0;
  if (pending_.empty() || policy_.free.len > 0 || reads_in_flight_ > 0 || !(idle || writes_refused())) return;
  if (!refusal_logged_)  // once until a write succeeds or a slot is freed again
    log(LogLevel::error, "buffer full of pages that cannot be written back: failing waiting faults (SIGBUS)");
  refusal_logged_ = true;
  for (const PendingMiss& m : pending_) {
    auto it = by_id_.find(m.region_id);
    if (it == by_id_.end()) continue;
    st_.misses++;  // counted when a fill starts, which these never do
    poison_page(it->second, m.page, m.tid);
  }
  pending_.clear();
}

}  // namespace dimmap::detail
