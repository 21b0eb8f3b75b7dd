// pagecache_engine.cpp - the DI-MMAP policy over the kernel's own page cache
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
//              (fault count bumped, back to the primary or hot FIFO).
//   leaving    pages at the head of the eviction queue that were not touched leave the page
//              cache: dirty ones are handed to writeback first (sync_file_range), then
//              posix_fadvise(POSIX_FADV_DONTNEED) drops them; a page still being written is
//              dropped by a later round.
// Between two scans the mapped pages may exceed the buffer by the faults of one scan interval
// (at most 1/64 of the buffer). Writes, msync durability and I/O errors (SIGBUS on a failed
// read, EIO from msync) are the kernel's. The PerMA latency model needs the userfaultfd
// engine, which sees every miss.
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "backing_file.hpp"
#include "c_boundary.hpp"
#include "engine.hpp"
#include "log.hpp"
#include "uffd_sys.hpp"

extern "C" {
#include "dimmap_policy.h"
}

namespace dimmap::detail {

namespace {

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

constexpr unsigned kRegionShift = 36;  // policy key = region id << 36 | page index
constexpr auto kPollInterval = std::chrono::milliseconds(1);
constexpr uint64_t kWriteCluster = 16;  // pages: a leaving page is written with its unmapped neighbours in these

uint64_t process_faults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_minflt) + static_cast<uint64_t>(ru.ru_majflt);
}

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
  uint64_t checked_round = 0;       // the keeper's last look for a failed writeback, and its answer
  bool failed_this_round = false;
  std::vector<uint64_t> in_fifo;   // bit per page: in the primary or hot FIFO (its PTE may exist)
  bool known(size_t p) const { return in_fifo[p >> 6] >> (p & 63) & 1; }
  void set_known(size_t p, bool on) {
    if (on)
      in_fifo[p >> 6] |= uint64_t{1} << (p & 63);
    else
      in_fifo[p >> 6] &= ~(uint64_t{1} << (p & 63));
  }
};

class PageCacheEngine final : public Engine {
 public:
  explicit PageCacheEngine(const dimmap_config& cfg) : cfg_(cfg), zaps_(MADV_DONTNEED) {}
  ~PageCacheEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      served_cv_.notify_all();
    }
    cv_.notify_all();
    if (keeper_.joinable()) keeper_.join();
    if (pagemap_fd_ >= 0) close(pagemap_fd_);
  }

  int start() {
    page_size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const uint64_t npages = cfg_.buffer_bytes / page_size_;
    const unsigned hot = static_cast<unsigned>(cfg_.hot_fraction * 1000.0 + 0.5);
    const unsigned evict = std::max(1u, static_cast<unsigned>(cfg_.evict_fraction * 1000.0 + 0.5));
    if (dmp_params_init(&par_, static_cast<uint32_t>(npages), std::min(hot, 999u), std::min(evict, 499u),
                        cfg_.evict_batch) != 0)
      return fail(EINVAL, "buffer of %llu pages is too small (minimum %u)", static_cast<unsigned long long>(npages),
                  DMP_MIN_PAGES);
    pages_.resize(par_.npages);
    buckets_.resize(par_.nbuckets);
    dmp_init(&policy_, &par_, pages_.data(), buckets_.data());
    batch_.resize(par_.batch);
    st_.buffer_pages = par_.npages;
    scan_after_ = std::max<uint64_t>(par_.batch, par_.npages / 64);
    pagemap_fd_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pagemap_fd_ < 0) return fail(errno, "cannot open /proc/self/pagemap: %s", std::strerror(errno));
    PmScanArg probe{};
    probe.size = sizeof probe;
    if (ioctl(pagemap_fd_, kPagemapScan, &probe) < 0 && errno == ENOTTY)
      return fail(ENOTSUP, "DIMMAP_ENGINE=pagecache needs PAGEMAP_SCAN (Linux 6.7 or later)");
    try {
      keeper_ = std::thread([this] { keep(); });
    } catch (const std::system_error& e) {
      return fail(e.code().value(), "cannot start the page keeper thread: %s", e.what());
    }
    log(LogLevel::info, "pagecache engine: %u pages (%u hot, %u eviction queue, batch %u), scan every %llu faults",
        par_.npages, par_.hot_cap, par_.evict_pages, par_.batch, static_cast<unsigned long long>(scan_after_));
    return 0;
  }

  int map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) override {
    auto r = std::make_unique<Region>();
    if (int rc = r->file.open(fd, length, prot, flags, offset, false); rc < 0) return rc;
    const char* path = r->file.path().c_str();
    r->length = (length + page_size_ - 1) / page_size_ * page_size_;
    r->npages = r->length / page_size_;
    r->file_offset = static_cast<uint64_t>(offset);
    r->writable = (prot & PROT_WRITE) && (flags & MAP_SHARED);
    if (r->npages >= (1ull << kRegionShift)) return fail(EFBIG, "dimmap_mmap('%s'): mapping too large", path);
    r->in_fifo.assign((r->npages + 63) / 64, 0);
    const int keep_flags = flags & (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_FIXED_NOREPLACE);
    void* a = mmap(hint, length, prot, keep_flags, r->file.buffered_fd(), offset);
    if (a == MAP_FAILED) return fail(errno, "dimmap_mmap('%s'): mmap failed: %s", path, std::strerror(errno));
    r->addr = static_cast<char*>(a);
    if (r->writable) {
      const std::string self = "/proc/self/fd/" + std::to_string(r->file.buffered_fd());
      r->writeback_fd = ::open(self.c_str(), O_RDWR | O_CLOEXEC);
      if (r->writeback_fd < 0) {
        const int e = errno;
        munmap(a, length);
        return fail(e, "dimmap_mmap('%s'): cannot reopen it for writeback: %s", path, std::strerror(e));
      }
    }
    // The buffer decides what stays, and reads only the faulting page (no read-around); like
    // the userfaultfd engine's, the mapping is not inherited by fork().
    madvise(r->addr, r->length, MADV_RANDOM);
    madvise(r->addr, r->length, MADV_DONTFORK);
    std::unique_lock<std::shared_mutex> lock(regions_mu_);
    r->id = next_region_id_++;
    *out = r->addr;
    by_addr_[reinterpret_cast<uintptr_t>(r->addr)] = r.get();
    by_id_[r->id] = std::move(r);
    return 0;
  }

  int unmap(void* addr, size_t length) override {
    std::unique_lock<std::shared_mutex> lock(regions_mu_);
    auto it = by_addr_.find(reinterpret_cast<uintptr_t>(addr));
    if (it == by_addr_.end()) return fail(EINVAL, "dimmap_munmap(%p): not the start of a dimmap mapping", addr);
    Region* r = it->second;
    if ((length + page_size_ - 1) / page_size_ != r->npages)
      return fail(EINVAL, "dimmap_munmap(%p): length %zu does not match the mapping (%zu bytes): unmap it whole", addr,
                  length, r->length);
    if (int err = write_back(r, 0, r->npages, MS_SYNC))
      return fail(err, "dimmap_munmap('%s'): writeback failed (%s); the mapping stays intact", r->file.path().c_str(),
                  std::strerror(err));
    {
      std::lock_guard<std::mutex> policy(mu_);
      scan();  // the mapping's last misses count before it goes
    }
    apply();
    munmap(r->addr, r->length);
    {
      std::lock_guard<std::mutex> policy(mu_);
      forget(r, 0, r->npages);
    }
    // The buffer's pages go with the mapping, as the userfaultfd engine's memfd does.
    posix_fadvise(r->file.buffered_fd(), static_cast<off_t>(r->file_offset), static_cast<off_t>(r->length),
                  POSIX_FADV_DONTNEED);
    if (r->writeback_fd >= 0) close(r->writeback_fd);
    by_addr_.erase(it);
    by_id_.erase(r->id);
    return 0;
  }

  int sync(void* addr, size_t length, int flags) override {
    std::shared_lock<std::shared_mutex> lock(regions_mu_);
    Region* r = region_by_addr(reinterpret_cast<uintptr_t>(addr));
    if (!r) return fail(ENOMEM, "dimmap_msync(%p): not in a dimmap mapping", addr);
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr) / page_size_ * page_size_;
    const size_t first = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
    const size_t end = std::min(r->npages, (reinterpret_cast<uintptr_t>(addr) + length - reinterpret_cast<uintptr_t>(r->addr) +
                                            page_size_ - 1) / page_size_);
    if (first >= end) return 0;
    char* from = r->addr + first * page_size_;
    const size_t len = (end - first) * page_size_;
    if (int err = write_back(r, first, end, (flags & MS_ASYNC) ? MS_ASYNC : MS_SYNC))
      return fail(err, "dimmap_msync('%s'): writeback failed: %s; the data stays in the buffer",
                  r->file.path().c_str(), std::strerror(err));
    if (flags & MS_INVALIDATE) {
      madvise(from, len, MADV_DONTNEED);
      {
        std::lock_guard<std::mutex> policy(mu_);
        forget(r, first, end);
      }
      posix_fadvise(r->file.buffered_fd(), static_cast<off_t>(r->file_offset + first * page_size_),
                    static_cast<off_t>(len), POSIX_FADV_DONTNEED);
    }
    return 0;
  }

  // Needs no policy lock: threads prefetching never wait for the keeper's scans.
  int prefetch(const struct iovec* ranges, size_t n) override {
    std::shared_lock<std::shared_mutex> lock(regions_mu_);
    // At most a quarter of the buffer per call: read-ahead must not flush what is in use.
    size_t budget = size_t(par_.npages / 4) * page_size_;
    for (size_t i = 0; i < n && budget > 0; ++i) {
      Region* r = region_by_addr(reinterpret_cast<uintptr_t>(ranges[i].iov_base));
      if (!r) return fail(ENOMEM, "dimmap_prefetch(%p): not in a dimmap mapping", ranges[i].iov_base);
      const uintptr_t a = reinterpret_cast<uintptr_t>(ranges[i].iov_base) / page_size_ * page_size_;
      const uintptr_t region_end = reinterpret_cast<uintptr_t>(r->addr) + r->length;
      const size_t len = std::min({ranges[i].iov_len, budget, static_cast<size_t>(region_end - a)});
      madvise(reinterpret_cast<void*>(a), len, MADV_WILLNEED);  // starts the reads, does not wait
      budget -= len;
      prefetched_.fetch_add(len / page_size_, std::memory_order_relaxed);
    }
    return 0;
  }

  // Counts what happened until now: the keeper runs a round for the caller first.
  void stats(struct dimmap_stats* out) const override {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t ticket = ++requested_;
    cv_.notify_all();
    served_cv_.wait(lock, [&] { return served_ >= ticket || stop_; });
    *out = st_;
    // Misses as the keeper found them: pages that entered the buffer. Recoveries are not
    // faults (the kernel maps the page again; the keeper notices). Writebacks are the
    // kernel's and are not counted.
    out->faults = st_.misses;
    out->prefetched = prefetched_.load(std::memory_order_relaxed);
    out->hot_promotions = policy_.cnt.hot_promotions;
    out->resident_pages = dmp_resident(&policy_) + policy_.leaving;
  }

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
  Region* region_by_addr(uintptr_t a) const {
    auto it = by_addr_.upper_bound(a);
    if (it == by_addr_.begin()) return nullptr;
    --it;
    Region* r = it->second;
    return a < reinterpret_cast<uintptr_t>(r->addr) + r->length ? r : nullptr;
  }

  // msync of pages [first, end) of r, and any writeback of r that failed since the last
  // call (the kernel's own, or one of a page leaving the buffer): 0 or the errno. The kernel
  // marks a page whose write failed clean and does not say which one it was, so after any
  // failure every cached page of the mapping is made dirty again: the data stays, and the
  // next msync writes it again.
  int write_back(Region* r, size_t first, size_t end, int how) {
    if (!r->writable) return 0;
    int err = msync(r->addr + first * page_size_, (end - first) * page_size_, how) == 0 ? 0 : errno;
    // The keeper's descriptor saw the same failures: they are answered here.
    if (sync_file_range(r->writeback_fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE) != 0 && !err) err = errno;
    if (int evicting = r->write_error.exchange(0); evicting && !err) err = evicting;
    if (err) keep_dirty(r, 0, r->npages);
    return err;
  }

  // Marks the cached pages of [first, end) of r dirty without changing them.
  void keep_dirty(Region* r, size_t first, size_t end) {
    std::vector<unsigned char> cached(end - first);
    if (mincore(r->addr + first * page_size_, (end - first) * page_size_, cached.data()) != 0) return;
    for (size_t p = first; p < end; ++p)
      if (cached[p - first] & 1) store_same(reinterpret_cast<uint64_t*>(r->addr + p * page_size_));
  }

  // A write of a word's own value that no concurrent store can be lost to: a locked add of
  // zero (written out, because compilers turn an atomic add of zero into a plain load).
  static void store_same(uint64_t* word) {
#if defined(__x86_64__)
    asm volatile("lock addq $0, %0" : "+m"(*word) : : "memory");
#else
    uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(word, &v, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#endif
  }

  // Takes pages [first, end) of r out of the policy (both locks held).
  void forget(Region* r, size_t first, size_t end) {
    const uint64_t lo = uint64_t{r->id} << kRegionShift | first, hi = uint64_t{r->id} << kRegionShift | end;
    for (uint32_t s = 0; s < par_.npages; ++s) {
      const dmp_page& p = pages_[s];
      if (p.state == DMP_FREE || p.key < lo || p.key >= hi) continue;
      dmp_remove(&policy_, s);
    }
    for (size_t p = first; p < end; ++p) r->set_known(p, false);
  }

  // The keeper thread: scans when enough faults happened since the last scan.
  void keep() {
    pthread_setname_np(pthread_self(), "dimmap-keeper");
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t seen = process_faults();
    while (!stop_) {
      cv_.wait_for(lock, kPollInterval);
      if (stop_) break;
      const uint64_t now = process_faults();
      const uint64_t ticket = requested_;
      if (now - seen < scan_after_ && ticket == served_) continue;
      seen = now;
      lock.unlock();
      {
        // Lock order: regions, then policy. The unmaps and drops need only the regions.
        std::shared_lock<std::shared_mutex> regions(regions_mu_);
        {
          std::lock_guard<std::mutex> policy(mu_);
          scan();
        }
        apply();
      }
      lock.lock();
      served_ = ticket;
      served_cv_.notify_all();
    }
  }

  // One round (both locks held): finds pages mapped since the last scan, runs the policy, and
  // queues the unmaps and drops it decided.
  void scan() {
    for (auto& [id, region] : by_id_) {
      Region* r = region.get();
      fresh_.clear();
      collect_mapped(r);
      // Recoveries first: a demoted page touched again must not be chosen to leave.
      for (size_t p : fresh_) {
        const uint32_t s = dmp_lookup(&policy_, uint64_t{r->id} << kRegionShift | p);
        if (s == DMP_NIL) continue;
        if (pages_[s].state == DMP_EVICT) {
          st_.recoveries++;
          demoted(dmp_recover(&policy_, s));
        }
        r->set_known(p, true);
      }
      for (size_t p : fresh_) {
        if (r->known(p)) continue;
        const uint64_t key = uint64_t{r->id} << kRegionShift | p;
        uint32_t s = dmp_alloc(&policy_, key);
        while (s == DMP_NIL && evict_batch()) s = dmp_alloc(&policy_, key);
        if (s == DMP_NIL) break;  // everything left is busy: the next round takes the rest
        st_.misses++;
        st_.bytes_read += page_size_;
        r->set_known(p, true);
        demoted(dmp_loaded(&policy_, s));
      }
    }
    while (dmp_wants_eviction(&policy_) && evict_batch()) {
    }
  }

  // Appends to fresh_ the pages of r mapped now but not in a FIFO (both locks held).
  void collect_mapped(Region* r) {
    const uint64_t base = reinterpret_cast<uintptr_t>(r->addr);
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.start = base;
    arg.end = base + r->length;
    arg.vec = reinterpret_cast<uintptr_t>(vec_);
    arg.vec_len = sizeof vec_ / sizeof vec_[0];
    arg.category_mask = kPageIsPresent;
    arg.return_mask = kPageIsPresent;
    while (arg.start < arg.end) {
      const int n = ioctl(pagemap_fd_, kPagemapScan, &arg);
      if (n < 0) {
        log(LogLevel::warn, "PAGEMAP_SCAN failed: %s", std::strerror(errno));
        return;
      }
      for (int i = 0; i < n; ++i)
        for (uint64_t a = vec_[i].start; a < vec_[i].end; a += page_size_) {
          const size_t p = (a - base) / page_size_;
          if (!r->known(p)) fresh_.push_back(p);
        }
      if (arg.walk_end <= arg.start) break;
      arg.start = arg.walk_end;
    }
  }

  // A page pushed into the eviction queue: its PTE goes in the next bulk unmap.
  void demoted(uint32_t s) {
    if (s == DMP_NIL) return;
    Region* r = by_id_.at(static_cast<uint32_t>(pages_[s].key >> kRegionShift)).get();
    const size_t p = pages_[s].key & ((uint64_t{1} << kRegionShift) - 1);
    r->set_known(p, false);
    zaps_.add(r->addr + p * page_size_, page_size_);
  }

  // Moves a batch from the head of the eviction queue out of the buffer (both locks held).
  bool evict_batch() {
    const uint32_t n = dmp_evict_batch(&policy_, batch_.data(), static_cast<uint32_t>(batch_.size()));
    if (n == 0) return false;
    st_.eviction_batches++;
    for (uint32_t i = 0; i < n; ++i) {
      const dmp_page& pg = pages_[batch_[i]];
      const uint32_t id = static_cast<uint32_t>(pg.key >> kRegionShift);
      const uint64_t page = pg.key & ((uint64_t{1} << kRegionShift) - 1);
      leaving_.push_back({id, page});
      if (by_id_.at(id)->writable) add_write_extent(id, page);
    }
    for (uint32_t i = 0; i < n; ++i) {
      dmp_release(&policy_, batch_[i]);
      st_.evictions++;
    }
    return true;
  }

  // A leaving page of a writable mapping is written together with its neighbours in its
  // aligned cluster that are unmapped too (in the eviction queue or leaving), as the kernel's
  // writeback of a file in page order merges them: they are clean when their turn comes.
  // Mapped neighbours stay out: cleaning a mapped page costs a TLB shootdown.
  void add_write_extent(uint32_t id, uint64_t page) {
    const uint64_t lo = page / kWriteCluster * kWriteCluster, hi = lo + kWriteCluster;
    auto unmapped = [&](uint64_t q) {
      const uint32_t s = dmp_lookup(&policy_, uint64_t{id} << kRegionShift | q);
      return s != DMP_NIL && (pages_[s].state == DMP_EVICT || pages_[s].state == DMP_LEAVING);
    };
    uint64_t first = page, last = page;
    while (first > lo && unmapped(first - 1)) --first;
    while (last + 1 < hi && unmapped(last + 1)) ++last;
    for (uint64_t q = first; q <= last; ++q) to_write_.push_back({id, q});
  }

  // Unmaps the demoted pages, then drops the leaving ones from the page cache (the regions
  // lock held, so none is unmapped meanwhile; the lists are the keeper's own). A
  // leaving page of a writable mapping is handed to writeback first and dropped a round
  // later, once clean (the kernel cannot drop a dirty page).
  void apply() {
    ++round_;
    to_runs(&leaving_, &runs_);
    to_runs(&to_write_, &write_runs_);
    // Leaving pages lose their PTEs again too: the kernel's fault-around may have mapped them
    // beside a neighbour's fault, and a mapped page cannot be dropped (a failed drop also
    // costs the kernel a drain of every CPU's LRU cache).
    for (const std::vector<Run>* list : {&written_, &runs_})
      for (const Run& run : *list)
        if (auto it = by_id_.find(run.region_id); it != by_id_.end())
          zaps_.add(it->second->addr + run.first * page_size_, run.pages * page_size_);
    zaps_.flush();
    for (const Run& run : written_) drop(run, false);
    written_.clear();
    for (const Run& run : write_runs_)
      if (auto it = by_id_.find(run.region_id); it != by_id_.end()) {
        const Region* r = it->second.get();
        sync_file_range(r->writeback_fd, static_cast<off_t>(r->file_offset + run.first * page_size_),
                        static_cast<off_t>(run.pages * page_size_), SYNC_FILE_RANGE_WRITE);
      }
    for (const Run& run : runs_) drop(run, true);
  }

  // Whether a writeback of r's file failed since the last look (once per round and mapping;
  // the answer is kept for the rest of the round). Then every cached page of r is made dirty
  // again (the kernel marks a page whose write failed clean and does not say which), nothing
  // of r leaves this round, and the next msync reports the error.
  bool writeback_failed(Region* r) {
    if (r->checked_round == round_) return r->failed_this_round;
    r->checked_round = round_;
    // A wait on a range nothing is written in returns at once, with the file's error.
    const off_t past_end = static_cast<off_t>(r->file_offset + r->length);
    r->failed_this_round =
        sync_file_range(r->writeback_fd, past_end, static_cast<off_t>(page_size_), SYNC_FILE_RANGE_WAIT_BEFORE) != 0;
    if (r->failed_this_round) {
      r->write_error.store(errno == 0 ? EIO : errno);
      keep_dirty(r, 0, r->npages);
    }
    return r->failed_this_round;
  }

  // Sorts (region id, page) pairs into runs of adjacent pages (one call each) and clears them.
  static void to_runs(std::vector<std::pair<uint32_t, uint64_t>>* pages, std::vector<Run>* runs) {
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


  void drop(const Run& run, bool first_time) {
    auto it = by_id_.find(run.region_id);
    if (it == by_id_.end()) return;  // unmapped meanwhile: its pages went with it
    Region* r = it->second.get();
    const int fd = r->writable ? r->writeback_fd : r->file.buffered_fd();
    const off_t off = static_cast<off_t>(r->file_offset + run.first * page_size_);
    const off_t len = static_cast<off_t>(run.pages * page_size_);
    if (!first_time && r->writable && writeback_failed(r)) return;
    if (first_time && r->writable) {  // being written (apply): dropped next round, once clean
      written_.push_back(run);
      return;
    }
    posix_fadvise(fd, off, len, POSIX_FADV_DONTNEED);
  }

  const dimmap_config cfg_;
  size_t page_size_ = 4096;
  dmp_params par_{};
  dmp_policy policy_{};
  std::vector<dmp_page> pages_;
  std::vector<dmp_bucket> buckets_;
  std::vector<uint32_t> batch_;
  uint64_t scan_after_ = 64;
  int pagemap_fd_ = -1;
  PageRegion vec_[4096];
  std::vector<size_t> fresh_;
  std::vector<std::pair<uint32_t, uint64_t>> leaving_;   // (region id, page) to drop this round
  std::vector<std::pair<uint32_t, uint64_t>> to_write_;  // (region id, page) to write this round
  std::vector<Run> write_runs_;  // to_write_ as runs
  uint64_t round_ = 0;           // the keeper's rounds (apply calls)
  std::vector<Run> runs_;     // this round's leaving pages, as runs of adjacent pages
  std::vector<Run> written_;  // handed to writeback last round: dropped this round
  MadviseBatch zaps_;

  // regions_mu_ guards the region tables (unique for map and unmap); mu_ the policy, the
  // stats and the regions' page bits. Application threads touching pages take neither.
  mutable std::shared_mutex regions_mu_;
  mutable std::mutex mu_;
  std::atomic<uint64_t> prefetched_{0};
  mutable std::condition_variable cv_;          // wakes the keeper
  mutable std::condition_variable served_cv_;   // a round asked for by stats() is done
  mutable uint64_t requested_ = 0, served_ = 0;  // rounds asked for and done (tickets)
  std::thread keeper_;
  bool stop_ = false;
  uint32_t next_region_id_ = 1;
  std::map<uintptr_t, Region*> by_addr_;
  std::map<uint32_t, std::unique_ptr<Region>> by_id_;
  struct dimmap_stats st_{};
};

}  // namespace

std::unique_ptr<Engine> make_pagecache_engine(const dimmap_config& config, int* err) {
  auto engine = std::make_unique<PageCacheEngine>(config);
  if (int rc = engine->start(); rc < 0) {
    *err = rc;
    return nullptr;
  }
  return engine;
}

}  // namespace dimmap::detail
