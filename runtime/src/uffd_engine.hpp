// uffd_engine.hpp - the user-space DI-MMAP engine on userfaultfd (private to libdimmap).
//
// Each mapping is backed by a memfd (shmem) mapped twice: the application's view, registered
// with userfaultfd for missing faults (and write-protect faults when writable), and an alias
// the engine never touches but frees pages through (batched MADV_REMOVE). The memfd holds
// exactly the pages of the buffer; the kernel's own shmem fault path maps them. A fault server
// thread per buffer runs the DI-MMAP policy (runtime/policy, plain C):
//   miss      a fault on a page the memfd lacks: the server reads it from storage (io_uring,
//             O_DIRECT) into a staging page, stores it into the memfd with pwrite - never
//             mapping it - and wakes the faulting threads. Their retry maps the page through
//             the shmem fault path like any page-cache page: a clean PTE, neighbours mapped by
//             fault-around, no UFFDIO_CONTINUE. (uffd_fills.cpp)
//   demotion  a page pushed into the eviction queue loses its PTEs in bulk: one
//             process_madvise(MADV_DONTNEED) over up to four eviction batches. The page stays
//             in the memfd, so a touch maps it again inside the kernel, with no round trip
//             to the server. (uffd_eviction.cpp)
//   leaving   when a batch reaches the head of the eviction queue one read of the page table
//             (/proc/self/pagemap) finds the pages touched since their demotion: they are
//             recovered (the policy's recovery: fault count bumped, back to the primary or hot
//             FIFO). The rest are written back if dirty (adjacent pages coalesced into one
//             write) and freed with MADV_REMOVE. The paper's DI-MMAP notices a recovery at the
//             fault; this engine notices it when the page would leave. (uffd_eviction.cpp)
//   dirty     pages of writable mappings are mapped write-protected (a uffd-wp marker put in
//             the empty page-table entry before the page is stored), so the first write to a
//             page faults to the server, which marks it dirty. (uffd_writeback.cpp)
//   error     a failed fill poisons the page (UFFDIO_POISON): the faulting threads get SIGBUS.
// Read-ahead: pages asked for with dimmap_prefetch, and windows after faults on consecutive
// pages (see note_miss), are read in runs of adjacent pages, one read and one store per run.
// Application threads touching resident pages never enter the engine.
#pragma once

#include <linux/userfaultfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <map>
#include <vector>

#include "backing_file.hpp"
#include "engine.hpp"
#include "io_queue.hpp"
#include "perma.hpp"
#include "staging_pool.hpp"
#include "uffd_sys.hpp"

extern "C" {
#include "dimmap_policy.h"
}

namespace dimmap::detail {

// Engine bits in dmp_page.flags (DMP_F_BUSY belongs to the policy: never chosen to leave).
constexpr uint8_t F_DIRTY = 0x02;      // content newer than storage
constexpr uint8_t F_WRITABLE = 0x04;   // its PTE may be writable: writes are not seen until protected again
constexpr uint8_t F_ZAP = 0x08;        // demoted; its PTE removal waits in the zap batch
constexpr uint8_t F_WANTED = 0x10;     // faulted while leaving: recover instead of freeing
constexpr uint8_t F_LOAD_WRITE = 0x20; // a write fault is waiting for this load
constexpr uint8_t F_WP_WAIT = 0x40;    // a write to this leaving page waits for its recovery
constexpr size_t kNoPage = ~size_t{0};

constexpr size_t kMaxWriteRun = 64;    // pages per coalesced writeback (FastMap writes up to 512)
constexpr size_t kMaxZapGap = 32;      // pages a bulk-unmap range may span between demoted pages
constexpr uint64_t kWriteTag = 1ull << 63;
constexpr uint64_t kRunTag = 1ull << 62;  // a read-ahead run (index into runs_)
// Read-ahead reads adjacent pages in runs: one read and one store into the memfd per run
// instead of per page (a sweep of a file was bound by those calls: kmer classify on dimmap
// went from 19K to 55K reads/s, Linux mmap 63K).
constexpr size_t kMaxReadRun = 64;  // pages per read-ahead read (256 KiB with 4 KiB pages)
// Their staging memory stays under 1/16 of the buffer (it counts against the same budget),
// within [16 pages, 4 MiB].
constexpr size_t kRunStagingShare = 16;
constexpr size_t kMinRunStaging = 16;
constexpr size_t kMaxRunStagingBytes = 4u << 20;
// Writebacks in flight are copied out of the memfd into a pool of 1/64 of the buffer, at
// least one full run and at most 2 MiB: 512 pages, room for the I/O depth's single-page
// writes and for 8 full runs. (Populated at start, 8 MiB added 5.6 MiB to the peak of a
// 256M buffer under uniform writes, whose writes are single pages.)
constexpr size_t kWriteStagingShare = 64;
constexpr size_t kMaxWriteStagingBytes = 2u << 20;
constexpr size_t kMinReadAhead = 4;  // pages in a stream's first read-ahead window
constexpr size_t kStreamsPerRegion = 4;  // sequential streams followed at once in one mapping
constexpr size_t kCompletionsPerRound = 4;  // completions handled between two looks for new faults
constexpr auto kWriteRetryInterval = std::chrono::milliseconds(100);  // while storage refuses writes

// A run of faults on consecutive pages of a mapping, read ahead (see UffdEngine::note_miss).
struct Stream {
  size_t next = kNoPage;    // a miss on this page continues the stream
  size_t end = 0;           // first page after the last window queued
  size_t window = 0;        // pages in that window (0: none queued yet)
  size_t marker = kNoPage;  // page read ahead but held out of the memfd: its first touch queues the next window
  uint64_t used = 0;        // last miss or touch (the least recently used stream is replaced)
  // The marker page's data, read with its run but stored into the memfd only when touched
  // (a page in the memfd is mapped by the kernel without the engine seeing the touch).
  size_t held_page = kNoPage;
  uint32_t held_slot = DMP_NIL;
  std::unique_ptr<char[]> held;
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
  bool track_dirty = false;  // write-protect available; otherwise every stored page counts as dirty
  // The mapped range of the file was one hole when mapped (e.g. a fresh scratch file): pages
  // never written back since are zeros and are filled without reading storage.
  bool fresh = false;
  bool premarked = false;  // write_protects() and every entry marked at map time (see map)
  std::vector<bool> written;  // fresh only: page written back at least once
  BackingFile file;
  unsigned loads = 0;     // reads in flight
  unsigned writes = 0;    // writebacks queued or in flight (eviction or sync)
  std::set<uint64_t> live_jobs;  // ids of those writebacks, oldest first
  Stream streams[kStreamsPerRegion];
  // Pages are mapped write-protected until first written, so only written pages go back.
  bool write_protects() const { return writable && track_dirty; }
  char* page_addr(size_t page, size_t page_size) const { return addr + page * page_size; }
  int write_error = 0;    // first failed writeback since the last msync/munmap (errno)
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
  size_t staging = 0;  // first page of its block in the write staging pool (set when it starts)
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
  // A thread serving faults: all of them read the one userfaultfd and share the policy
  // (mu_); each has its own I/O queue, so reads, stores into the memfd and wake-ups run
  // outside the lock, on as many CPUs as there are service threads.
  struct ServiceThread {
    std::unique_ptr<IoQueue> io;
    std::thread thread;
    // Reads chosen under the lock (and the file each is from), started after it.
    std::vector<std::pair<IoOp, const BackingFile*>> reads;
  };

  explicit UffdEngine(const dimmap_config& cfg) : cfg_(cfg), zaps_(MADV_DONTNEED), frees_(MADV_REMOVE) {}
  ~UffdEngine() override;
  int start();

  // In-thread fault service (uffd_in_thread.cpp): called from the SIGBUS handler.
  bool serve_in_thread(uintptr_t addr, bool write);

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
  // ---- fault service (uffd_faults.cpp) ----
  void serve(ServiceThread& me);
  size_t drain_faults();
  void start_reads(ServiceThread& me);
  void complete(uint64_t tag, ssize_t result);
  void queue_read(Region* r, char* buf, size_t len, uint64_t off, uint64_t tag);
  void handle_fault(const struct uffd_msg& msg);
  void on_missing(Region* r, size_t page, bool write, uint32_t tid, bool first_sight);
  void handle_write_protect_fault(Region* r, size_t page);
  void start_pending();
  void fail_waiting_misses();

  // ---- in-thread fault service (uffd_in_thread.cpp) ----
  int register_in_thread();
  void unregister_in_thread();
  void fill_in_thread(Region* r, size_t page, bool write, std::unique_lock<std::mutex>& lock);

  // ---- fills and read-ahead (uffd_fills.cpp) ----
  void start_fill(Region* r, size_t page, bool write, uint32_t tid, bool prefetch = false);
  char* begin_read(Region* r, uint32_t slot, bool write, uint32_t tid);
  void finish_read(uint32_t slot, ssize_t result);
  ssize_t check_read(Region* r, size_t first_page, char* data, size_t len, ssize_t result);
  int store(Region* r, size_t first_page, const char* data, size_t npages, bool write);
  void publish(Region* r, size_t first_page, size_t npages, bool write);
  bool mark_stored(Region* r, size_t first_page, size_t npages, bool write);
  void wake_stored(char* addr, size_t len, bool unprotect);
  bool start_read_run(Region* r, size_t page);
  void finish_read_run(size_t run, ssize_t result);
  void fill_zero(Region* r, uint32_t slot, size_t page, bool write);
  void fail_page(Region* r, size_t page, uint32_t tid, int err);
  void poison_page(Region* r, size_t page, uint32_t tid);
  void note_miss(Region* r, size_t page);
  void read_ahead(Region* r, Stream& st, size_t first);
  void touch(Region* r, size_t page);
  bool hold(Region* r, uint32_t slot, const char* data);
  void unhold(Region* r, Stream& st);
  bool holds(Region* r, uint32_t slot) const;
  void forget_held(uint32_t slot);

  // ---- demotion and eviction (uffd_eviction.cpp) ----
  void demote(uint32_t slot);
  void flush_zaps();
  bool unmapped(const Region* r, size_t first, size_t end) const;
  void evict();
  void touched_since_demotion(const uint32_t* slots, size_t n, std::vector<bool>* out);
  void recover(uint32_t slot);
  void release_slot(uint32_t slot);
  void flush_frees();

  // ---- dirty tracking and writeback (uffd_writeback.cpp) ----
  void protect_for_writeback(const std::vector<uint32_t>& slots);
  size_t io_len(const Region* r, size_t first_page, size_t npages) const;
  void submit_writes(std::vector<uint32_t>& dirty, bool eviction, SyncRequest* sync);
  void pump_writes();
  void finish_write(uint64_t job_id, ssize_t result);
  std::vector<uint32_t> slots_in(const Region* r, size_t first, size_t end) const;
  int write_back(Region* r, size_t first, size_t end, std::unique_lock<std::mutex>& lock);

  // ---- helpers (uffd_engine.cpp) ----
  Region* region_by_addr(uintptr_t a) const;
  Region* region_of_slot(uint32_t slot) const;
  Region* region_range(void* addr, size_t length, const char* call, size_t* first, size_t* end) const;
  size_t page_of_slot(uint32_t slot) const { return key_page(pages_[slot].key); }
  uint64_t key_of(const Region* r, size_t page) const { return page_key(r->id, page); }
  char* app_addr(uint32_t slot) const { return region_of_slot(slot)->addr + page_of_slot(slot) * page_size_; }
  void wake(Region* r, size_t first_page, size_t npages);
  void wake_server();

  const dimmap_config cfg_;
  const size_t page_size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  int uffd_ = -1;
  int ctl_fd_ = -1;  // eventfd: stop request
  UffdFeatures features_;
  PageTable page_table_;
  std::vector<std::unique_ptr<ServiceThread>> service_;
  static thread_local ServiceThread* current_;  // the service thread running this code, if any
  std::atomic<bool> stop_{false};

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
  // The PerMA model, for in-thread fills (service threads hold it in their I/O queues).
  perma_model perma_{};
  uint64_t ra_clock_ = 0;  // orders Stream::used
  unsigned reads_in_flight_ = 0;
  unsigned writes_in_flight_ = 0;
  std::unordered_map<uint64_t, WriteJob> jobs_;
  std::deque<uint64_t> write_backlog_;  // jobs waiting for an I/O slot
  // Staging copies of writes in flight: a fixed pool, populated at start like the read
  // staging. (Allocated per write, it grew the process by up to two malloc arenas of
  // ~1 MiB only under a busy write load, which a budget measured on a calm run missed.)
  StagingPool write_staging_;
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
  // eviction queue: fewer, longer ranges per call (BFS on storage: 10-15% faster than one
  // eviction batch). A page touched before its unmap stays in the queue without a fault.
  size_t zap_batch_ = 1;
  MadviseBatch zaps_;
  MadviseBatch frees_;
  std::vector<uint32_t> batch_;
  std::vector<bool> touched_;  // scratch for touched_since_demotion

  struct dimmap_stats st_ {};
};

}  // namespace dimmap::detail
