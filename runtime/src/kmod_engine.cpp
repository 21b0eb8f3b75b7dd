// kmod_engine.cpp - DIMMAP_ENGINE=kmod: mappings served by the dimmap.ko kernel module.
//
// The module owns the buffers (their size is fixed when it is loaded) and the DI-MMAP
// policy; this engine only finds or creates the pseudo-device /dev/dimmapN for the
// application's file or block device and maps it. Linking needs CAP_SYS_ADMIN; without
// it, files an administrator linked beforehand (dimmapctl link PATH) are used as they are.
// Links the engine created itself are removed again when their last mapping goes.
//
// DIMMAP_KMOD_BUFFER picks which of the module's buffers new links use (default 0).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "backing_file.hpp"
#include "engine.hpp"
#include "kmod_client.hpp"
#include "log.hpp"

namespace dimmap::detail {
namespace {

struct KmodRegion {
  size_t length;
  uint64_t offset;  // of the mapping in the file
  uint32_t id;      // /dev/dimmapN
  bool created;     // linked by this engine: unlink after the last mapping
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

class KmodEngine final : public Engine {
 public:
  KmodEngine(int ctl, uint32_t buffer, bool direct_io) : ctl_(ctl), buffer_(buffer), direct_io_(direct_io) {}
  ~KmodEngine() override { close(ctl_); }

  int map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) override;
  int unmap(void* addr, size_t length) override;
  int sync(void* addr, size_t length, int flags) override;
  void stats(struct dimmap_stats* out) const override;
  size_t mapped_regions() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return regions_.size();
  }

 private:
  int find_or_link(int app_fd, const std::string& path, bool direct, dimmap_link_info* info, bool* created);
  int link_new(int app_fd, const std::string& path, bool direct, dimmap_link_info* info);
  bool id_in_use(uint32_t id) const;

  const int ctl_;
  const uint32_t buffer_;
  const bool direct_io_;
  mutable std::mutex mu_;
  std::map<uintptr_t, KmodRegion> regions_;
};

// A private descriptor for the module: as writable as the application's, O_DIRECT if asked
// and possible (the module then reads and writes the device without the page cache).
int reopen_for_link(int app_fd, bool direct) {
  const int acc = fcntl(app_fd, F_GETFL) & O_ACCMODE;
  const int mode = acc == O_RDWR ? O_RDWR : O_RDONLY;
  const std::string self = "/proc/self/fd/" + std::to_string(app_fd);
  int fd = direct ? ::open(self.c_str(), mode | O_DIRECT | O_CLOEXEC) : -1;
  if (fd < 0) fd = ::open(self.c_str(), mode | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

int KmodEngine::link_new(int app_fd, const std::string& path, bool direct, dimmap_link_info* info) {
  const int fd = reopen_for_link(app_fd, direct);
  if (fd < 0) return fail(-fd, "kmod: cannot reopen '%s': %s", path.c_str(), std::strerror(-fd));
  Fd owner(fd);
  dimmap_link_req req;
  const int rc = kmod::link(ctl_, fd, buffer_, &req);
  if (rc == -EPERM)
    return fail(EPERM,
                "kmod: '%s' is not linked to dimmap.ko and linking needs CAP_SYS_ADMIN: run "
                "'dimmapctl link %s' as root first",
                path.c_str(), path.c_str());
  if (rc < 0) return rc;
  if (int irc = kmod::info(ctl_, req.id, info); irc < 0)
    return fail(-irc, "kmod: %s vanished after linking '%s'", kmod::device_path(req.id).c_str(), path.c_str());
  return 0;
}

int KmodEngine::find_or_link(int app_fd, const std::string& path, bool direct, dimmap_link_info* info,
                             bool* created) {
  struct stat st;
  if (fstat(app_fd, &st) != 0) return fail(errno, "kmod: cannot stat '%s': %s", path.c_str(), std::strerror(errno));
  for (int attempt = 0; attempt < 2; ++attempt) {
    int rc = kmod::find_link(ctl_, st, info);
    if (rc == 0) {
      *created = false;
      return 0;
    }
    if (rc != -ENOENT) return fail(-rc, "kmod: cannot list dimmap links: %s", std::strerror(-rc));
    rc = link_new(app_fd, path, direct, info);
    if (rc == 0) {
      *created = true;
      return 0;
    }
    if (rc != -EBUSY)  // EBUSY: another process linked it meanwhile; find that link
      return rc == -EPERM ? rc : fail(-rc, "kmod: cannot link '%s': %s", path.c_str(), std::strerror(-rc));
  }
  return fail(EBUSY, "kmod: '%s' is linked and unlinked concurrently", path.c_str());
}

bool KmodEngine::id_in_use(uint32_t id) const {
  for (const auto& [addr, r] : regions_)
    if (r.id == id) return true;
  return false;
}

int KmodEngine::map(void* hint, size_t length, int prot, int flags, int fd, off_t offset, void** out) {
  BackingFile check;  // validates the request with the same messages as the uffd engine
  if (int rc = check.open(fd, length, prot, flags, offset, false); rc < 0) return rc;
  const std::string& path = check.path();

  std::lock_guard<std::mutex> lock(mu_);
  dimmap_link_info info;
  bool created = false;
  if (int rc = find_or_link(fd, path, direct_io_, &info, &created); rc < 0) return rc;
  const std::string dev = kmod::device_path(info.id);
  auto undo = [&](int err) {
    if (created && !id_in_use(info.id)) kmod::unlink(ctl_, info.id);
    return err;
  };
  const uint64_t end = static_cast<uint64_t>(offset) + length;
  if (end > info.size)
    return undo(fail(EINVAL, "kmod: mapping [%lld, %llu) of '%s' reaches past its last whole page (%llu bytes)",
                     static_cast<long long>(offset), static_cast<unsigned long long>(end), path.c_str(),
                     static_cast<unsigned long long>(info.size)));
  const bool writable = (prot & PROT_WRITE) && (flags & MAP_SHARED);
  Fd devfd(::open(dev.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC));
  if (devfd.get() < 0)
    return undo(fail(errno, "kmod: cannot open %s (linked to '%s'): %s", dev.c_str(), path.c_str(),
                     std::strerror(errno)));
  void* p = ::mmap(hint, length, prot, flags, devfd.get(), offset);
  if (p == MAP_FAILED)
    return undo(fail(errno, "kmod: cannot map %s: %s", dev.c_str(), std::strerror(errno)));
  regions_[reinterpret_cast<uintptr_t>(p)] = KmodRegion{length, static_cast<uint64_t>(offset), info.id, created};
  *out = p;
  return 0;
}

int KmodEngine::unmap(void* addr, size_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(addr));
  if (it == regions_.end()) return fail(EINVAL, "kmod: %p is not the start of a mapping", addr);
  const KmodRegion r = it->second;
  if (length != r.length)
    return fail(EINVAL, "kmod: munmap(%p, %zu) must unmap the whole mapping (%zu bytes)", addr, length, r.length);
  if (::msync(addr, r.length, MS_SYNC) != 0)
    return fail(errno, "kmod: writeback of %s failed: %s", kmod::device_path(r.id).c_str(), std::strerror(errno));
  if (::munmap(addr, r.length) != 0)
    return fail(errno, "kmod: munmap(%p): %s", addr, std::strerror(errno));
  regions_.erase(it);
  if (r.created && !id_in_use(r.id)) {
    const int rc = kmod::unlink(ctl_, r.id);  // EBUSY: another process maps it; it stays
    if (rc < 0 && rc != -EBUSY)
      return fail(-rc, "kmod: unlink of %s failed: %s", kmod::device_path(r.id).c_str(), std::strerror(-rc));
  }
  return 0;
}

int KmodEngine::sync(void* addr, size_t length, int flags) {
  if (::msync(addr, length, flags & ~MS_INVALIDATE) != 0)
    return fail(errno, "kmod: msync(%p, %zu): %s", addr, length, std::strerror(errno));
  if (!(flags & MS_INVALIDATE)) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.upper_bound(reinterpret_cast<uintptr_t>(addr));
  if (it == regions_.begin()) return 0;
  --it;
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr) & ~static_cast<uintptr_t>(sysconf(_SC_PAGESIZE) - 1);
  const uint64_t file_offset = it->second.offset + (start - it->first);
  const uint64_t len = std::min<uint64_t>(length + (reinterpret_cast<uintptr_t>(addr) - start),
                                          it->second.length - (start - it->first));
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  dimmap_sync_req req;
  const int rc = kmod::sync(ctl_, it->second.id, file_offset, (len + page - 1) / page * page, DIMMAP_SYNC_DROP, &req);
  if (rc == -EPERM) {  // dropping needs CAP_SYS_ADMIN; the pages are written back anyway
    log(LogLevel::info, "kmod: MS_INVALIDATE keeps the pages: dropping them needs CAP_SYS_ADMIN");
    return 0;
  }
  return rc < 0 ? fail(-rc, "kmod: dropping pages of %s failed: %s", kmod::device_path(it->second.id).c_str(),
                       std::strerror(-rc))
                : 0;
}

void KmodEngine::stats(struct dimmap_stats* out) const {
  std::memset(out, 0, sizeof *out);
  dimmap_kstats k;
  if (kmod::stats(ctl_, buffer_, &k) < 0) return;
  out->faults = k.faults;
  out->misses = k.misses;
  out->recoveries = k.recoveries;
  out->hits = k.hits;
  out->write_faults = k.write_faults;
  out->hot_promotions = k.hot_promotions;
  out->evictions = k.evictions;
  out->eviction_batches = k.eviction_batches;
  out->writebacks = k.writebacks;
  out->write_ios = k.write_ios;
  out->bytes_read = k.bytes_read;
  out->bytes_written = k.bytes_written;
  out->read_errors = k.read_errors;
  out->write_errors = k.write_errors;
  out->buffer_pages = k.buffer_pages;
  out->resident_pages = k.resident_pages;
  out->dirty_pages = k.dirty_pages;
}

int kmod_buffer_from_env(uint32_t buffers, uint32_t* out) {
  const char* v = std::getenv("DIMMAP_KMOD_BUFFER");
  *out = 0;
  if (!v || !*v) return 0;
  char* end = nullptr;
  const unsigned long n = std::strtoul(v, &end, 10);
  if (*end || v[0] == '-' || n >= buffers)
    return fail(EINVAL, "DIMMAP_KMOD_BUFFER='%s' is not a buffer of dimmap.ko (it has %u: 0 to %u)", v, buffers,
                buffers - 1);
  *out = static_cast<uint32_t>(n);
  return 0;
}

}  // namespace

std::unique_ptr<Engine> make_kmod_engine(const dimmap_config& config, int* err) {
  const int ctl = kmod::open_control();
  if (ctl < 0) {
    *err = ctl == -ENOENT ? fail(ENODEV,
                                 "DIMMAP_ENGINE=kmod: %s does not exist: load the kernel module first "
                                 "(insmod dimmap.ko, see runtime/kernel)",
                                 kmod::kControlPath)
                          : fail(-ctl, "DIMMAP_ENGINE=kmod: cannot open %s: %s", kmod::kControlPath,
                                 std::strerror(-ctl));
    return nullptr;
  }
  dimmap_version v;
  if (kmod::version(ctl, &v) < 0 || v.abi != DIMMAP_ABI_VERSION) {
    close(ctl);
    *err = fail(EPROTO, "DIMMAP_ENGINE=kmod: %s speaks ABI %u, this library %u", kmod::kControlPath, v.abi,
                DIMMAP_ABI_VERSION);
    return nullptr;
  }
  uint32_t buffer = 0;
  if (int rc = kmod_buffer_from_env(v.buffers, &buffer); rc < 0) {
    close(ctl);
    *err = rc;
    return nullptr;
  }
  if (config.buffer_bytes != v.buffer_pages * v.page_size)
    log(LogLevel::info, "DIMMAP_ENGINE=kmod: dimmap.ko's buffers hold %llu pages, fixed when it was loaded; "
        "the configured buffer size is not used", static_cast<unsigned long long>(v.buffer_pages));
  return std::make_unique<KmodEngine>(ctl, buffer, config.direct_io != 0);
}

}  // namespace dimmap::detail
