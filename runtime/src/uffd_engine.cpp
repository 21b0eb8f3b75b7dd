// uffd_engine.cpp - the user-space DI-MMAP engine on userfaultfd.
//
// Each mapping is backed by a memfd (shmem) mapped twice: the application's view, registered
// with userfaultfd for missing, minor and write-protect faults, and an alias mapping the engine
// never touches but frees pages through (batched MADV_REMOVE). A fault server thread per
// buffer handles faults through the DI-MMAP policy:
//   miss      read the page from storage into a staging page (io_uring), copy it into the
//             memfd (pwrite), then UFFDIO_CONTINUE maps it
//             (write-protected unless the fault was a write, so first writes are seen: dirty
//             tracking);
//   demotion  a page pushed into the eviction queue loses its PTE, in bulk: one
//             process_madvise(MADV_DONTNEED) per up to four eviction batches, the analogue
//             of the bulk TLB flush;
//             the page stays in the memfd, so a fault on it is a minor fault recovered with no I/O;
//   leaving   pages leave the eviction queue in batches: dirty ones are written back (adjacent
//             pages coalesced into one write), then freed with MADV_REMOVE;
//   error     a failed fill poisons the page (UFFDIO_POISON): the faulting threads get SIGBUS.
// Read-ahead: pages asked for with dimmap_prefetch, and windows after faults on consecutive
// pages (see note_miss), are read in runs of adjacent pages, one read and one copy per run.
// Application threads touching resident pages never enter the engine: hits cost no syscall.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backing_file.hpp"
#include "engine.hpp"
#include "io_queue.hpp"
#include "log.hpp"
#include "perma.hpp"
#include "staging_pool.hpp"
#include "uffd_sys.hpp"

extern "C" {
#include "dimmap_policy.h"
}

namespace dimmap::detail {
namespace {

// Engine bits in dmp_page.flags (DMP_F_BUSY belongs to the policy: never chosen to leave).
constexpr uint8_t F_DIRTY = 0x02;      // content newer than storage
constexpr uint8_t F_WRITABLE = 0x04;   // mapped without write protection
constexpr uint8_t F_ZAP = 0x08;        // demoted; its PTE removal waits in the zap batch
constexpr uint8_t F_WANTED = 0x10;     // faulted while leaving: recover instead of freeing
constexpr uint8_t F_LOAD_WRITE = 0x20; // a write fault is waiting for this load
constexpr size_t kNoPage = ~size_t{0};

constexpr unsigned kRegionShift = 36;  // key = region id << 36 | page index (256 TiB per mapping)
constexpr size_t kMaxWriteRun = 64;    // pages per coalesced writeback (FastMap writes up to 512)
constexpr size_t kMaxZapGap = 32;      // pages a bulk-unmap range may span between demoted pages
constexpr uint64_t kWriteTag = 1ull << 63;
constexpr uint64_t kRunTag = 1ull << 62;  // a read-ahead run (index into runs_)
// Read-ahead reads adjacent pages in runs: one read, one copy into the memfd and one
// UFFDIO_CONTINUE per run instead of per page (a sweep of a file was bound by those calls:
// kmer classify on dimmap went from 19K to 55K reads/s, Linux mmap 63K).
constexpr size_t kMaxReadRun = 64;  // pages per read-ahead read (256 KiB with 4 KiB pages)
// Their staging memory stays under 1/16 of the buffer (it counts against the same budget),
// within [16 pages, 4 MiB].
constexpr size_t kRunStagingShare = 16;
constexpr size_t kMinRunStaging = 16;
constexpr size_t kMaxRunStagingBytes = 4u << 20;
constexpr size_t kMinReadAhead = 4;  // pages in a stream's first read-ahead window
constexpr size_t kStreamsPerRegion = 4;  // sequential streams followed at once in one mapping
constexpr auto kWriteRetryInterval = std::chrono::milliseconds(100);  // while storage refuses writes

// A run of faults on consecutive pages of a mapping, read ahead (see UffdEngine::note_miss).
struct Stream {
  size_t next = kNoPage;    // a miss on this page continues the stream
  size_t end = 0;           // first page after the last window queued
  size_t window = 0;        // pages in that window (0: none queued yet)
  size_t marker = kNoPage;  // page read ahead but left unmapped: its first touch queues the next window
  uint64_t used = 0;        // last miss or touch (the least recently used stream is replaced)
  // In the last two windows: queued and maybe not read yet (free slots go to faults first),
  // and a later window is queued before the rest of an earlier one.
  bool covers(size_t page) const { return window && page < end && page + 2 * window >= end; }
};

struct Region {
  uint32_t id = 0;
  char* addr = nullptr;   // the application's view
  char* alias = nullptr;  // the same memfd, never accessed: the handle for batched MADV_REMOVE
  size_t length = 0;
  size_t npages = 0;
  int memfd = -1;
  uint64_t file_offset = 0;
  bool writable = false;  // shared + PROT_WRITE: dirty tracking and writeback
  bool track_dirty = false;  // write-protect available; otherwise every mapped page counts as dirty
  // The mapped range of the file was one hole when mapped (e.g. a fresh scratch file): pages
  // never written back since are zeros and are filled without reading storage.
  bool fresh = false;
  std::vector<bool> written;  // fresh only: page written back at least once
  BackingFile file;
  unsigned loads = 0;     // reads in flight
  unsigned writes = 0;    // writebacks queued or in flight (eviction or sync)
  std::set<uint64_t> live_jobs;  // ids of those writebacks, oldest first
  Stream streams[kStreamsPerRegion];
  // Pages are mapped write-protected until first written, so only written pages go back.
  bool write_protects() const { return writable && track_dirty; }
  int write_error = 0;    // first failed writeback since the last msync/munmap (errno)
  bool closing = false;
};

// An msync or munmap waiting for its writebacks.
struct SyncRequest {
  unsigned pending = 0;  // jobs not yet completed
  int error = 0;         // first failure (errno)
};

// A coalesced writeback of adjacent pages of one region.
struct WriteJob {
  SyncRequest* sync = nullptr;  // null for eviction writebacks
  Region* region = nullptr;
  size_t first_page = 0;
  std::vector<uint32_t> slots;  // in page order
  bool eviction = false;
  size_t len = 0;
  char* staging = nullptr;  // the pages copied out of the memfd while the write is in flight
};

// A read-ahead read of adjacent pages of one region into one block of staging pages.
struct ReadRun {
  Region* region = nullptr;
  size_t first_page = 0;
  std::vector<uint32_t> slots;  // in page order
  size_t staging = 0;           // first page of its block in the staging pool
};

struct PendingMiss {
  uint32_t region_id;
  size_t page;
  bool write;
  uint32_t tid;
};

class UffdEngine final : public Engine {
 public:
  UffdEngine(const dimmap_config& cfg) : cfg_(cfg), zaps_(MADV_DONTNEED), frees_(MADV_REMOVE) {}
  ~UffdEngine() override;
  int start();

  int map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) override;
  int unmap(void* addr, size_t length) override;
  int sync(void* addr, size_t length, int flags) override;
  int discard(void* addr, size_t length) override;
  int prefetch(const struct iovec* ranges, size_t n) override;
  void stats(struct dimmap_stats* out) const override;
  size_t mapped_regions() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return by_addr_.size();
  }

 private:
  // ---- fault server (runs with mu_ held) ----
  void serve();
  size_t drain_faults();
  void handle_fault(const struct uffd_msg& msg);
  void handle_write_protect_fault(Region* r, size_t page, char* addr);
  void start_fill(Region* r, size_t page, bool write, uint32_t tid, bool prefetch = false);
  void finish_read(uint32_t slot, ssize_t result);
  ssize_t store_read(Region* r, size_t first_page, char* data, size_t len, ssize_t result);
  bool start_read_run(Region* r, size_t page);
  void finish_read_run(size_t run, ssize_t result);
  void map_run(Region* r, const std::vector<uint32_t>& slots);
  void fill_zero(Region* r, uint32_t slot, size_t page, bool write);
  void finish_write(uint64_t job_id, ssize_t result);
  void map_page(Region* r, uint32_t slot, bool write_fault);
  void fail_page(Region* r, size_t page, uint32_t tid, int err);
  void poison_page(Region* r, size_t page, uint32_t tid);
  void demote(uint32_t slot);
  void flush_zaps();
  bool unmapped(const Region* r, size_t first, size_t end) const;
  void evict();
  void start_pending();
  void release_slot(uint32_t slot);
  void note_miss(Region* r, size_t page);
  void read_ahead(Region* r, Stream& st, size_t first);
  void touch(Region* r, size_t page);
  bool held_back(const Region* r, uint32_t slot) const;
  void flush_frees();

  // ---- helpers ----
  Region* region_by_addr(uintptr_t a) const;
  Region* region_of_slot(uint32_t slot) const;
  size_t page_of_slot(uint32_t slot) const { return pages_[slot].key & ((1ull << kRegionShift) - 1); }
  uint64_t key_of(const Region* r, size_t page) const { return (uint64_t(r->id) << kRegionShift) | page; }
  char* app_addr(uint32_t slot) const { return region_of_slot(slot)->addr + page_of_slot(slot) * page_size_; }
  size_t io_len(const Region* r, size_t first_page, size_t npages) const;
  void submit_writes(std::vector<uint32_t>& dirty, bool eviction, SyncRequest* sync);
  void pump_writes();
  std::vector<uint32_t> slots_in(const Region* r, size_t first, size_t end) const;
  int write_back(Region* r, size_t first, size_t end, std::unique_lock<std::mutex>& lock);
  void wake_server();

  const dimmap_config cfg_;
  const size_t page_size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  int uffd_ = -1;
  int ctl_fd_ = -1;  // eventfd: stop request
  UffdFeatures features_;
  std::unique_ptr<IoQueue> io_;
  std::thread server_;
  bool stop_ = false;

  mutable std::mutex mu_;
  std::condition_variable io_done_;  // signalled when writebacks or loads finish
  dmp_params par_{};
  dmp_policy policy_{};
  std::vector<dmp_page> pages_;
  std::vector<dmp_bucket> buckets_;
  std::vector<uint32_t> load_tid_;  // faulting thread of each loading slot (SIGBUS fallback)
  std::vector<uint64_t> slot_job_;  // the writeback a busy slot belongs to
  // Reads land in staging pages and are copied into the memfd with one pwrite: the engine
  // never maps a page it fills, so freeing the page later needs no TLB shootdown.
  char* staging_ = nullptr;
  std::vector<uint32_t> staging_free_;
  std::vector<uint32_t> load_staging_;  // staging page of each loading slot
  std::vector<ReadRun> runs_;  // read-ahead runs, one per I/O slot
  std::vector<uint32_t> runs_free_;
  StagingPool run_staging_;

  std::map<uintptr_t, Region*> by_addr_;
  std::unordered_map<uint32_t, Region*> by_id_;
  uint32_t next_region_id_ = 1;

  std::deque<PendingMiss> pending_;
  // dimmap_prefetch requests: read ahead after the faults, while slots and I/O are spare.
  std::deque<std::pair<uint32_t, size_t>> prefetch_;  // (region id, page)
  size_t ra_max_ = 0;  // largest sequential read-ahead window, pages (0 = off)
  uint64_t ra_clock_ = 0;  // orders Stream::used
  unsigned reads_in_flight_ = 0;
  unsigned writes_in_flight_ = 0;
  std::unordered_map<uint64_t, WriteJob> jobs_;
  std::deque<uint64_t> write_backlog_;  // jobs waiting for an I/O slot
  size_t write_staging_bytes_ = 0;      // staging copies of writes in flight
  // Pages whose eviction writeback failed since a slot was last freed or a write last
  // succeeded. Once it reaches the buffer size the storage refuses every write: eviction
  // retries at most every kWriteRetryInterval and faults waiting for a slot fail (SIGBUS)
  // instead of the server spinning on writes that keep failing.
  uint64_t failed_evictions_ = 0;
  std::chrono::steady_clock::time_point write_retry_at_{};
  bool refusal_logged_ = false;
  bool writes_refused() const { return failed_evictions_ >= par_.npages; }
  void note_write_progress() {
    failed_evictions_ = 0;
    refusal_logged_ = false;
  }
  uint64_t next_job_ = 1;

  std::vector<std::pair<uint32_t, uint64_t>> zap_list_;  // (slot, key) demoted, PTE still present
  // Demoted pages are unmapped in batches of up to four eviction batches, at most half the
  // eviction queue: every range unmapped costs a TLB shootdown here (see flush_zaps), and
  // larger batches have fewer, longer ranges (BFS on storage: 10-15% faster than one
  // eviction batch). A page touched before its unmap stays in the queue without a fault.
  size_t zap_batch_ = 1;
  MadviseBatch zaps_;
  MadviseBatch frees_;
  std::vector<uint32_t> batch_;

  struct dimmap_stats st_ {};
};

// ---------------------------------------------------------------------------------------
// setup and teardown

int UffdEngine::start() {
  const uint64_t npages = cfg_.buffer_bytes / page_size_;
  const unsigned hot = static_cast<unsigned>(cfg_.hot_fraction * 1000.0 + 0.5);
  const unsigned evict = std::max(1u, static_cast<unsigned>(cfg_.evict_fraction * 1000.0 + 0.5));
  if (dmp_params_init(&par_, static_cast<uint32_t>(npages), std::min(hot, 999u), std::min(evict, 499u),
                      cfg_.evict_batch) != 0)
    return fail(EINVAL, "buffer of %llu pages is too small (minimum %u)", static_cast<unsigned long long>(npages),
                DMP_MIN_PAGES);
  pages_.resize(par_.npages);
  buckets_.resize(par_.nbuckets);
  load_tid_.assign(par_.npages, 0);
  slot_job_.assign(par_.npages, 0);
  dmp_init(&policy_, &par_, pages_.data(), buckets_.data());
  batch_.resize(par_.batch);
  // (A batch of one page stays single-page eviction: dimmap-opt's baseline.)
  zap_batch_ = par_.batch == 1 ? 1 : std::clamp<size_t>(par_.evict_pages / 2, par_.batch, 4 * size_t(par_.batch));
  void* st = mmap(nullptr, size_t(cfg_.io_depth) * page_size_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (st == MAP_FAILED) return fail(errno, "cannot allocate %u staging pages: %s", cfg_.io_depth, std::strerror(errno));
  staging_ = static_cast<char*>(st);
  for (uint32_t k = cfg_.io_depth; k-- > 0;) staging_free_.push_back(k);
  load_staging_.assign(par_.npages, 0);
  // Populated now, like the buffer's other staging: the engine's memory is fixed from the
  // start, so a budget measured on a short run holds for a long one.
  const size_t run_staging = std::clamp<size_t>(par_.npages / kRunStagingShare, kMinRunStaging,
                                                kMaxRunStagingBytes / page_size_);
  if (int rc = run_staging_.init(run_staging, page_size_); rc < 0)
    return fail(-rc, "cannot allocate read-ahead staging: %s", std::strerror(-rc));
  runs_.resize(cfg_.io_depth);  // a run holds one of the io_depth reads in flight
  for (size_t i = runs_.size(); i-- > 0;) runs_free_.push_back(static_cast<uint32_t>(i));
  st_.buffer_pages = par_.npages;
  // At most 1/64 of the buffer: read ahead where faults only look sequential (a BFS level's
  // sparse sweep) must not push out what is in use (1/8 cost a 4M-buffer search ~7%).
  ra_max_ = std::min<size_t>(cfg_.readahead_pages, par_.npages / 64);
  if (ra_max_ < kMinReadAhead) ra_max_ = 0;

  uffd_ = uffd_open(&features_);
  if (uffd_ < 0) return uffd_;
  int err = 0;
  io_ = make_io_queue(cfg_.io_depth, &err);
  if (!io_) return err;
  if (cfg_.perma[0]) {
    perma_model model;
    if (int rc = parse_perma(cfg_.perma, &model); rc < 0) return rc;
    io_ = with_perma_latency(std::move(io_), model);
    log(LogLevel::info, "PerMA latency model '%s': %.1f us per page alone", cfg_.perma,
        perma_latency_ns(&model, 1, page_size_) / 1000.0);
  }
  ctl_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ctl_fd_ < 0) return fail(errno, "cannot create an eventfd: %s", std::strerror(errno));
  server_ = std::thread([this] { serve(); });
  log(LogLevel::info, "uffd engine: %u pages (%u hot, %u eviction queue, batch %u), I/O by %s",
      par_.npages, par_.hot_cap, par_.evict_pages, par_.batch, io_->name());
  return 0;
}

UffdEngine::~UffdEngine() {
  if (server_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_server();
    server_.join();
  }
  io_.reset();  // waits for nothing: no regions remain, so nothing is in flight
  if (ctl_fd_ >= 0) close(ctl_fd_);
  if (uffd_ >= 0) close(uffd_);
  if (staging_) munmap(staging_, size_t(cfg_.io_depth) * page_size_);
}

void UffdEngine::wake_server() {
  uint64_t one = 1;
  ssize_t rc = write(ctl_fd_, &one, sizeof one);
  (void)rc;
}

// ---------------------------------------------------------------------------------------
// the fault server

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
  if (flags & UFFD_PAGEFAULT_FLAG_WP) {
    handle_write_protect_fault(r, page, reinterpret_cast<char*>(a));
    return;
  }
  const bool write = flags & UFFD_PAGEFAULT_FLAG_WRITE;
  touch(r, page);
  const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
  if (s == DMP_NIL) {
    start_fill(r, page, write, tid);
    note_miss(r, page);
    return;
  }
  switch (pages_[s].state) {
    case DMP_LOADING:  // another thread's read is in flight: its completion wakes us all
      st_.hits++;
      if (write) pages_[s].flags |= F_LOAD_WRITE;
      return;
    case DMP_LEAVING:  // its writeback is in flight: keep it instead of freeing it
      st_.recoveries++;
      pages_[s].flags |= F_WANTED;
      return;
    case DMP_EVICT:  // a victim page: recover it with no I/O
      st_.recoveries++;
      pages_[s].flags &= ~F_ZAP;
      demote(dmp_recover(&policy_, s));
      map_page(r, s, write);
      return;
    default:  // mapped already (a thread raced with the mapping): make sure and wake
      st_.hits++;
      map_page(r, s, write);
      return;
  }
}

void UffdEngine::handle_write_protect_fault(Region* r, size_t page, char* addr) {
  st_.write_faults++;
  const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
  if (s != DMP_NIL) pages_[s].flags |= F_DIRTY | F_WRITABLE;
  if (int rc = uffd_writeprotect(uffd_, addr, page_size_, false); rc < 0 && rc != -ENOENT)
    log(LogLevel::error, "clearing write protection of page %zu of '%s' failed: %s", page, r->file.path().c_str(),
        std::strerror(-rc));
}

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
  if (write) pages_[s].flags |= F_LOAD_WRITE;
  load_tid_[s] = tid;
  const uint32_t k = staging_free_.back();  // reads in flight < io_depth: one is free
  staging_free_.pop_back();
  load_staging_[s] = k;
  reads_in_flight_++;
  r->loads++;
  io_->push(IoOp{false, r->file.read_fd(), staging_ + size_t(k) * page_size_, page_size_,
                 r->file_offset + page * page_size_, s});
}

// A finished read of `len` bytes at `first_page` into the memfd's page cache (allocating the
// pages without mapping them anywhere), zeros past the file's end. Returns the bytes read
// from the file, or -errno (EIO for a read that stopped short of the file's end).
ssize_t UffdEngine::store_read(Region* r, size_t first_page, char* data, size_t len, ssize_t result) {
  if (result < 0) return result;
  const uint64_t off = r->file_offset + first_page * page_size_;
  const uint64_t want = std::min<uint64_t>(len, r->file.size() > off ? r->file.size() - off : 0);
  if (static_cast<uint64_t>(result) < want) return -EIO;
  if (static_cast<uint64_t>(result) < len) std::memset(data + result, 0, len - result);
  const ssize_t n = pwrite(r->memfd, data, len, static_cast<off_t>(first_page * page_size_));
  if (n != static_cast<ssize_t>(len)) return n < 0 ? -errno : -ENOMEM;
  return result;
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
  io_->push(IoOp{false, r->file.read_fd(), run_staging_.at(block.first), run.slots.size() * page_size_,
                 r->file_offset + run.first_page * page_size_, kRunTag | idx});
  return true;
}

void UffdEngine::finish_read_run(size_t idx, ssize_t result) {
  ReadRun& run = runs_[idx];
  Region* r = run.region;
  runs_free_.push_back(static_cast<uint32_t>(idx));
  reads_in_flight_--;
  r->loads--;
  io_done_.notify_all();
  const size_t len = run.slots.size() * page_size_;
  result = store_read(r, run.first_page, run_staging_.at(run.staging), len, result);
  run_staging_.give(run.staging, run.slots.size());
  if (result < 0) {
    // Nobody asked for these pages: drop them and wake any thread waiting on one, whose
    // fault then reads the page itself and reports the error to it.
    log(LogLevel::warn, "read-ahead of %zu pages at offset %llu of '%s' failed: %s", run.slots.size(),
        static_cast<unsigned long long>(r->file_offset + run.first_page * page_size_), r->file.path().c_str(),
        std::strerror(static_cast<int>(-result)));
    madvise(r->alias + run.first_page * page_size_, len, MADV_REMOVE);  // pages half-copied, if any
    for (size_t i = 0; i < run.slots.size(); ++i) {
      dmp_abort(&policy_, run.slots[i]);
      uffd_wake(uffd_, r->addr + (run.first_page + i) * page_size_, page_size_);
    }
    return;
  }
  st_.bytes_read += static_cast<uint64_t>(result);
  for (uint32_t s : run.slots) demote(dmp_loaded(&policy_, s));
  map_run(r, run.slots);
}

// Maps adjacent loaded pages with one UFFDIO_CONTINUE (waking their waiters); pages a
// write fault waits for, and any trouble, go through map_page one by one.
void UffdEngine::map_run(Region* r, const std::vector<uint32_t>& slots) {
  const bool wp = r->write_protects();
  for (size_t i = 0, j; i < slots.size(); i = j) {
    if (held_back(r, slots[i])) {
      j = i + 1;
      continue;
    }
    for (j = i; j < slots.size() && !(pages_[slots[j]].flags & F_LOAD_WRITE) && !held_back(r, slots[j]); ++j) {
    }
    // [i, j): pages only read ahead, mapped together (write-protected to track first writes)
    if (j - i > 1 && uffd_continue(uffd_, app_addr(slots[i]), (j - i) * page_size_, wp) == 0) {
      if (r->writable && !wp)
        for (size_t k = i; k < j; ++k) pages_[slots[k]].flags |= F_DIRTY | F_WRITABLE;
    } else {
      for (size_t k = i; k < j; ++k) map_page(r, slots[k], false);
    }
    if (j < slots.size() && (pages_[slots[j]].flags & F_LOAD_WRITE)) {  // a write fault waits for this one
      pages_[slots[j]].flags &= ~F_LOAD_WRITE;
      map_page(r, slots[j], true);
      ++j;
    }
  }
}

// A page of a hole: a zeroed page in the memfd instead of a read.
void UffdEngine::fill_zero(Region* r, uint32_t s, size_t page, bool write) {
  static const char zeros[65536] = {};
  const ssize_t n = pwrite(r->memfd, zeros, std::min(page_size_, sizeof zeros), static_cast<off_t>(page * page_size_));
  if (n != static_cast<ssize_t>(std::min(page_size_, sizeof zeros))) {
    dmp_abort(&policy_, s);
    fail_page(r, page, 0, n < 0 ? errno : EIO);
    return;
  }
  st_.zero_fills++;
  demote(dmp_loaded(&policy_, s));
  if (!held_back(r, s)) map_page(r, s, write);
}

void UffdEngine::finish_read(uint32_t s, ssize_t result) {
  Region* r = region_of_slot(s);
  const size_t page = page_of_slot(s);
  reads_in_flight_--;
  r->loads--;
  io_done_.notify_all();
  const uint32_t k = load_staging_[s];
  char* data = staging_ + size_t(k) * page_size_;
  staging_free_.push_back(k);
  result = store_read(r, page, data, page_size_, result);
  if (result < 0) {
    dmp_abort(&policy_, s);
    fail_page(r, page, load_tid_[s], static_cast<int>(-result));
    return;
  }
  st_.bytes_read += static_cast<uint64_t>(result);
  const bool write = pages_[s].flags & F_LOAD_WRITE;
  pages_[s].flags &= ~F_LOAD_WRITE;
  demote(dmp_loaded(&policy_, s));
  if (!held_back(r, s)) map_page(r, s, write);
}

// Maps a resident page into the application's view and wakes the threads waiting on it.
void UffdEngine::map_page(Region* r, uint32_t s, bool write_fault) {
  char* addr = r->addr + page_of_slot(s) * page_size_;
  uint8_t& flags = pages_[s].flags;
  bool wp = r->write_protects() && !write_fault && !(flags & F_DIRTY);
  int rc = uffd_continue(uffd_, addr, page_size_, wp);
  if (rc == -EINVAL && wp) {
    // Kernel without UFFDIO_CONTINUE_MODE_WP (< 6.4): stop tracking first writes; every
    // page mapped writable counts as dirty from now on.
    log(LogLevel::warn, "kernel lacks UFFDIO_CONTINUE_MODE_WP: all pages of writable mappings will be written back");
    for (auto& [id, reg] : by_id_) reg->track_dirty = false;
    wp = false;
    rc = uffd_continue(uffd_, addr, page_size_, false);
  }
  if (r->writable && !wp) flags |= F_DIRTY | F_WRITABLE;
  if (rc == -EEXIST) {
    uffd_wake(uffd_, addr, page_size_);
  } else if (rc < 0) {
    log(LogLevel::error, "mapping page %zu of '%s' failed: %s", page_of_slot(s), r->file.path().c_str(),
        std::strerror(-rc));
    uffd_wake(uffd_, addr, page_size_);
  }
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
  char* addr = r->addr + page * page_size_;
  madvise(r->alias + page * page_size_, page_size_, MADV_REMOVE);  // drop a half-filled page
  if (features_.poison && uffd_poison(uffd_, addr, page_size_) == 0) return;
  // No UFFDIO_POISON (kernel < 6.6): signal the faulting thread, then let it retry.
  if (tid) syscall(SYS_tgkill, getpid(), tid, SIGBUS);
  uffd_wake(uffd_, addr, page_size_);
}

// A page entered the eviction queue: its PTE goes in the next bulk unmap.
void UffdEngine::demote(uint32_t s) {
  if (s == DMP_NIL) return;
  pages_[s].flags |= F_ZAP;
  zap_list_.emplace_back(s, pages_[s].key);
  if (zap_list_.size() >= zap_batch_) flush_zaps();
}

// One range per run of demoted pages, widened over gaps of pages that have no PTE, in page
// order. Why: UFFDIO_CONTINUE maps shmem pages with dirty PTEs, and zapping dirty PTEs of a
// shared mapping forces a TLB flush (an IPI to every other CPU of the process) per range, not
// per call. Demoted pages are sparse (a BFS level reads some adjacency lists and skips others):
// 64 of them made ~17 ranges, split by gaps of mostly 1-7 pages that were not even resident.
void UffdEngine::flush_zaps() {
  std::sort(zap_list_.begin(), zap_list_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const Region* prev_region = nullptr;
  size_t prev_page = 0;  // last page added to zaps_ (valid while prev_region is set)
  for (auto [s, key] : zap_list_) {
    // Skip pages recovered, freed or reused since they were demoted. Pages just chosen to
    // leave (evict) are still mapped and must be unmapped before they are written or freed.
    const uint8_t st = pages_[s].state;
    if (pages_[s].key != key || (st != DMP_EVICT && st != DMP_LEAVING) || !(pages_[s].flags & F_ZAP)) continue;
    pages_[s].flags &= ~(F_ZAP | F_WRITABLE);
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

// Sequential read-ahead. DI-MMAP reads only the page that faulted, which suits random access;
// a pass over a file (a scan, a read-modify-write sweep) then waits for one read per page
// (39 MiB/s against 620 with read-ahead, one thread sweeping a file 16x its buffer). A miss on
// the page after an earlier miss, or on the first page after a stream's last window, makes or
// continues a stream: the pages after it are queued for read-ahead (runs of one read each),
// the window doubling from kMinReadAhead up to ra_max_. The page halfway through a window is
// left unmapped, resident: the first touch of it is a minor fault that queues the next window
// while the application reads the second half, as Linux's PG_readahead mark does (pages
// mapped in the buffer are otherwise touched without the engine seeing it). A mapping follows
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
  st = Stream{};
  st.next = page + 1;
  st.used = ++ra_clock_;
}

void UffdEngine::read_ahead(Region* r, Stream& st, size_t first) {
  const size_t window = std::clamp(2 * st.window, kMinReadAhead, ra_max_);
  const size_t end = std::min(r->npages, first + window);
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

// Any fault on `page` (a miss, a wait for a read, a minor fault): if it is a stream's
// held-back page, the application has come halfway through the window: queue the next one.
void UffdEngine::touch(Region* r, size_t page) {
  for (Stream& st : r->streams) {
    if (page != st.marker) continue;
    st.marker = kNoPage;
    st.used = ++ra_clock_;
    if (st.window) read_ahead(r, st, st.end);
  }
}

// A page read ahead is not mapped if it is a stream's marker (see note_miss).
bool UffdEngine::held_back(const Region* r, uint32_t s) const {
  if (pages_[s].flags & F_LOAD_WRITE) return false;
  const size_t page = page_of_slot(s);
  for (const Stream& st : r->streams)
    if (page == st.marker) return true;
  return false;
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
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t s = batch_[i];
      if (pages_[s].flags & F_DIRTY)
        dirty.push_back(s);
      else
        release_slot(s);
    }
    flush_frees();
    if (!dirty.empty()) submit_writes(dirty, true, nullptr);
  }
}

// A leaving page is clean or written back: free its memory and its slot. Its PTE is gone
// already (bulk unmap), so the free needs no TLB shootdown.
void UffdEngine::release_slot(uint32_t s) {
  Region* r = region_of_slot(s);
  frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);
  dmp_release(&policy_, s);
  st_.evictions++;
  note_write_progress();
}

void UffdEngine::flush_frees() {
  if (zaps_.size()) zaps_.flush();
  if (frees_.size()) frees_.flush();
}

size_t UffdEngine::io_len(const Region* r, size_t first_page, size_t npages) const {
  const uint64_t off = r->file_offset + first_page * page_size_;
  const uint64_t len = uint64_t(npages) * page_size_;
  return static_cast<size_t>(std::min<uint64_t>(len, r->file.size() - off));
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
// mapped by the engine), bounded by the I/O depth and by a staging budget.
void UffdEngine::pump_writes() {
  const size_t staging_budget = std::max<size_t>(4u << 20, cfg_.buffer_bytes / 16);
  while (!write_backlog_.empty() && writes_in_flight_ < cfg_.io_depth) {
    const uint64_t id = write_backlog_.front();
    WriteJob& job = jobs_.at(id);
    const size_t bytes = job.slots.size() * page_size_;
    if (writes_in_flight_ > 0 && write_staging_bytes_ + bytes > staging_budget) break;
    write_backlog_.pop_front();
    job.staging = static_cast<char*>(std::aligned_alloc(page_size_, bytes));
    const ssize_t n = job.staging ? pread(job.region->memfd, job.staging, bytes,
                                          static_cast<off_t>(job.first_page * page_size_))
                                  : -1;
    if (n != static_cast<ssize_t>(bytes)) {
      const int err = !job.staging ? ENOMEM : n < 0 ? errno : EIO;
      std::free(job.staging);
      job.staging = nullptr;
      writes_in_flight_++;  // finish_write counts it out again
      finish_write(id, -err);
      continue;
    }
    write_staging_bytes_ += bytes;
    const uint64_t off = job.region->file_offset + job.first_page * page_size_;
    io_->push(IoOp{true, job.region->file.write_fd_for(off, job.len), job.staging, job.len, off, kWriteTag | id});
    writes_in_flight_++;
  }
}

void UffdEngine::finish_write(uint64_t id, ssize_t result) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  WriteJob job = std::move(it->second);
  jobs_.erase(it);
  if (job.staging) {
    write_staging_bytes_ -= job.slots.size() * page_size_;
    std::free(job.staging);
  }
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
  for (uint32_t s : job.slots) {
    pages_[s].flags &= ~DMP_F_BUSY;
    // Without write-protect tracking a mapped page may change at any time: it stays dirty.
    if (!ok || (!job.eviction && !r->track_dirty)) pages_[s].flags |= F_DIRTY;
    if (!job.eviction) continue;
    if (ok && !(pages_[s].flags & F_WANTED)) {
      release_slot(s);
      continue;
    }
    // Faulted while leaving, or not written: back into the buffer (data kept).
    const bool wanted = pages_[s].flags & F_WANTED;
    pages_[s].flags &= ~F_WANTED;
    demote(dmp_recover(&policy_, s));
    if (wanted) map_page(r, s, false);
  }
  flush_frees();
  io_done_.notify_all();
}

// Misses that waited for a free slot or an I/O slot.
void UffdEngine::start_pending() {
  while (!pending_.empty() && policy_.free.len > 0 && reads_in_flight_ < cfg_.io_depth) {
    PendingMiss m = pending_.front();
    pending_.pop_front();
    auto it = by_id_.find(m.region_id);
    if (it == by_id_.end()) continue;  // unmapped meanwhile
    Region* r = it->second;
    touch(r, m.page);
    // The page may have arrived meanwhile: account the fault by what it finds now.
    const uint32_t s = dmp_lookup(&policy_, key_of(r, m.page));
    if (s == DMP_NIL) {
      start_fill(r, m.page, m.write, m.tid);
    } else if (pages_[s].state == DMP_LOADING) {
      st_.hits++;
      if (m.write) pages_[s].flags |= F_LOAD_WRITE;
    } else if (pages_[s].state == DMP_LEAVING) {
      st_.recoveries++;
      pages_[s].flags |= F_WANTED;
    } else if (pages_[s].state == DMP_EVICT) {
      st_.recoveries++;
      pages_[s].flags &= ~F_ZAP;
      demote(dmp_recover(&policy_, s));
      map_page(r, s, m.write);
    } else {
      st_.hits++;
      map_page(r, s, m.write);
    }
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
  // Nothing can free a slot (every page dirty and unwritable): fail the waiters rather
  // than leave them hanging.
  const bool idle = writes_in_flight_ == 0 && write_backlog_.empty() && policy_.evict.len == 0;
  if (!pending_.empty() && policy_.free.len == 0 && reads_in_flight_ == 0 && (idle || writes_refused())) {
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
}

Region* UffdEngine::region_by_addr(uintptr_t a) const {
  auto it = by_addr_.upper_bound(a);
  if (it == by_addr_.begin()) return nullptr;
  --it;
  Region* r = it->second;
  return a < reinterpret_cast<uintptr_t>(r->addr) + r->length ? r : nullptr;
}

Region* UffdEngine::region_of_slot(uint32_t s) const {
  return by_id_.at(static_cast<uint32_t>(pages_[s].key >> kRegionShift));
}

// ---------------------------------------------------------------------------------------
// the API side (application threads)

int UffdEngine::map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) {
  auto r = std::make_unique<Region>();
  if (int rc = r->file.open(fd, length, prot, flags, offset, cfg_.direct_io); rc < 0) return rc;
  const char* path = r->file.path().c_str();
  r->length = (length + page_size_ - 1) / page_size_ * page_size_;
  r->npages = r->length / page_size_;
  r->file_offset = static_cast<uint64_t>(offset);
  r->writable = (prot & PROT_WRITE) && (flags & MAP_SHARED);
  r->track_dirty = features_.wp_shmem;
  // With a latency model every fill is a device read, holes included.
  r->fresh = !cfg_.perma[0] && r->file.is_hole(static_cast<uint64_t>(offset), r->length);
  if (r->fresh) r->written.assign(r->npages, false);
  if (r->npages >= (1ull << kRegionShift)) return fail(EFBIG, "dimmap_mmap('%s'): mapping too large", path);

  r->memfd = memfd_create("dimmap", MFD_CLOEXEC);
  if (r->memfd < 0) return fail(errno, "dimmap_mmap('%s'): memfd_create failed: %s", path, std::strerror(errno));
  auto cleanup = [&](int err, const char* what) {
    const int e = errno;
    if (r->alias) munmap(r->alias, r->length);
    if (r->addr) munmap(r->addr, r->length);
    close(r->memfd);
    return fail(err ? err : e, "dimmap_mmap('%s'): %s: %s", path, what, std::strerror(err ? err : e));
  };
  if (ftruncate(r->memfd, static_cast<off_t>(r->length)) != 0) return cleanup(0, "cannot size the page store");
  const int fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
  void* app = mmap(hint, r->length, prot, MAP_SHARED | MAP_NORESERVE | fixed, r->memfd, 0);
  if (app == MAP_FAILED) return cleanup(0, "cannot reserve the address range");
  r->addr = static_cast<char*>(app);
  void* alias = mmap(nullptr, r->length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, r->memfd, 0);
  if (alias == MAP_FAILED) return cleanup(0, "cannot map the engine's view");
  r->alias = static_cast<char*>(alias);
  // Children of fork() must not see the mapping: nobody would serve its faults there.
  madvise(r->addr, r->length, MADV_DONTFORK);
  madvise(r->alias, r->length, MADV_DONTFORK);
  madvise(r->addr, r->length, MADV_NOHUGEPAGE);
  if (r->writable && !r->track_dirty)
    log(LogLevel::warn, "'%s': kernel lacks userfaultfd write-protect on shmem: every page will be written back",
        path);

  std::unique_lock<std::mutex> lock(mu_);
  r->id = next_region_id_++;
  if (int rc = uffd_register(uffd_, r->addr, r->length, r->write_protects()); rc < 0) {
    lock.unlock();
    return cleanup(-rc, "cannot register with userfaultfd");
  }
  *out = r->addr;
  by_addr_[reinterpret_cast<uintptr_t>(r->addr)] = r.get();
  by_id_[r->id] = r.get();
  log(LogLevel::debug, "mapped '%s' (%zu pages, %s) at %p", path, r->npages, r->writable ? "rw" : "ro", *out);
  r.release();
  return 0;
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
      if (pages_[s].state == DMP_FREE || (pages_[s].key >> kRegionShift) != r->id) continue;
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
      // Write-protect first, so a store during the write faults and marks the page dirty again.
      if ((f & F_WRITABLE) && r->track_dirty) {
        uffd_writeprotect(uffd_, r->addr + page_of_slot(s) * page_size_, page_size_, true);
        f &= ~F_WRITABLE;
      }
      dirty.push_back(s);
    }
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
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (a % page_size_) return fail(EINVAL, "dimmap_msync(%p): address not page aligned", addr);
  std::unique_lock<std::mutex> lock(mu_);
  Region* r = region_by_addr(a);
  if (!r) return fail(ENOMEM, "dimmap_msync(%p): not in a dimmap mapping", addr);
  const size_t first = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
  const size_t end = std::min(r->npages, first + (length + page_size_ - 1) / page_size_);
  int err = 0;
  if (r->writable) err = write_back(r, first, end, lock);
  if (flags & MS_INVALIDATE) {
    for (uint32_t s : slots_in(r, first, end)) {
      const uint8_t st = pages_[s].state;
      if ((pages_[s].flags & (F_DIRTY | DMP_F_BUSY)) || st == DMP_LOADING || st == DMP_LEAVING) continue;
      frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);  // also drops the PTE
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

int UffdEngine::unmap(void* addr, size_t length) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = by_addr_.find(reinterpret_cast<uintptr_t>(addr));
  if (it == by_addr_.end()) return fail(EINVAL, "dimmap_munmap(%p): not the start of a dimmap mapping", addr);
  Region* r = it->second;
  if ((length + page_size_ - 1) / page_size_ != r->npages)
    return fail(EINVAL, "dimmap_munmap(%p): length %zu does not match the mapping (%zu bytes): unmap it whole", addr,
                length, r->length);
  // Let reads and evictions of this mapping finish, then write back what is dirty.
  io_done_.wait(lock, [r] { return r->loads == 0 && r->writes == 0; });
  if (r->writable) {
    const int err = write_back(r, 0, r->npages, lock);
    io_done_.wait(lock, [r] { return r->loads == 0 && r->writes == 0; });
    if (err)
      return fail(-err, "dimmap_munmap('%s'): writeback failed (%s); the mapping stays intact", r->file.path().c_str(),
                  std::strerror(-err));
  }
  // From here on accesses fault on a hole (SIGSEGV); threads still waiting are woken.
  munmap(r->addr, r->length);
  uffd_wake(uffd_, r->addr, r->length);
  for (uint32_t s : slots_in(r, 0, r->npages)) {
    if (pages_[s].state == DMP_LEAVING || pages_[s].state == DMP_LOADING) continue;  // cannot be: waited above
    dmp_remove(&policy_, s);
  }
  by_addr_.erase(it);
  by_id_.erase(r->id);
  lock.unlock();
  munmap(r->alias, r->length);
  close(r->memfd);  // frees every page of the mapping
  delete r;
  return 0;
}

int UffdEngine::prefetch(const struct iovec* ranges, size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  // At most a quarter of the buffer per call: read-ahead must not flush what is in use.
  size_t budget = par_.npages / 4, queued = 0;
  for (size_t i = 0; i < n && budget > 0; ++i) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(ranges[i].iov_base);
    Region* r = region_by_addr(a);
    if (!r) return fail(ENOMEM, "dimmap_prefetch(%p): not in a dimmap mapping", ranges[i].iov_base);
    const size_t first = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
    const size_t end = std::min(r->npages, (a + ranges[i].iov_len - reinterpret_cast<uintptr_t>(r->addr) +
                                            page_size_ - 1) / page_size_);
    for (size_t page = first; page < end && budget > 0; ++page) {
      const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
      if (s == DMP_NIL) {
        prefetch_.emplace_back(r->id, page);
        ++queued;
        --budget;
      } else if (pages_[s].state == DMP_EVICT) {  // a victim page: map it again, no I/O
        pages_[s].flags &= ~F_ZAP;
        demote(dmp_recover(&policy_, s));
        map_page(r, s, false);
        --budget;
      }
    }
  }
  if (queued) wake_server();
  return 0;
}

int UffdEngine::discard(void* addr, size_t length) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (a % page_size_) return fail(EINVAL, "dimmap_discard(%p): address not page aligned", addr);
  std::unique_lock<std::mutex> lock(mu_);
  Region* r = region_by_addr(a);
  if (!r) return fail(ENOMEM, "dimmap_discard(%p): not in a dimmap mapping", addr);
  const size_t first = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
  const size_t end = std::min(r->npages, first + (length + page_size_ - 1) / page_size_);
  io_done_.wait(lock, [r] { return r->loads == 0 && r->writes == 0; });
  for (uint32_t s : slots_in(r, first, end)) {
    if (pages_[s].flags & DMP_F_BUSY) continue;  // an msync is writing it: it stays
    frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);  // drops the PTEs too
    dmp_remove(&policy_, s);
    st_.evictions++;
  }
  frees_.flush();
  return 0;
}

void UffdEngine::stats(struct dimmap_stats* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  *out = st_;
  out->hot_promotions = policy_.cnt.hot_promotions;
  out->resident_pages = dmp_resident(&policy_) + policy_.leaving;
  uint64_t dirty = 0;
  for (const dmp_page& p : pages_) dirty += (p.state != DMP_FREE && (p.flags & F_DIRTY));
  out->dirty_pages = dirty;
}

}  // namespace

std::unique_ptr<Engine> make_uffd_engine(const dimmap_config& config, int* err) {
  auto engine = std::make_unique<UffdEngine>(config);
  if (int rc = engine->start(); rc < 0) {
    *err = rc;
    return nullptr;
  }
  return engine;
}

}  // namespace dimmap::detail
