// pagecache_engine.hpp - the DI-MMAP policy over the kernel's own page cache
// (DIMMAP_ENGINE=pagecache).
//
// The file is mapped with plain mmap, so a miss is the kernel's own page-cache fault: one
// fault, the read straight into the page cache, a clean PTE, no user-space round trip and no
// copy. The engine keeps the mapped file's resident pages within the buffer and decides which
// ones stay with the DI-MMAP policy (runtime/policy), from a keeper thread:
//   discovery  the keeper learns of misses by scanning the mappings' page tables
//              (PAGEMAP_SCAN, PAGE_IS_PRESENT) once enough faults have happened since the last
//              scan (the process's fault counter, polled every millisecond). Pages mapped since
//              the last scan enter the primary FIFO in address order: the policy sees the order
//              of misses to within one scan.
//   demotion   a page pushed into the eviction queue loses its PTEs in bulk (one
//              process_madvise(MADV_DONTNEED), one TLB flush per batch) and stays in the page
//              cache, so a touch maps it again inside the kernel with no I/O.
//   recovery   a demoted page found mapped again by a scan was touched: the policy recovers it
//              (fault count bumped, back to the primary or hot FIFO). A round recovers the
//              touched pages of every mapping before it admits new ones, and makes room only
//              with pages demoted in earlier rounds (this round's are still mapped: a touch of
//              them cannot be seen yet); the rest wait for the next round unless more than an
//              eviction queue's worth wait (evictable_, admit_fresh). So the kernel must map
//              only the page a thread touched: each mapping is registered with a userfaultfd
//              for write-protect faults only (UFFD_FEATURE_WP_ASYNC, nothing ever protected),
//              which turns off the kernel's fault-around. With it, every fault mapped up to 15
//              cached neighbours, and a demoted neighbour counted as touched: cold pages
//              climbed into the hot FIFO and pushed hot ones out, round and round. A read-only
//              mapping of a file opened read-only is mapped private for this (a shared one may
//              not be registered); through a descriptor open for writing, or without
//              userfaultfd, fault-around stays.
//   leaving    pages at the head of the eviction queue that were not touched leave the page
//              cache in the round that chose them: dirty ones are handed to writeback first
//              (sync_file_range), then posix_fadvise(POSIX_FADV_DONTNEED) drops each run once
//              it is clean (one look for a failed writeback a round); a run with a page dirty
//              again is written again and dropped by the next round.
//   sweeps     once the buffer has filled, every kSweepRounds rounds the sparse, dirty parts of
//              a writable mapping lose their PTEs in a few long ranges (hot-FIFO pages and
//              read-ahead spared): one TLB flush for many written pages instead of one for each
//              as it is demoted. A page cached that no list holds (mapped between the scan
//              and the sweep, or one whose drop the kernel refused) leaves when two sweeps in
//              a row find it (pagecache_sweep.cpp).
//   yielding  under a memory-cgroup limit, the keeper reads the cgroup's usage every round;
//              within a headroom of the limit, the buffer lends pages back (the FIFOs hold
//              fewer, the eviction queue's oldest leave) until the pages on their way out fit
//              beside it, and takes them back once the cgroup is well below the limit
//              (pagecache_yield.cpp). So the program's faults do not run the kernel's reclaim.
// Between two scans the mapped pages may exceed the buffer by the faults of one scan interval
// (1/64 of the buffer) while the keeper keeps up. It cannot make a faulting thread wait: it
// runs at the highest priority it may take, and threads that fault faster than it can write
// back and drop pages (many threads writing every page they touch, on few cores) still leave
// more in the page cache (runtime/README.md, "Which engine").
// Writes, msync durability and I/O errors (SIGBUS on a failed read, EIO from msync) are the
// kernel's; after a failed writeback the engine makes the cached pages dirty again before it
// drops any, so the data stays for the next msync. The PerMA latency model needs the
// userfaultfd engine, which sees every miss.
//
// Files: pagecache_engine.cpp (setup and the application's calls), pagecache_keeper.cpp (the
// keeper thread: scans, the policy's decisions, unmapping, writeback and dropping),
// pagecache_sweep.cpp (sweeps of writable mappings), pagecache_yield.cpp (the buffer under a
// memory limit).
#pragma once

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

#include "backing_file.hpp"
#include "engine.hpp"
#include "pagecache_priority.hpp"
#include "uffd_sys.hpp"

extern "C" {
#include "dimmap_policy.h"
}

namespace dimmap::detail::pagecache {

// PAGEMAP_SCAN (Linux 6.7+; Debian's 6.1 headers lack it). Documentation/admin-guide/mm/pagemap.rst.
constexpr uint64_t kPageIsPresent = 1u << 3;
struct PageRegion {
  uint64_t start, end, categories;
};
struct PmScanArg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
  uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);

// cachestat(2) (Linux 6.5+; not in Debian's 6.1 headers): how many of a file range's pages
// are cached and dirty. It is how the engine counts its writebacks and dirty pages, and skips
// writing clusters that are clean.
constexpr long kSysCachestat = 451;
struct CachestatRange {
  uint64_t off, len;
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
// cachestat of [off, off + len) of fd's file (len 0: to its end); false (errno set) if it fails.
bool cache_state(int fd, uint64_t off, uint64_t len, Cachestat* out);
// Dirty pages of [off, off + len) of fd's file (len 0: to its end); 0 where cachestat fails.
uint64_t dirty_pages(int fd, uint64_t off, uint64_t len);

// Starts reading [off, off + len) of fd's file into the page cache without waiting; returns
// how many of its pages were not cached, which it reads. POSIX_FADV_WILLNEED reads at most
// the kernel's read-ahead window per call (read_ahead_kb or the device's largest request,
// 128 KiB by default) and ignores the rest, so the range goes in chunks of 128 KiB.
uint64_t read_into_cache(int fd, uint64_t off, uint64_t len, size_t page_size);

constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr size_t kStreamMinPages = 256;  // this many pages in a row in the buffer, the last ones new: a pass
constexpr size_t kStreamMinRun = 8;     // ... with at least this many new in one round
constexpr size_t kStreamsPerRegion = 4;
constexpr uint64_t kPassRounds = 16;  // a pass not seen for this many rounds has ended
constexpr uint64_t kMaxReadAheadPages = 2048;  // 8 MiB: what a pass at disk speed takes in a few rounds
constexpr uint64_t kWriteCluster = 16;  // pages: a leaving page is written with its unmapped neighbours in these
constexpr uint64_t kSweepRounds = 8;    // a writable mapping is swept every this many rounds
constexpr size_t kSweepChunk = 512;     // pages a sweep looks at together: one page table's reach
constexpr uint64_t kSweepMinDirty = 16;  // a chunk with fewer dirty cached pages is not swept

// A pass over a mapping: the keeper reads ahead of it while its runs of misses follow on.
struct Stream {
  uint64_t ahead_end = 0;  // read-ahead issued up to this page (exclusive); 0: unused
  uint64_t window = 0;     // pages read ahead of the pass's last miss, doubling
  uint64_t round = 0;      // the keeper's round that last saw the pass
};

// A bit per page of a mapping.
struct PageBits {
  std::vector<uint64_t> words;
  void resize(size_t pages) { words.assign((pages + 63) / 64, 0); }
  bool test(size_t p) const { return words[p >> 6] >> (p & 63) & 1; }
  void set(size_t p, bool on) {
    if (on)
      words[p >> 6] |= uint64_t{1} << (p & 63);
    else
      words[p >> 6] &= ~(uint64_t{1} << (p & 63));
  }
};

struct Region {
  uint32_t id = 0;
  char* addr = nullptr;
  size_t length = 0;
  size_t npages = 0;
  uint64_t file_offset = 0;
  bool writable = false;
  BackingFile file;                // its buffered descriptor is mapped and drops pages
  // A descriptor of the keeper's own (a file of its own: the kernel reports a writeback error
  // once per open file), which starts eviction writeback and learns whether it failed.
  int writeback_fd = -1;
  std::atomic<int> write_error{0};  // an eviction writeback failed: the next msync says so
  uint64_t checked_round = 0;       // the keeper's last round that looked for a failed writeback,
  bool looked_this_round = false;   // whether it looked then,
  bool failed_this_round = false;   // and found one
  Stream streams[kStreamsPerRegion];
  PageBits in_fifo;  // in the primary or hot FIFO (its PTE may exist)
  PageBits unheld;   // the last sweep of its part found it cached and in no list
  // The keeper's: pages found mapped and in no FIFO, in page order; those a round had no room
  // for wait here for the next.
  std::vector<size_t> fresh;
  bool known(size_t p) const { return in_fifo.test(p); }
  void set_known(size_t p, bool on) { in_fifo.set(p, on); }
};

class PageCacheEngine final : public Engine {
 public:
  explicit PageCacheEngine(const dimmap_config& cfg) : cfg_(cfg), zaps_(MADV_DONTNEED), sweeps_(MADV_DONTNEED) {}
  ~PageCacheEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      served_cv_.notify_all();
    }
    cv_.notify_all();
    if (keeper_.joinable()) keeper_.join();
    if (pagemap_fd_ >= 0) close(pagemap_fd_);
    if (no_fault_around_fd_ >= 0) close(no_fault_around_fd_);
    if (usage_fd_ >= 0) close(usage_fd_);
    if (stat_fd_ >= 0) close(stat_fd_);
  }

  int start();

  int map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) override;

  int unmap(void* addr, size_t length) override;

  int sync(void* addr, size_t length, int flags) override;

  // Needs no policy lock: threads prefetching never wait for the keeper's scans.
  int prefetch(const struct iovec* ranges, size_t n) override;

  // Counts what happened until now: the keeper runs a round for the caller first.
  void stats(struct dimmap_stats* out) const override;

  size_t mapped_regions() const override {
    std::shared_lock<std::shared_mutex> lock(regions_mu_);
    return by_addr_.size();
  }

 private:
  // Adjacent pages of one mapping, handled with one call.
  struct Run {
    uint32_t region_id;
    uint64_t first;
    size_t pages;
  };
  // The file range of a run of r: its offset and length in bytes.
  std::pair<off_t, off_t> file_range(const Region& r, const Run& run) const {
    return {static_cast<off_t>(r.file_offset + run.first * page_size_), static_cast<off_t>(run.pages * page_size_)};
  }
  static bool by_position(const Run& a, const Run& b) {
    return a.region_id != b.region_id ? a.region_id < b.region_id : a.first < b.first;
  }
  Region* region_by_addr(uintptr_t a) const;

  // msync of pages [first, end) of r, and any writeback of r that failed since the last
  // call (the kernel's own, or one of a page leaving the buffer): 0 or the errno. The kernel
  // marks a page whose write failed clean and does not say which one it was, so after any
  // failure every cached page of the mapping is made dirty again: the data stays, and the
  // next msync writes it again.
  int write_back(Region* r, size_t first, size_t end, int how);

  // Counts the pages one call handed to writeback: `before` dirty pages in the range before it,
  // `after` after it. A page the call skipped (locked, or still being written) stays dirty and
  // is counted by the call that writes it; a page the kernel wrote by itself (its flusher, a
  // sync() elsewhere) is not counted at all. cachestat counts a dirty large folio's pages (in
  // the range) as dirty, and the kernel writes the folio whole: a page of one that is written
  // again after its neighbour was written is counted again, as it is written again. The
  // calls hold count_mu_ from the first look to the second: an msync of a range and the
  // keeper's writeback of part of it, counted at once, would both count the keeper's pages.
  void count_writeback(uint64_t before, uint64_t after) {
    if (before <= after) return;
    writebacks_.fetch_add(before - after, std::memory_order_relaxed);
    write_ios_.fetch_add(1, std::memory_order_relaxed);
  }

  // Marks the cached pages of [first, end) of r dirty without changing them.
  void keep_dirty(Region* r, size_t first, size_t end);

  // A write of a word's own value that no concurrent store can be lost to: a locked add of
  // zero (written out, because compilers turn an atomic add of zero into a plain load).
  static void store_same(uint64_t* word);

  // Takes pages [first, end) of r out of the policy (both locks held).
  void forget(Region* r, size_t first, size_t end);

  // The keeper thread: scans when enough faults happened since the last scan.
  void keep();

  // With DIMMAP_LOG=debug, the keeper's state at most every 100 ms, after a round (the
  // regions lock held): its lists, what waits, and how much of the mapped files is cached,
  // which says where pages beyond the buffer are when the buffer's bound does not hold.
  void log_state();

  // Opens the memory cgroup's usage file when a cgroup limits the process (start()).
  void watch_memory_limit();

  // Lends buffer pages back or takes them back after a look at the cgroup's usage, demoting
  // what the FIFOs no longer hold (policy lock held; pagecache_yield.cpp).
  void yield_to_limit();

  // One round (both locks held): finds pages mapped since the last scan, runs the policy, and
  // queues the unmaps and drops it decided.
  // admit_all: every page mapped is admitted, this round's demotions leaving if need be (the
  // last look at a mapping about to go, whose misses must all count).
  void scan(bool admit_all = false);

  // Adds to r->fresh the pages of r mapped now but not in a FIFO (both locks held).
  void collect_mapped(Region* r);

  // The demoted pages among r->fresh were touched: the policy recovers them (both locks held).
  void recover_touched(Region* r);

  // Lets the other pages of r->fresh in as misses, making room as the policy says (both locks
  // held). While more than an eviction queue's worth of them is left and only pages demoted
  // in this round could make room, those go after all: the pages mapped beyond the buffer
  // stay within the faults of a round and an eviction queue.
  void admit_fresh(Region* r, bool admit_all);

  // Whether this round sweeps r. Sweeps save the flushes of demotions: until the buffer has
  // demoted a page (its first fill), they would only unmap pages in use, and every unmap of a
  // written page is a TLB-flush IPI to each CPU the program runs on.
  bool sweeps_now(const Region& r) const {
    return r.writable && policy_.cnt.demotions > 0 && round_ % kSweepRounds == 0;
  }

  // Pages [first, end) of r came in as misses in a row this round: if they end a run of pages
  // in the buffer long enough to be a pass over the file, the next pages are read ahead (in
  // apply(), without the policy lock) before it faults on them; while passes go on, the
  // keeper runs a round every poll.
  void follow_pass(Region* r, uint64_t first, uint64_t end);

  // A sweep of writable mapping r (both locks held; why and how: pagecache_sweep.cpp). The
  // plan, before the round's scan, puts the long ranges to unmap into sweeps_; the sweep,
  // right after it, unmaps them in one call and sends the strays it finds out with the
  // leaving pages.
  void plan_sweep(Region* r);
  void sweep(Region* r);

  // A page pushed into the eviction queue: its PTE goes in the next bulk unmap.
  void demoted(uint32_t s);
  // Lets a batch of this round's oldest demotions leave after all, and evicts it; false if none.
  bool evict_early();

  // Moves a batch from the head of the eviction queue out of the buffer (both locks held).
  bool evict_batch();

  // A leaving page of a writable mapping is written together with its neighbours in its
  // aligned cluster that are unmapped too (in the eviction queue or leaving), as the kernel's
  // writeback of a file in page order merges them: they are clean when their turn comes.
  // Mapped neighbours stay out: cleaning a mapped page costs a TLB shootdown.
  void add_write_extent(uint32_t id, uint64_t page);

  // Unmaps the demoted pages, then drops the leaving ones from the page cache (the regions
  // lock held, so none is unmapped meanwhile; the lists are the keeper's own). The
  // leaving pages of writable mappings are all handed to writeback first, and each run is
  // dropped once its write is done (the kernel cannot drop a dirty page). A leaving page
  // left in the page cache for rounds is mapped again (touched at the cost of a minor fault,
  // or by fault-around where it is on): the keeper then finds it as
  // a new miss, and under load more such pages every round than it can drop.
  void apply();

  // Whether a writeback of r's file failed, once the writeback of [off, off + len) is done
  // (with wait; without, one look a round answers for every run found clean before it). Then
  // every cached page of r is made dirty again (the kernel marks a page whose write failed
  // clean and does not say which), nothing of r leaves this round, and the next msync reports
  // the error. drop_mu_ held.
  bool writeback_failed(Region* r, off_t off, off_t len, bool wait);

  // Sorts (region id, page) pairs into runs of adjacent pages (one call each) and clears them.
  static void to_runs(std::vector<std::pair<uint32_t, uint64_t>>* pages, std::vector<Run>* runs);

  // Starts the writeback of a run's dirty pages (counted; a clean run is skipped). True when
  // the run is clean: no page of it dirty or being written.
  bool start_writeback(const Run& run);

  // Whether a leaving run lies inside a write run that start_writeback found clean.
  bool inside_clean_write(const Run& run) const;

  // Drops this round's leaving runs from the page cache; those of a writable mapping once
  // clean: a run being written waits for its write, and is dropped only if it did not fail
  // and none of its pages is dirty again (else it goes to rewrite_: written again and
  // dropped next round). A clean run costs one cachestat (none inside a clean write run) and
  // the drop; the look for failed writebacks is one call a round.
  void drop_leaving();

  const dimmap_config cfg_;
  size_t page_size_ = 4096;
  dmp_params par_{};
  dmp_policy policy_{};
  std::vector<dmp_page> pages_;
  std::vector<dmp_bucket> buckets_;
  std::vector<uint32_t> batch_;
  uint64_t scan_after_ = 64;
  int pagemap_fd_ = -1;
  int usage_fd_ = -1;            // the memory cgroup's usage file, or -1: no cgroup limit
  int stat_fd_ = -1;             // its memory.stat, or -1
  bool stat_v2_ = false;         // in cgroup v2's names
  uint64_t limit_bytes_ = 0;     // its limit
  uint64_t headroom_bytes_ = 0;  // kept free below it
  int no_fault_around_fd_ = -1;  // the userfaultfd that turns off fault-around, or -errno
  PageRegion vec_[4096];
  // Pages at the eviction queue's head that may leave in this round: those demoted in earlier
  // rounds and not recovered by its scan.
  uint64_t evictable_ = 0;
  std::vector<std::pair<uint32_t, uint64_t>> leaving_;   // (region id, page) to drop this round
  std::vector<std::pair<uint32_t, uint64_t>> to_write_;  // (region id, page) to write this round
  std::vector<Run> write_runs_;  // to_write_ as runs
  uint64_t round_ = 0;           // the keeper's rounds (apply calls)
  std::vector<Run> runs_;     // this round's leaving pages, as runs of adjacent pages
  std::vector<Run> rewrite_;  // leaving runs found dirty again: written and dropped next round
  std::vector<Run> clean_writes_;          // this round's write runs found clean, by position
  std::vector<Run> settled_, unsettled_;   // leaving runs found clean, and not (yet)
  std::vector<Run> read_ahead_;  // to read ahead of passes this round
  bool passing_ = false;         // a pass was seen in the last kPassRounds rounds: a round every poll
  bool settling_ = false;        // the last round left pages waiting or wanted room: a round at the next poll
  uint64_t first_window_ = 0, max_window_ = 0;  // read-ahead sizes in pages (0: none)
  MadviseBatch zaps_;
  MadviseBatch sweeps_;                // one sweep's ranges
  std::vector<size_t> swept_;          // the first pages of its chunks
  unsigned char cached_[kSweepChunk];  // mincore of one of them

  // regions_mu_ guards the region tables (unique for map and unmap); mu_ the policy, the
  // stats and the regions' page bits. Application threads touching pages take neither.
  mutable std::shared_mutex regions_mu_;
  mutable std::mutex mu_;
  std::atomic<uint64_t> prefetched_{0};
  std::mutex count_mu_;                  // one counted writeback call at a time (count_writeback)
  // A failed writeback's discovery and the cached pages made dirty again, and the keeper's
  // look for failures and its drop, happen under it: a page whose write failed (clean, its
  // data only in the page cache) is never dropped between the two.
  std::mutex drop_mu_;
  std::atomic<uint64_t> writebacks_{0};  // dirty pages handed to writeback (msync or leaving)
  std::atomic<uint64_t> write_ios_{0};   // calls that handed them over
  mutable std::condition_variable cv_;          // wakes the keeper
  mutable std::condition_variable served_cv_;   // a round asked for by stats() is done
  mutable uint64_t requested_ = 0, served_ = 0;  // rounds asked for and done (tickets)
  std::thread keeper_;
  std::chrono::steady_clock::time_point logged_{};  // log_state's last line
  KeeperPriority priority_;  // the keeper's: nice -20, real-time while starved
  bool stop_ = false;
  uint32_t next_region_id_ = 1;
  std::map<uintptr_t, Region*> by_addr_;
  std::map<uint32_t, std::unique_ptr<Region>> by_id_;
  struct dimmap_stats st_{};
};

}  // namespace dimmap::detail::pagecache
