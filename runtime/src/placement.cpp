// placement.cpp - memory, mmap and dimmap placements behind one Region type.
#include <dimmap/file_size.hpp>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "log.hpp"

namespace dimmap {
namespace {

using detail::LogLevel;

[[noreturn]] void throw_errno(const std::string& what, int err) {
  throw Error(what + ": " + std::strerror(err));
}

// Owns a file descriptor until the mapping exists (mappings keep their own reference).
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// An unnamed file in dir (O_TMPFILE), or a named one unlinked at once where O_TMPFILE is
// not supported. Either way nothing is left behind if the process dies.
int make_unnamed_file(const std::string& dir, std::string_view hint) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    throw_errno("cannot create a file in '" + dir + "'", errno);
  std::string name = dir + "/dimmap-" + std::string(hint) + "-XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  fd = mkostemp(buf.data(), O_CLOEXEC);
  if (fd < 0) throw_errno("cannot create a file in '" + dir + "'", errno);
  ::unlink(buf.data());
  return fd;
}

void reserve_file(int fd, uint64_t bytes, const std::string& where) {
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    throw_errno("cannot size a " + format_size(bytes) + " file in '" + where + "'", errno);
}

// Copies src into dst (a tmpfs file), failing clearly when tmpfs fills up.
void copy_file(int src, int dst, uint64_t bytes, const std::string& path, const std::string& dir) {
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t n = copy_file_range(src, nullptr, dst, nullptr, bytes - done, 0);
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL)) break;  // fall back
    if (n < 0) throw_errno("cannot copy '" + path + "' into '" + dir + "'", errno);
    if (n == 0) throw Error("'" + path + "' shrank while being copied into memory");
    done += static_cast<uint64_t>(n);
  }
  std::vector<char> buf(1 << 20);
  while (done < bytes) {
    ssize_t n = pread(src, buf.data(), buf.size(), static_cast<off_t>(done));
    if (n < 0) throw_errno("cannot read '" + path + "'", errno);
    if (n == 0) throw Error("'" + path + "' shrank while being copied into memory");
    for (ssize_t off = 0; off < n;) {
      ssize_t w = pwrite(dst, buf.data() + off, static_cast<size_t>(n - off), static_cast<off_t>(done + off));
      if (w < 0) throw_errno("cannot copy '" + path + "' into '" + dir + "'", errno);
      off += w;
    }
    done += static_cast<uint64_t>(n);
  }
}

void* map_or_throw(size_t bytes, int prot, int flags, int fd, const std::string& what) {
  void* p = ::mmap(nullptr, bytes, prot, flags, fd, 0);
  if (p == MAP_FAILED) throw_errno("cannot map " + what, errno);
  return p;
}

}  // namespace

Backend parse_backend(std::string_view text) {
  if (text == "memory" || text == "in-memory" || text == "tmpfs") return Backend::memory;
  if (text == "mmap") return Backend::mmap;
  if (text == "dimmap") return Backend::dimmap;
  throw Error("unknown backend '" + std::string(text) + "' (expected memory, mmap or dimmap)");
}

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::memory: return "memory";
    case Backend::mmap: return "mmap";
    case Backend::dimmap: return "dimmap";
  }
  return "?";
}

uint64_t parse_size(std::string_view text, std::string_view what) {
  std::string s(text);
  uint64_t bytes = 0;
  if (dimmap_parse_size(s.c_str(), &bytes) < 0)
    throw Error(std::string(what) + ": " + dimmap_last_error());
  return bytes;
}

void prefetch(const struct iovec* ranges, size_t count) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  size_t i = 0;
  while (i < count) {
    // Runs of ranges in dimmap mappings go to the engine together.
    size_t j = i;
    while (j < count && dimmap_is_mapped(ranges[j].iov_base)) ++j;
    if (j > i) {
      dimmap_prefetchv(ranges + i, j - i);
      i = j;
      continue;
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(ranges[i].iov_base);
    const uintptr_t start = a & ~(page - 1);
    ::madvise(reinterpret_cast<void*>(start), a + ranges[i].iov_len - start, MADV_WILLNEED);
    ++i;
  }
}

// ---- Buffer ----

Buffer::Buffer(const dimmap_config& config) : config_(config) {
  if (int rc = dimmap_instance_create(&config_, &instance_); rc < 0)
    throw Error(std::string("cannot create DI-MMAP buffer: ") + dimmap_last_error());
}

Buffer::~Buffer() {
  if (instance_ && dimmap_instance_destroy(instance_) < 0)
    detail::log(LogLevel::warn, "buffer not destroyed: %s", dimmap_last_error());
}

std::shared_ptr<Buffer> Buffer::create(uint64_t bytes, double hot_fraction) {
  return std::make_shared<Buffer>(config_for_buffer(bytes, hot_fraction));
}

struct dimmap_stats Buffer::stats() const {
  struct dimmap_stats s{};
  dimmap_instance_stats(instance_, &s);
  return s;
}

// ---- Placement ----

Placement Placement::memory(std::string tmpfs_dir) {
  Placement p;
  p.backend = Backend::memory;
  p.dir = std::move(tmpfs_dir);
  return p;
}

Placement Placement::anonymous() { return memory(""); }

Placement Placement::mmap(std::string storage_dir) {
  Placement p;
  p.backend = Backend::mmap;
  p.dir = std::move(storage_dir);
  return p;
}

Placement Placement::dimmap(std::string storage_dir, std::shared_ptr<Buffer> buffer) {
  if (!buffer) throw Error("dimmap placement needs a buffer");
  Placement p;
  p.backend = Backend::dimmap;
  p.dir = std::move(storage_dir);
  p.buffer = std::move(buffer);
  return p;
}

std::string Placement::describe() const {
  switch (backend) {
    case Backend::memory:
      return dir.empty() ? "memory(anonymous)" : "memory(" + dir + ")";
    case Backend::mmap:
      return "mmap(" + dir + (dontneed_interval_s ? ", dontneed every " + std::to_string(dontneed_interval_s) + "s" : "") + ")";
    case Backend::dimmap:
      return "dimmap(" + dir + ", buffer " + format_size(buffer ? buffer->config().buffer_bytes : 0) + ")";
  }
  return "?";
}

// ---- Region ----

// Calls MADV_DONTNEED on a Linux mmap region every few seconds (the papers' helper).
struct Region::DontneedHelper {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;

  DontneedHelper(void* addr, size_t bytes, unsigned seconds) {
    thread = std::thread([this, addr, bytes, seconds] {
      std::unique_lock<std::mutex> lock(mu);
      while (!cv.wait_for(lock, std::chrono::seconds(seconds), [this] { return stop; }))
        ::madvise(addr, bytes, MADV_DONTNEED);
    });
  }
  ~DontneedHelper() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
};

Region::Region() = default;

Region::Region(Region&& o) noexcept { *this = std::move(o); }

Region& Region::operator=(Region&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    backend_ = o.backend_;
    writable_file_ = o.writable_file_;
    path_ = std::move(o.path_);
    buffer_ = std::move(o.buffer_);
    helper_ = std::move(o.helper_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

Region::~Region() { release(); }

void Region::release() noexcept {
  try {
    close();
  } catch (const std::exception& e) {
    detail::log(LogLevel::error, "%s", e.what());
  }
}

Region Region::open(const Placement& placement, const std::string& path, Access access) {
  const bool rw = access == Access::read_write;
  if (placement.backend == Backend::memory && rw)
    throw Error("'" + path + "': a memory placement holds a copy, so it can only be opened read-only");
  Fd fd(::open(path.c_str(), (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC));
  if (fd.fd < 0) throw_errno("cannot open '" + path + "'", errno);
  const uint64_t bytes = file_or_device_size(fd.fd, path);
  if (bytes == 0) throw Error("'" + path + "' is empty");

  Region r;
  r.size_ = bytes;
  r.backend_ = placement.backend;
  r.path_ = path;
  const int prot = PROT_READ | (rw ? PROT_WRITE : 0);
  switch (placement.backend) {
    case Backend::memory:
      if (placement.dir.empty()) {
        r.data_ = map_or_throw(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                               "anonymous memory for '" + path + "'");
        for (uint64_t done = 0; done < bytes;) {
          ssize_t n = pread(fd.fd, static_cast<char*>(r.data_) + done, bytes - done, static_cast<off_t>(done));
          if (n < 0) throw_errno("cannot read '" + path + "'", errno);
          if (n == 0) throw Error("'" + path + "' shrank while being read into memory");
          done += static_cast<uint64_t>(n);
        }
        ::mprotect(r.data_, bytes, PROT_READ);
      } else {
        Fd copy(make_unnamed_file(placement.dir, "copy"));
        reserve_file(copy.fd, bytes, placement.dir);
        copy_file(fd.fd, copy.fd, bytes, path, placement.dir);
        r.data_ = map_or_throw(bytes, PROT_READ, MAP_SHARED, copy.fd, "the copy of '" + path + "'");
      }
      break;
    case Backend::mmap:
      r.data_ = map_or_throw(bytes, prot, MAP_SHARED, fd.fd, "'" + path + "'");
      r.writable_file_ = rw;
      break;
    case Backend::dimmap:
      r.data_ = dimmap_instance_mmap(placement.buffer->instance(), nullptr, bytes, prot, MAP_SHARED, fd.fd, 0);
      if (r.data_ == MAP_FAILED) {
        r.data_ = nullptr;
        throw Error("cannot map '" + path + "' with dimmap: " + dimmap_last_error());
      }
      r.writable_file_ = rw;
      r.buffer_ = placement.buffer;
      break;
  }
  if (placement.backend == Backend::mmap) {
    if (placement.advise_random) ::madvise(r.data_, bytes, MADV_RANDOM);
    if (placement.dontneed_interval_s)
      r.helper_ = std::make_unique<DontneedHelper>(r.data_, bytes, placement.dontneed_interval_s);
  }
  return r;
}

Region Region::scratch(const Placement& placement, size_t bytes, std::string_view name_hint) {
  if (bytes == 0) throw Error("scratch region '" + std::string(name_hint) + "' must not be empty");
  Region r;
  r.size_ = bytes;
  r.backend_ = placement.backend;
  if (placement.backend == Backend::memory && placement.dir.empty()) {
    r.data_ = map_or_throw(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                           format_size(bytes) + " of anonymous memory for " + std::string(name_hint));
    return r;
  }
  Fd fd(make_unnamed_file(placement.dir, name_hint));
  reserve_file(fd.fd, bytes, placement.dir);
  const std::string what = std::string(name_hint) + " (" + format_size(bytes) + " in '" + placement.dir + "')";
  if (placement.backend == Backend::dimmap) {
    r.data_ = dimmap_instance_mmap(placement.buffer->instance(), nullptr, bytes, PROT_READ | PROT_WRITE,
                                   MAP_SHARED, fd.fd, 0);
    if (r.data_ == MAP_FAILED) {
      r.data_ = nullptr;
      throw Error("cannot map " + what + " with dimmap: " + dimmap_last_error());
    }
    r.buffer_ = placement.buffer;
  } else {
    r.data_ = map_or_throw(bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, what);
    if (placement.backend == Backend::mmap) {
      if (placement.advise_random) ::madvise(r.data_, bytes, MADV_RANDOM);
      if (placement.dontneed_interval_s)
        r.helper_ = std::make_unique<DontneedHelper>(r.data_, bytes, placement.dontneed_interval_s);
    }
  }
  return r;
}

Region Region::create(const Placement& placement, const std::string& path, size_t bytes) {
  if (bytes == 0) throw Error("'" + path + "': cannot create an empty mapped file");
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.fd < 0) throw_errno("cannot create '" + path + "'", errno);
  reserve_file(fd.fd, bytes, path);
  Region r;
  r.size_ = bytes;
  r.backend_ = placement.backend;
  r.path_ = path;
  r.writable_file_ = true;
  if (placement.backend == Backend::dimmap) {
    r.data_ = dimmap_instance_mmap(placement.buffer->instance(), nullptr, bytes, PROT_READ | PROT_WRITE,
                                   MAP_SHARED, fd.fd, 0);
    if (r.data_ == MAP_FAILED) {
      r.data_ = nullptr;
      throw Error("cannot map '" + path + "' with dimmap: " + dimmap_last_error());
    }
    r.buffer_ = placement.buffer;
  } else {
    r.data_ = map_or_throw(bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, "'" + path + "'");
  }
  return r;
}

void Region::sync() {
  if (!data_ || !writable_file_) return;
  int rc = backend_ == Backend::dimmap ? dimmap_msync(data_, size_, MS_SYNC) : ::msync(data_, size_, MS_SYNC);
  if (rc != 0) {
    const int err = errno;
    std::string what = path_.empty() ? std::string("scratch region") : "'" + path_ + "'";
    throw Error("cannot write " + what + " back: " + std::strerror(err) +
                (backend_ == Backend::dimmap ? std::string(" (") + dimmap_last_error() + ")" : ""));
  }
}

void Region::close() {
  if (!data_) return;
  helper_.reset();
  sync();
  if (backend_ == Backend::dimmap) {
    // Scratch data (and read-only data) needs no writeback: drop it before unmapping.
    if (!writable_file_) dimmap_discard(data_, size_);
    if (dimmap_munmap(data_, size_) != 0)
      throw Error("cannot unmap '" + path_ + "': " + dimmap_last_error());
  } else {
    ::munmap(data_, size_);
  }
  data_ = nullptr;
  size_ = 0;
  buffer_.reset();
}

}  // namespace dimmap
