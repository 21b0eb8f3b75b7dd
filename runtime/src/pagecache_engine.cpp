// pagecache_engine.cpp - the pagecache engine's setup and the application's calls (map,
// unmap, msync, prefetch, stats). How it works: pagecache_engine.hpp.
#include "pagecache_engine.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "log.hpp"

namespace dimmap::detail {

namespace pagecache {

bool cache_state(int fd, uint64_t off, uint64_t len, Cachestat* out) {
  CachestatRange range{off, len};
  *out = Cachestat{};
  return syscall(kSysCachestat, fd, &range, out, 0) == 0;
}

uint64_t dirty_pages(int fd, uint64_t off, uint64_t len) {
  Cachestat cs;
  return cache_state(fd, off, len, &cs) ? cs.nr_dirty : 0;
}

uint64_t read_into_cache(int fd, uint64_t off, uint64_t len, size_t page_size) {
  constexpr uint64_t kChunk = 128 << 10;
  Cachestat cs;
  const uint64_t pages = (len + page_size - 1) / page_size;
  const uint64_t missing = cache_state(fd, off, len, &cs) ? pages - std::min(pages, cs.nr_cache) : pages;
  if (missing == 0) return 0;
  for (uint64_t at = off; at < off + len; at += kChunk)
    posix_fadvise(fd, static_cast<off_t>(at), static_cast<off_t>(std::min(kChunk, off + len - at)), POSIX_FADV_WILLNEED);
  return missing;
}

int PageCacheEngine::start() {
  page_size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (int rc = policy_params_for(cfg_, page_size_, &par_); rc < 0) return rc;
  pages_.resize(par_.npages);
  buckets_.resize(par_.nbuckets);
  dmp_init(&policy_, &par_, pages_.data(), buckets_.data());
  batch_.resize(par_.batch);
  st_.buffer_pages = par_.npages;
  scan_after_ = std::max<uint64_t>(1, par_.npages / 64);
  // Read-ahead sits in the page cache beside the buffer until touched: at most 1/64 of it per
  // pass, as in the userfaultfd engine (buffers under 2 MiB do not read ahead).
  max_window_ = std::min<uint64_t>(kMaxReadAheadPages, par_.npages / 64);
  if (cfg_.readahead_pages == 0 || max_window_ < kStreamMinRun) max_window_ = 0;
  first_window_ = std::min<uint64_t>(cfg_.readahead_pages, max_window_);
  if (const char* why = pagecache_engine_unsupported()) return fail(ENOTSUP, "%s", why);
  watch_memory_limit();
  pagemap_fd_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap_fd_ < 0) return fail(errno, "cannot open /proc/self/pagemap: %s", std::strerror(errno));
  no_fault_around_fd_ = uffd_open_wp_async();
  if (no_fault_around_fd_ < 0)
    log(LogLevel::info, "pagecache engine: no userfaultfd with asynchronous write-protect (%s): the kernel's "
        "fault-around stays on, and demoted pages beside a fault count as touched", std::strerror(-no_fault_around_fd_));
  try {
    keeper_ = std::thread([this] { keep(); });
  } catch (const std::system_error& e) {
    return fail(e.code().value(), "cannot start the page keeper thread: %s", e.what());
  }
  log(LogLevel::info, "pagecache engine: %u pages (%u hot, %u eviction queue, batch %u), scan every %llu faults",
      par_.npages, par_.hot_cap, par_.evict_pages, par_.batch, static_cast<unsigned long long>(scan_after_));
  return 0;
}

int PageCacheEngine::map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) {
  auto r = std::make_unique<Region>();
  if (int rc = r->file.open(fd, length, prot, flags, offset, false); rc < 0) return rc;
  const char* path = r->file.path().c_str();
  r->length = (length + page_size_ - 1) / page_size_ * page_size_;
  r->npages = r->length / page_size_;
  r->file_offset = static_cast<uint64_t>(offset);
  r->writable = (prot & PROT_WRITE) && (flags & MAP_SHARED);
  if (r->npages >= (1ull << kRegionShift)) return fail(EFBIG, "dimmap_mmap('%s'): mapping too large", path);
  r->in_fifo.resize(r->npages);
  r->unheld.resize(r->npages);
  int keep_flags = flags & (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_FIXED_NOREPLACE);
  // A read-only mapping of a file the program opened read-only is mapped private (the same
  // page-cache pages) so that it may be registered to turn off fault-around: a shared mapping
  // of a file opened read-only may not be. The program could not write that file through any
  // mapping. Where its descriptor is open for writing the mapping stays shared, so that a
  // mapping made writable later (mprotect) fails as before instead of writing private copies;
  // it keeps fault-around.
  if (no_fault_around_fd_ >= 0 && !(prot & PROT_WRITE) && r->file.app_read_only())
    keep_flags = (keep_flags & ~MAP_SHARED) | MAP_PRIVATE;
  void* a = mmap(hint, length, prot, keep_flags, r->file.buffered_fd(), offset);
  if (a == MAP_FAILED) return fail(errno, "dimmap_mmap('%s'): mmap failed: %s", path, std::strerror(errno));
  r->addr = static_cast<char*>(a);
  if (no_fault_around_fd_ >= 0) {
    if (int rc = uffd_register_wp_only(no_fault_around_fd_, a, r->length); rc < 0)
      log(LogLevel::info, "dimmap_mmap('%s'): fault-around stays on (userfaultfd registration: %s)", path,
          std::strerror(-rc));
  }
  if (r->writable) {
    const std::string self = "/proc/self/fd/" + std::to_string(r->file.buffered_fd());
    r->writeback_fd = ::open(self.c_str(), O_RDWR | O_CLOEXEC);
    if (r->writeback_fd < 0) {
      const int e = errno;
      munmap(a, length);
      return fail(e, "dimmap_mmap('%s'): cannot reopen it for writeback: %s", path, std::strerror(e));
    }
  }
  // The buffer starts empty, as the userfaultfd engine's does: what others left cached goes.
  // A file's writer (or a reader with read-ahead) leaves it in large folios, of which one fault
  // maps up to 512 pages and a drop cannot take one page; the engine's own faults cache single
  // pages. A page dirty or being written cannot be dropped (here, nor when it leaves the
  // buffer): what was written to the file before it was mapped (a file just made) is written
  // first. Pages mapped elsewhere stay.
  Cachestat cached;
  const int buffered = r->file.buffered_fd();
  if (cache_state(buffered, r->file_offset, r->length, &cached) && cached.nr_cache > 0) {
    if (cached.nr_dirty + cached.nr_writeback > 0)
      sync_file_range(buffered, offset, static_cast<off_t>(r->length),
                      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    posix_fadvise(buffered, offset, static_cast<off_t>(r->length), POSIX_FADV_DONTNEED);
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

int PageCacheEngine::unmap(void* addr, size_t length) {
  std::unique_lock<std::shared_mutex> lock(regions_mu_);
  auto it = by_addr_.find(reinterpret_cast<uintptr_t>(addr));
  if (it == by_addr_.end()) return fail(EINVAL, "dimmap_munmap(%p): not the start of a dimmap mapping", addr);
  Region* r = it->second;
  if (int rc = check_whole_mapping(addr, length, page_size_, r->npages, r->length); rc < 0) return rc;
  if (int err = write_back(r, 0, r->npages, MS_SYNC))
    return fail(err, "dimmap_munmap('%s'): writeback failed (%s); the mapping stays intact", r->file.path().c_str(),
                std::strerror(err));
  {
    std::lock_guard<std::mutex> policy(mu_);
    scan(true);  // the mapping's last misses count before it goes
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

int PageCacheEngine::sync(void* addr, size_t length, int flags) {
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

int PageCacheEngine::prefetch(const struct iovec* ranges, size_t n) {
  std::shared_lock<std::shared_mutex> lock(regions_mu_);
  // At most a quarter of the buffer per call: read-ahead must not flush what is in use.
  size_t budget = size_t(par_.npages / 4) * page_size_;
  for (size_t i = 0; i < n && budget > 0; ++i) {
    Region* r = region_by_addr(reinterpret_cast<uintptr_t>(ranges[i].iov_base));
    if (!r) return fail(ENOMEM, "dimmap_prefetch(%p): not in a dimmap mapping", ranges[i].iov_base);
    const uintptr_t a = reinterpret_cast<uintptr_t>(ranges[i].iov_base) / page_size_ * page_size_;
    const uintptr_t region_end = reinterpret_cast<uintptr_t>(r->addr) + r->length;
    const size_t len = std::min({ranges[i].iov_len, budget, static_cast<size_t>(region_end - a)});
    const uint64_t off = r->file_offset + (a - reinterpret_cast<uintptr_t>(r->addr));
    prefetched_.fetch_add(read_into_cache(r->file.buffered_fd(), off, len, page_size_), std::memory_order_relaxed);
    budget -= len;
  }
  return 0;
}

void PageCacheEngine::stats(struct dimmap_stats* out) const {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = ++requested_;
  cv_.notify_all();
  served_cv_.wait(lock, [&] { return served_ >= ticket || stop_; });
  *out = st_;
  // Misses as the keeper found them: pages that entered the buffer. Recoveries are not
  // faults (the kernel maps the page again; the keeper notices).
  out->faults = st_.misses;
  out->prefetched = prefetched_.load(std::memory_order_relaxed);
  out->writebacks = writebacks_.load(std::memory_order_relaxed);
  out->write_ios = write_ios_.load(std::memory_order_relaxed);
  out->bytes_written = out->writebacks * page_size_;
  out->hot_promotions = policy_.cnt.hot_promotions;
  out->resident_pages = dmp_resident(&policy_) + policy_.leaving;
  lock.unlock();
  std::shared_lock<std::shared_mutex> regions(regions_mu_);
  out->dirty_pages = 0;
  for (const auto& [id, r] : by_id_)
    if (r->writable) out->dirty_pages += dirty_pages(r->file.buffered_fd(), r->file_offset, r->length);
}

Region* PageCacheEngine::region_by_addr(uintptr_t a) const { return mapping_containing(by_addr_, a); }

int PageCacheEngine::write_back(Region* r, size_t first, size_t end, int how) {
  if (!r->writable) return 0;
  const uint64_t off = r->file_offset + first * page_size_, len = (end - first) * page_size_;
  int err = 0;
  {
    std::lock_guard<std::mutex> counting(count_mu_);
    const uint64_t dirty = dirty_pages(r->file.buffered_fd(), off, len);
    err = msync(r->addr + first * page_size_, (end - first) * page_size_, how) == 0 ? 0 : errno;
    count_writeback(dirty, dirty ? dirty_pages(r->file.buffered_fd(), off, len) : 0);
  }
  // The keeper's descriptor saw the same failures: they are answered here, and the pages are
  // dirty again before the keeper may drop one (drop_mu_): the keeper looks for failures on
  // that descriptor, and would not see one taken here.
  std::lock_guard<std::mutex> dropping(drop_mu_);
  if (sync_file_range(r->writeback_fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE) != 0 && !err) err = errno;
  if (int evicting = r->write_error.exchange(0); evicting && !err) err = evicting;
  if (err) keep_dirty(r, 0, r->npages);
  return err;
}

void PageCacheEngine::keep_dirty(Region* r, size_t first, size_t end) {
  std::vector<unsigned char> cached(end - first);
  if (mincore(r->addr + first * page_size_, (end - first) * page_size_, cached.data()) != 0) return;
  for (size_t p = first; p < end; ++p)
    if (cached[p - first] & 1) store_same(reinterpret_cast<uint64_t*>(r->addr + p * page_size_));
}

void PageCacheEngine::store_same(uint64_t* word) {
#if defined(__x86_64__)
  asm volatile("lock addq $0, %0" : "+m"(*word) : : "memory");
#else
  uint64_t v = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(word, &v, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

void PageCacheEngine::forget(Region* r, size_t first, size_t end) {
  const uint64_t lo = page_key(r->id, first), hi = page_key(r->id, end);
  for (uint32_t s = 0; s < par_.npages; ++s) {
    const dmp_page& p = pages_[s];
    if (p.state == DMP_FREE || p.key < lo || p.key >= hi) continue;
    dmp_remove(&policy_, s);
  }
  for (size_t p = first; p < end; ++p) r->set_known(p, false);
}

}  // namespace pagecache

const char* pagecache_engine_unsupported() {
  static const char* const why = [] () -> const char* {
    const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;  // start() reports it
    const char* reason = nullptr;
    pagecache::PmScanArg probe{};
    probe.size = sizeof probe;
    pagecache::Cachestat cs;
    if (ioctl(fd, pagecache::kPagemapScan, &probe) < 0 && errno == ENOTTY)
      reason = "DIMMAP_ENGINE=pagecache needs PAGEMAP_SCAN (Linux 6.7 or later)";
    else if (!pagecache::cache_state(fd, 0, 0, &cs) && errno == ENOSYS)
      reason = "DIMMAP_ENGINE=pagecache needs cachestat (Linux 6.5 or later)";
    ::close(fd);
    return reason;
  }();
  return why;
}

std::unique_ptr<Engine> make_pagecache_engine(const dimmap_config& config, int* err) {
  return make_started<pagecache::PageCacheEngine>(config, err);
}

}  // namespace dimmap::detail
