// uffd_fills.cpp - filling the buffer: misses, read-ahead runs, holes, failed reads, and the
// sequential read-ahead streams.
//
// A filled page goes into the memfd with pwrite and the faulting threads are woken; their
// retry maps it through the kernel's shmem fault path (a clean PTE: unmapping it later needs
// no TLB flush of its own). The engine never maps a page itself.
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "log.hpp"
#include "uffd_engine.hpp"

namespace dimmap::detail {

void UffdEngine::start_fill(Region* r, size_t page, bool write, uint32_t tid, bool prefetch) {
  const uint32_t s = reads_in_flight_ < cfg_.io_depth ? dmp_alloc(&policy_, key_of(r, page)) : DMP_NIL;
  if (s == DMP_NIL) {  // no free slot or too many reads in flight: wait for evictions
    if (prefetch)
      prefetch_.emplace_front(r->id, page);
    else
      pending_.push_back(PendingMiss{r->id, page, write, tid});
    return;
  }
  if (prefetch)
    st_.prefetched++;
  else
    st_.misses++;
  if (r->fresh && !r->written[page]) {
    fill_zero(r, s, page, write);
    return;
  }
  queue_read(r, begin_read(r, s, write, tid), page_size_, r->file_offset + page * page_size_, s);
}

// The bookkeeping of a page read about to start (reads in flight < io_depth, so a staging
// page is free): returns the staging page the read goes to. finish_read undoes it.
char* UffdEngine::begin_read(Region* r, uint32_t s, bool write, uint32_t tid) {
  if (write) pages_[s].flags |= F_LOAD_WRITE;
  load_tid_[s] = tid;
  const uint32_t k = staging_free_.back();
  staging_free_.pop_back();
  load_staging_[s] = k;
  reads_in_flight_++;
  r->loads++;
  return staging_ + size_t(k) * page_size_;
}

// Checks a finished read of `len` bytes at `first_page` and zeros what lies past the file's
// end. Returns the bytes read from the file, or -errno (EIO for a read that stopped short of
// the file's end).
ssize_t UffdEngine::check_read(Region* r, size_t first_page, char* data, size_t len, ssize_t result) {
  if (result < 0) return result;
  const uint64_t off = r->file_offset + first_page * page_size_;
  const uint64_t want = std::min<uint64_t>(len, r->file.size() > off ? r->file.size() - off : 0);
  if (static_cast<uint64_t>(result) < want) return -EIO;
  if (static_cast<uint64_t>(result) < len) std::memset(data + result, 0, len - result);
  return result;
}

// Puts filled pages into the memfd (allocating them without mapping them anywhere). Pages
// of write-protected mappings have a uffd-wp marker in their empty page-table entries (put
// there at map time, or here first): a thread that maps one before it is woken still meets
// the first-write fault. Returns 0 or -errno.
int UffdEngine::store(Region* r, size_t first_page, const char* data, size_t npages, bool write) {
  const size_t len = npages * page_size_;
  if (r->write_protects() && !r->premarked && !write)
    uffd_writeprotect(uffd_, r->page_addr(first_page, page_size_), len, true);
  const ssize_t n = pwrite(r->memfd, data, len, static_cast<off_t>(first_page * page_size_));
  if (n != static_cast<ssize_t>(len)) return n < 0 ? -errno : -ENOMEM;
  return 0;
}

// Stored pages are ready: wake the threads waiting on them. A write fault's page is mapped
// writable (it is dirty now); without write-protect support every stored page of a writable
// mapping counts as dirty.
void UffdEngine::publish(Region* r, size_t first_page, size_t npages, bool write) {
  wake_stored(r->page_addr(first_page, page_size_), npages * page_size_, mark_stored(r, first_page, npages, write));
}

// The policy's side of publish (lock held). Returns whether the wake-up must also drop the
// write protection.
bool UffdEngine::mark_stored(Region* r, size_t first_page, size_t npages, bool write) {
  if (r->writable && (write || !r->track_dirty))
    for (size_t p = first_page; p < first_page + npages; ++p) {
      const uint32_t s = dmp_lookup(&policy_, key_of(r, p));
      if (s != DMP_NIL) pages_[s].flags |= F_DIRTY | F_WRITABLE;
    }
  return write && r->write_protects();
}

// The system-call side of publish (lock not needed).
void UffdEngine::wake_stored(char* addr, size_t len, bool unprotect) {
  if (unprotect)
    uffd_writeprotect(uffd_, addr, len, false);  // wakes too
  else
    uffd_wake(uffd_, addr, len);
}

// A read finished (lock not held). The page is stored into the memfd outside the lock: it
// stays LOADING meanwhile, so nothing else touches it, and its region stays mapped while
// r->loads counts it.
void UffdEngine::finish_read(uint32_t s, ssize_t result) {
  std::unique_lock<std::mutex> lock(mu_);
  Region* r = region_of_slot(s);
  const size_t page = page_of_slot(s);
  const uint32_t k = load_staging_[s];
  char* data = staging_ + size_t(k) * page_size_;
  bool write = pages_[s].flags & F_LOAD_WRITE;
  result = check_read(r, page, data, page_size_, result);
  const bool held = result >= 0 && !write && hold(r, s, data);
  if (result >= 0 && !held) {
    lock.unlock();
    const int rc = store(r, page, data, 1, write);
    lock.lock();
    if (rc < 0) result = rc;
  }
  staging_free_.push_back(k);
  reads_in_flight_--;
  write = pages_[s].flags & F_LOAD_WRITE;  // a write fault may have come meanwhile
  pages_[s].flags &= ~F_LOAD_WRITE;
  if (result < 0) {
    dmp_abort(&policy_, s);
    fail_page(r, page, load_tid_[s], static_cast<int>(-result));
  } else {
    st_.bytes_read += static_cast<uint64_t>(result);
    demote(dmp_loaded(&policy_, s));
    if (!held) {
      // Dropping the write protection happens under the lock: done later, it could undo
      // the protection of an eviction writeback begun meanwhile, and a write would be lost.
      const bool unprotect = mark_stored(r, page, 1, write);
      if (!unprotect) lock.unlock();
      wake_stored(r->page_addr(page, page_size_), page_size_, unprotect);
      if (!unprotect) lock.lock();
    }
  }
  r->loads--;
  io_done_.notify_all();
}

// Read-ahead of `page` and the queued pages that follow it in the file, in one read.
// Returns false, doing nothing, when no staging page is free.
bool UffdEngine::start_read_run(Region* r, size_t page) {
  const StagingPool::Block block = run_staging_.find(kMaxReadRun);
  if (block.pages == 0 || runs_free_.empty()) return false;
  const uint32_t idx = runs_free_.back();
  ReadRun& run = runs_[idx];
  run.region = r;
  run.first_page = page;
  run.slots.clear();
  for (;;) {
    const uint32_t s = dmp_alloc(&policy_, key_of(r, page));
    if (s == DMP_NIL) {
      prefetch_.emplace_front(r->id, page);
      break;
    }
    load_tid_[s] = 0;
    run.slots.push_back(s);
    st_.prefetched++;
    // The next queued page joins the run if it is the next page of the file and not resident.
    if (run.slots.size() == block.pages || prefetch_.empty() || policy_.free.len <= par_.reserve / 2) break;
    const auto [id, next] = prefetch_.front();
    if (id != r->id || next != page + 1 || dmp_lookup(&policy_, key_of(r, next)) != DMP_NIL) break;
    prefetch_.pop_front();
    page = next;
  }
  if (run.slots.empty()) return true;
  runs_free_.pop_back();
  run.staging = block.first;
  run_staging_.take(block.first, run.slots.size());
  reads_in_flight_++;
  r->loads++;
  queue_read(r, run_staging_.at(block.first), run.slots.size() * page_size_,
             r->file_offset + run.first_page * page_size_, kRunTag | idx);
  return true;
}

// Stores a finished run with one pwrite per stretch of pages (a stream's held page splits
// it), outside the lock as finish_read does, then wakes whoever waits; a write fault waiting
// for one of its pages gets it writable.
void UffdEngine::finish_read_run(size_t idx, ssize_t result) {
  std::unique_lock<std::mutex> lock(mu_);
  ReadRun& run = runs_[idx];
  Region* r = run.region;
  const size_t first = run.first_page, n = run.slots.size(), staging = run.staging;
  const std::vector<uint32_t> slots = run.slots;
  char* data = run_staging_.at(staging);
  result = check_read(r, first, data, n * page_size_, result);
  std::vector<bool> held(n, false);
  for (size_t i = 0; result >= 0 && i < n; ++i) held[i] = hold(r, slots[i], data + i * page_size_);
  if (result >= 0) {
    lock.unlock();
    for (size_t i = 0, j; result >= 0 && i < n; i = j + 1) {
      for (j = i; j < n && !held[j]; ++j) {
      }
      if (j > i)
        if (int rc = store(r, first + i, data + i * page_size_, j - i, false); rc < 0) result = rc;
    }
    lock.lock();
  }
  // A held page touched meanwhile was stored by unhold(): it is woken like the others.
  for (size_t i = 0; i < n; ++i) held[i] = held[i] && holds(r, slots[i]);
  run_staging_.give(staging, n);
  runs_free_.push_back(static_cast<uint32_t>(idx));
  reads_in_flight_--;
  if (result < 0) {
    // Nobody asked for these pages: drop them and wake any thread waiting on one, whose
    // fault then reads the page itself and reports the error to it.
    log(LogLevel::warn, "read-ahead of %zu pages at offset %llu of '%s' failed: %s", n,
        static_cast<unsigned long long>(r->file_offset + first * page_size_), r->file.path().c_str(),
        std::strerror(static_cast<int>(-result)));
    for (uint32_t s : slots) {
      forget_held(s);
      dmp_abort(&policy_, s);
    }
    madvise(r->alias + first * page_size_, n * page_size_, MADV_REMOVE);  // pages stored, if any
    wake(r, first, n);
    r->loads--;
    io_done_.notify_all();
    return;
  }
  st_.bytes_read += static_cast<uint64_t>(result);
  std::vector<bool> write(n);
  for (size_t i = 0; i < n; ++i) {
    uint8_t& f = pages_[slots[i]].flags;
    write[i] = f & F_LOAD_WRITE;
    f &= ~F_LOAD_WRITE;
    demote(dmp_loaded(&policy_, slots[i]));
  }
  std::vector<std::pair<char*, size_t>> wakes;  // plain wake-ups, done after the lock
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i; j < n && !held[j] && write[j] == write[i]; ++j) {
    }
    if (j == i) {  // a held page
      ++j;
      continue;
    }
    const bool unprotect = mark_stored(r, first + i, j - i, write[i]);
    if (unprotect)  // under the lock, as in finish_read
      wake_stored(r->page_addr(first + i, page_size_), (j - i) * page_size_, true);
    else
      wakes.emplace_back(r->page_addr(first + i, page_size_), (j - i) * page_size_);
  }
  lock.unlock();
  for (const auto& [addr, len] : wakes) uffd_wake(uffd_, addr, len);
  lock.lock();
  r->loads--;
  io_done_.notify_all();
}

// A page of a hole: a zeroed page in the memfd instead of a read.
void UffdEngine::fill_zero(Region* r, uint32_t s, size_t page, bool write) {
  static const char zeros[65536] = {};
  const bool held = !write && page_size_ <= sizeof zeros && hold(r, s, zeros);
  const int rc = held ? 0 : page_size_ <= sizeof zeros ? store(r, page, zeros, 1, write) : -EINVAL;
  if (rc < 0) {
    dmp_abort(&policy_, s);
    fail_page(r, page, 0, -rc);
    return;
  }
  st_.zero_fills++;
  demote(dmp_loaded(&policy_, s));
  if (!held) publish(r, page, 1, write);
}

// A page could not be filled: the waiting threads (and later accesses) get SIGBUS.
void UffdEngine::fail_page(Region* r, size_t page, uint32_t tid, int err) {
  st_.read_errors++;
  log(LogLevel::error, "reading page %zu (offset %llu) of '%s' failed: %s; the faulting thread gets SIGBUS", page,
      static_cast<unsigned long long>(r->file_offset + page * page_size_), r->file.path().c_str(),
      std::strerror(err));
  poison_page(r, page, tid);
}

// The faulting thread (and later accesses to the page until it is filled) get SIGBUS.
void UffdEngine::poison_page(Region* r, size_t page, uint32_t tid) {
  char* addr = r->page_addr(page, page_size_);
  madvise(r->alias + page * page_size_, page_size_, MADV_REMOVE);  // drop a half-filled page
  // UFFDIO_POISON needs an empty entry: a write-protect marker goes first.
  if (r->write_protects()) uffd_writeprotect(uffd_, addr, page_size_, false, false);
  const int poisoned = features_.poison ? uffd_poison(uffd_, addr, page_size_) : -ENOTSUP;
  if (poisoned == 0) return;
  // EEXIST: an earlier failure of the page poisoned it (this was a fault queued before that
  // one woke its waiters). The faulting thread retries and gets SIGBUS from the poison; a
  // signal sent now could reach it after it has gone on, and kill the process.
  // No UFFDIO_POISON (kernel < 6.6): signal the faulting thread, then let it retry.
  if (tid && poisoned != -EEXIST) syscall(SYS_tgkill, getpid(), tid, SIGBUS);
  uffd_wake(uffd_, addr, page_size_);
}

// Sequential read-ahead. DI-MMAP reads only the page that faulted, which suits random access;
// a pass over a file (a scan, a read-modify-write sweep) then waits for one read per page
// (39 MiB/s against 620 with read-ahead, one thread sweeping a file 16x its buffer). A miss on
// the page after an earlier miss, or on the first page after a stream's last window, makes or
// continues a stream: the pages after it are queued for read-ahead (runs of one read each),
// the window doubling from kMinReadAhead up to ra_max_. The page halfway through a window is
// read but held out of the memfd (Stream::held): the first touch of it is a miss that stores
// it and queues the next window while the application reads the second half, as Linux's
// PG_readahead mark does (pages in the memfd are mapped by the kernel without the engine
// seeing the touch). A mapping follows
// up to kStreamsPerRegion streams at once (a pass that reads one part of a file and writes
// another, threads sweeping their own parts); a miss no stream expects replaces the least
// recently used one.
void UffdEngine::note_miss(Region* r, size_t page) {
  if (ra_max_ == 0) return;
  for (Stream& st : r->streams) {
    if (page != st.next && !st.covers(page)) continue;
    st.used = ++ra_clock_;
    if (page == st.next) read_ahead(r, st, page + 1);
    return;
  }
  // Maybe the start of a stream: it takes the place of the least recently used one.
  Stream& st = *std::min_element(std::begin(r->streams), std::end(r->streams),
                                 [](const Stream& a, const Stream& b) { return a.used < b.used; });
  unhold(r, st);
  st.end = st.window = 0;
  st.marker = kNoPage;
  st.next = page + 1;
  st.used = ++ra_clock_;
}

void UffdEngine::read_ahead(Region* r, Stream& st, size_t first) {
  const size_t window = std::clamp(2 * st.window, kMinReadAhead, ra_max_);
  const size_t end = std::min(r->npages, first + window);
  unhold(r, st);
  st.window = window;
  st.end = end;
  st.next = end;
  st.marker = kNoPage;
  // Queued in page order at the front: a stream's window goes before older dimmap_prefetch work.
  const size_t half = first + window / 2;
  for (size_t page = end; page-- > first;) {
    if (dmp_lookup(&policy_, key_of(r, page)) != DMP_NIL) continue;
    prefetch_.emplace_front(r->id, page);
    if (page >= half) st.marker = page;  // the first page queued in the second half
  }
}

// Any miss on `page`: if it is a stream's held page, the application has come halfway
// through the window: store the page and queue the next window.
void UffdEngine::touch(Region* r, size_t page) {
  for (Stream& st : r->streams) {
    if (page != st.marker) continue;
    st.marker = kNoPage;
    st.used = ++ra_clock_;
    unhold(r, st);
    if (st.window) read_ahead(r, st, st.end);
  }
}

// A page read ahead is held out of the memfd if it is a stream's marker (see note_miss): its
// data waits in the stream. Returns true if held.
bool UffdEngine::hold(Region* r, uint32_t s, const char* data) {
  const size_t page = page_of_slot(s);
  for (Stream& st : r->streams) {
    if (page != st.marker) continue;
    unhold(r, st);
    if (!st.held) st.held = std::make_unique<char[]>(page_size_);
    std::memcpy(st.held.get(), data, page_size_);
    st.held_page = page;
    st.held_slot = s;
    return true;
  }
  return false;
}

// Stores a stream's held page, if it is still in the buffer (a page is in the memfd
// whenever the policy has it resident, but for held pages).
void UffdEngine::unhold(Region* r, Stream& st) {
  if (st.held_page == kNoPage) return;
  const size_t page = st.held_page;
  const uint32_t s = st.held_slot;
  st.held_page = kNoPage;
  st.held_slot = DMP_NIL;
  if (dmp_lookup(&policy_, key_of(r, page)) != s) return;
  const uint8_t state = pages_[s].state;
  if (state == DMP_LOADING) {
    // Its run is being stored by another thread, which wakes the page's waiters once it
    // sees the page is not held any more.
    store(r, page, st.held.get(), 1, false);
    return;
  }
  if (state != DMP_PRIMARY && state != DMP_HOT && state != DMP_EVICT) return;
  if (int rc = store(r, page, st.held.get(), 1, false); rc < 0) {
    log(LogLevel::warn, "storing read-ahead page %zu of '%s' failed: %s", page, r->file.path().c_str(),
        std::strerror(-rc));
    pages_[s].flags &= ~F_ZAP;
    dmp_remove(&policy_, s);
    return;
  }
  publish(r, page, 1, false);
}

bool UffdEngine::holds(Region* r, uint32_t s) const {
  for (const Stream& st : r->streams)
    if (st.held_slot == s) return true;
  return false;
}

// A slot leaves the buffer: a stream's held copy of its page is stale from now on.
void UffdEngine::forget_held(uint32_t s) {
  Region* r = region_of_slot(s);
  for (Stream& st : r->streams)
    if (st.held_slot == s) {
      st.held_page = kNoPage;
      st.held_slot = DMP_NIL;
    }
}

}  // namespace dimmap::detail
