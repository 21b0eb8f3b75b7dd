// uffd_engine.cpp - the user-space engine's setup, teardown and application-side calls
// (map, unmap, prefetch, discard, stats). How it works: uffd_engine.hpp.
#include "uffd_engine.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "c_boundary.hpp"
#include "log.hpp"
#include "perma.hpp"

namespace dimmap::detail {

thread_local UffdEngine::ServiceThread* UffdEngine::current_ = nullptr;

namespace {

// One service thread per two CPUs, at least two (so a store or wake-up in one overlaps the
// next fault in the other) and at most eight (they share one lock for the policy).
unsigned service_thread_count(unsigned configured) {
  if (configured) return std::min(configured, 64u);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<unsigned>(std::clamp<long>(cpus / 2, 2, 8));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// setup and teardown

int UffdEngine::start() {
  if (int rc = policy_params_for(cfg_, page_size_, &par_); rc < 0) return rc;
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
  // The staging pools are populated now, like the buffer's other staging: the engine's memory
  // is fixed from the start, so a budget measured on a short run holds for a long one. Each
  // is a share of the buffer, at least min_pages and at most max_bytes (min_pages wins).
  auto pool_pages = [&](size_t share, size_t min_pages, size_t max_bytes) {
    return std::clamp<size_t>(par_.npages / share, min_pages, std::max(min_pages, max_bytes / page_size_));
  };
  if (int rc = run_staging_.init(pool_pages(kRunStagingShare, kMinRunStaging, kMaxRunStagingBytes), page_size_); rc < 0)
    return fail(-rc, "cannot allocate read-ahead staging: %s", std::strerror(-rc));
  if (int rc = write_staging_.init(pool_pages(kWriteStagingShare, kMaxWriteRun, kMaxWriteStagingBytes), page_size_);
      rc < 0)
    return fail(-rc, "cannot allocate writeback staging: %s", std::strerror(-rc));
  runs_.resize(cfg_.io_depth);  // a run holds one of the io_depth reads in flight
  for (size_t i = runs_.size(); i-- > 0;) runs_free_.push_back(static_cast<uint32_t>(i));
  st_.buffer_pages = par_.npages;
  // At most 1/64 of the buffer: read ahead where faults only look sequential (a BFS level's
  // sparse sweep) must not push out what is in use (1/8 cost a 4M-buffer search ~7%).
  ra_max_ = std::min<size_t>(cfg_.readahead_pages, par_.npages / 64);
  if (ra_max_ < kMinReadAhead) ra_max_ = 0;

  touched_.reserve(par_.batch);
  uffd_ = uffd_open(&features_, cfg_.in_thread_faults);
  if (uffd_ < 0) return uffd_;
  if (cfg_.perma[0]) {
    if (int rc = parse_perma(cfg_.perma, &perma_); rc < 0) return rc;
    log(LogLevel::info, "PerMA latency model '%s': %.1f us per page alone", cfg_.perma,
        perma_latency_ns(&perma_, 1, page_size_) / 1000.0);
  }
  if (cfg_.in_thread_faults)
    if (int rc = register_in_thread(); rc < 0) return rc;
  if (int rc = page_table_.open(); rc < 0) return rc;
  ctl_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (ctl_fd_ < 0) return fail(errno, "cannot create an eventfd: %s", std::strerror(errno));
  const unsigned threads = service_thread_count(cfg_.service_threads);
  for (unsigned i = 0; i < threads; ++i) {
    auto t = std::make_unique<ServiceThread>();
    int err = 0;
    t->io = make_io_queue(cfg_.io_depth, &err);
    if (!t->io) return err;
    if (cfg_.perma[0]) t->io = with_perma_latency(std::move(t->io), perma_);
    service_.push_back(std::move(t));
  }
  try {
    for (auto& t : service_)
      t->thread = std::thread([this, me = t.get()] { keep_serving("fault service thread", [&] { serve(*me); }); });
  } catch (const std::system_error& e) {
    return fail(e.code().value(), "cannot start the fault service threads: %s", e.what());
  }
  log(LogLevel::info, "uffd engine: %u pages (%u hot, %u eviction queue, batch %u), %s, %u service threads, I/O by %s",
      par_.npages, par_.hot_cap, par_.evict_pages, par_.batch,
      cfg_.in_thread_faults ? "misses filled by the faulting thread" : "misses filled by service threads", threads,
      service_[0]->io->name());
  return 0;
}

UffdEngine::~UffdEngine() {
  if (cfg_.in_thread_faults) unregister_in_thread();
  stop_ = true;
  if (ctl_fd_ >= 0) wake_server();  // every thread sees it: none drains it once stopping
  for (auto& t : service_)
    if (t->thread.joinable()) t->thread.join();
  service_.clear();  // waits for nothing: no regions remain, so nothing is in flight
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
// helpers

Region* UffdEngine::region_by_addr(uintptr_t a) const { return mapping_containing(by_addr_, a); }

// The mapping holding addr (lock held) and the pages [*first, *end) of [addr, addr+length)
// in it; null, with fail() set naming `call`, if addr is in no mapping.
Region* UffdEngine::region_range(void* addr, size_t length, const char* call, size_t* first, size_t* end) const {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  Region* r = region_by_addr(a);
  if (!r) {
    fail(ENOMEM, "%s(%p): not in a dimmap mapping", call, addr);
    return nullptr;
  }
  *first = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
  *end = std::min(r->npages, *first + (length + page_size_ - 1) / page_size_);
  return r;
}

Region* UffdEngine::region_of_slot(uint32_t s) const {
  return by_id_.at(key_region(pages_[s].key));
}

// Lets the threads waiting on [first_page, first_page + npages) of r retry their fault.
void UffdEngine::wake(Region* r, size_t first_page, size_t npages) {
  uffd_wake(uffd_, r->page_addr(first_page, page_size_), npages * page_size_);
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

int UffdEngine::unmap(void* addr, size_t length) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = by_addr_.find(reinterpret_cast<uintptr_t>(addr));
  if (it == by_addr_.end()) return fail(EINVAL, "dimmap_munmap(%p): not the start of a dimmap mapping", addr);
  Region* r = it->second;
  if (int rc = check_whole_mapping(addr, length, page_size_, r->npages, r->length); rc < 0) return rc;
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
      }  // resident pages, victims included, are mapped by the kernel when touched
    }
  }
  if (queued) wake_server();
  return 0;
}

int UffdEngine::discard(void* addr, size_t length) {
  if (reinterpret_cast<uintptr_t>(addr) % page_size_)
    return fail(EINVAL, "dimmap_discard(%p): address not page aligned", addr);
  std::unique_lock<std::mutex> lock(mu_);
  size_t first = 0, end = 0;
  Region* r = region_range(addr, length, "dimmap_discard", &first, &end);
  if (!r) return -ENOMEM;
  io_done_.wait(lock, [r] { return r->loads == 0 && r->writes == 0; });
  for (uint32_t s : slots_in(r, first, end)) {
    if (pages_[s].flags & DMP_F_BUSY) continue;  // an msync is writing it: it stays
    frees_.add(r->alias + page_of_slot(s) * page_size_, page_size_);  // drops the PTEs too
    forget_held(s);
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

std::unique_ptr<Engine> make_uffd_engine(const dimmap_config& config, int* err) {
  return make_started<UffdEngine>(config, err);
}

}  // namespace dimmap::detail
