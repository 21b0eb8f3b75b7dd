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

// One poll per round tells what to do: read fault messages, reap completions, stop. While
// faults keep coming (for up to spin_us after the last event) the poll does not sleep:
// waking a sleeping server costs more than a fault on a virtual machine. The lock is held
// for the policy's decisions only: reads, stores into the memfd and wake-ups run outside it.
void UffdEngine::serve(ServiceThread& me) {
  current_ = &me;
  IoQueue& io = *me.io;
  struct pollfd fds[3] = {{uffd_, POLLIN, 0}, {io.event_fd(), POLLIN, 0}, {ctl_fd_, POLLIN, 0}};
  std::vector<IoDone> done(kCompletionsPerRound);
  const auto spin = std::chrono::microseconds(cfg_.spin_us);
  auto last_event = std::chrono::steady_clock::now() - spin;
  prctl(PR_SET_TIMERSLACK, 1000);  // latency-model sleeps to the microsecond
  for (;;) {
    // Completions held by a latency model are waited out as PerMA did: sleep when the next
    // is far, yield when near, spin when imminent.
    const int64_t due = io.ns_until_next();
    const bool spinning = std::chrono::steady_clock::now() - last_event < spin || (due >= 0 && due <= 20000);
    struct timespec zero = {0, 0}, ts = {static_cast<time_t>(due / 1000000000), static_cast<long>(due % 1000000000)};
    const struct timespec* timeout = spinning ? &zero : due < 0 ? nullptr : &ts;
    if (!spinning && due >= 0 && due <= 200000) {
      sched_yield();
      timeout = &zero;
    }
    if (ppoll(fds, 3, timeout, nullptr) < 0) {
      if (errno != EINTR) log(LogLevel::error, "fault server: poll failed: %s", std::strerror(errno));
      continue;
    }
    if (stop_) return;  // the stop request stays readable for the other threads
    if (fds[2].revents & POLLIN) {
      uint64_t v;
      while (read(ctl_fd_, &v, sizeof v) > 0) {
      }
    }
    size_t events = fds[0].revents & POLLIN ? drain_faults() : 0;
    start_reads(me);
    // Completions are taken a few at a time, and new faults read and their reads started
    // between them: storing and waking a page costs microseconds, and a whole queue's worth
    // done at once left the device idle meanwhile (half the time, 64 threads on 2 cores).
    if ((fds[1].revents & POLLIN) || due >= 0)
      for (size_t n; (n = io.reap(done.data(), done.size())) > 0;) {
        events += n;
        for (size_t i = 0; i < n; ++i) complete(done[i].tag, done[i].result);
        events += drain_faults();
        start_reads(me);
      }
    if (events) last_event = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      evict();
      start_pending();
      pump_writes();
    }
    start_reads(me);
  }
}

// Reads fault messages until a read comes back short (nothing more queued now), each batch
// handled under the lock.
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
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof msgs[0]); ++i, ++total)
        if (msgs[i].event == UFFD_EVENT_PAGEFAULT) handle_fault(msgs[i]);
    }
    if (n < static_cast<ssize_t>(sizeof msgs)) return total;
  }
}

// A read chosen under the lock, started by this service thread once it lets the lock go.
void UffdEngine::queue_read(Region* r, char* buf, size_t len, uint64_t off, uint64_t tag) {
  current_->reads.emplace_back(IoOp{false, r->file.read_fd(), buf, len, off, tag}, &r->file);
}

// Starts the reads queued by this thread (its lock not held). A read that needs no device
// (a file in memory, or pages in the Linux page cache) is done at once: through io_uring it
// would be handed to a kernel worker thread, whose wake-up costs more than the copy. A
// latency model still holds its completion until the modelled device would have answered.
void UffdEngine::start_reads(ServiceThread& me) {
  while (!me.reads.empty()) {
    std::vector<std::pair<IoOp, const BackingFile*>> reads;
    reads.swap(me.reads);
    for (auto& [op, file] : reads) {
      const ssize_t now = file->read_at_once(op.buf, op.len, op.offset);
      if (now == -EAGAIN)
        me.io->push(op);
      else if (!me.io->hold_done(op, now))
        complete(op.tag, now);
    }
  }
  if (int rc = me.io->submit(); rc < 0) log(LogLevel::error, "I/O submission failed: %s", std::strerror(-rc));
}

// A finished read or write (the lock not held).
void UffdEngine::complete(uint64_t tag, ssize_t result) {
  if (tag & kWriteTag) {
    std::lock_guard<std::mutex> lock(mu_);
    finish_write(tag & ~kWriteTag, result);
  } else if (tag & kRunTag) {
    finish_read_run(tag & ~kRunTag, result);
  } else {
    finish_read(static_cast<uint32_t>(tag), result);
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
// keeps the writer waiting until its writeback is done and it is recovered. So does a page
// still being stored (visible in the memfd, not yet loaded for the policy): msync passes
// over loading pages, so a write let through now could be missed by an msync that returns
// before the load ends; the load lets it through as a write fill.
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
  if (pages_[s].state == DMP_LOADING) {
    pages_[s].flags |= F_LOAD_WRITE;
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
