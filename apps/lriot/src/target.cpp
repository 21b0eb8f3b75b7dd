// target.cpp - direct, stdio, mmap and dimmap access to an LRIOT file.
#include "target.hpp"

#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <lriot/pattern.hpp>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace lriot::detail {
namespace {

using dimmap::Error;

[[noreturn]] void throw_errno(const std::string& what, int err) { throw Error(what + ": " + std::strerror(err)); }

int open_file(const Config& c, int extra_flags) {
  const bool writes = c.sequence.write_fraction > 0;
  int fd = open(c.file.c_str(), (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | extra_flags);
  if (fd >= 0) return fd;
  if (errno == EINVAL && (extra_flags & O_DIRECT))
    throw Error("the file system of '" + c.file + "' does not support O_DIRECT (--mode=direct)");
  if (writes && (errno == EACCES || errno == EROFS || errno == EPERM || errno == ETXTBSY))
    throw_errno("cannot open '" + c.file + "' for writing (--write-fraction > 0)", errno);
  throw_errno("cannot open '" + c.file + "'", errno);
}

// direct and stdio: pread and pwrite of whole pages.
class FileTarget : public Target {
 public:
  FileTarget(const Config& c, bool direct) : path_(c.file), fd_(open_file(c, direct ? O_DIRECT : 0)) {
    if (!direct && c.random_advice) posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  }
  ~FileTarget() override { close(fd_); }

  const uint64_t* read(uint64_t page, uint64_t* scratch) override {
    transfer(false, page, scratch);
    return scratch;
  }

  bool write(uint64_t page, uint64_t* scratch, bool check) override {
    // Two threads updating one page would lose a counter increment between pread and pwrite.
    std::lock_guard<std::mutex> lock(stripes_[page % kStripes]);
    transfer(false, page, scratch);
    if (check && !check_identity(page, scratch)) return false;
    ++scratch[kCounterWord];
    transfer(true, page, scratch);
    return true;
  }

  void sync() override {
    if (fdatasync(fd_) != 0) throw_errno("cannot sync '" + path_ + "'", errno);
  }

 private:
  static constexpr size_t kStripes = 1024;

  // One whole-page pread or pwrite; a short transfer is an error.
  void transfer(bool write, uint64_t page, uint64_t* scratch) {
    const off_t offset = static_cast<off_t>(page * kPageSize);
    ssize_t n;
    do n = write ? pwrite(fd_, scratch, kPageSize, offset) : pread(fd_, scratch, kPageSize, offset);
    while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(kPageSize))
      throw_errno(std::string(write ? "cannot write" : "cannot read") + " page " + std::to_string(page) + " of '" +
                      path_ + "'",
                  n < 0 ? errno : EIO);
  }

  std::string path_;
  int fd_;
  std::mutex stripes_[kStripes];
};

// mmap and dimmap: loads and stores on a mapping; they differ in how it is made and synced.
class MappedTarget : public Target {
 public:
  const uint64_t* read(uint64_t page, uint64_t*) override { return base_ + page * kWordsPerPage; }

  bool write(uint64_t page, uint64_t*, bool check) override {
    uint64_t* words = base_ + page * kWordsPerPage;
    // The load comes first, as in an application's read-modify-write: a read fault, then a
    // write to a present page (for DI-MMAP a write-protect fault that marks it dirty).
    const uint64_t identity = *static_cast<volatile const uint64_t*>(words);
    if (check && identity != (kIdentity ^ page)) return false;
    // Atomic, so threads (and processes sharing a Linux mapping) never lose an increment.
    __atomic_fetch_add(&words[kCounterWord], 1, __ATOMIC_RELAXED);
    return true;
  }

 protected:
  uint64_t* base_ = nullptr;
  size_t length_ = 0;
};

class MmapTarget : public MappedTarget {
 public:
  MmapTarget(const Config& c, uint64_t pages) : path_(c.file) {
    const bool writes = c.sequence.write_fraction > 0;
    int fd = open_file(c, 0);
    length_ = pages * kPageSize;
    void* p = mmap(nullptr, length_, writes ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    close(fd);  // the mapping keeps the file open
    if (p == MAP_FAILED) throw_errno("cannot mmap '" + path_ + "'", err);
    base_ = static_cast<uint64_t*>(p);
    if (c.random_advice) madvise(p, length_, MADV_RANDOM);
  }
  ~MmapTarget() override { munmap(base_, length_); }

  void sync() override {
    if (msync(base_, length_, MS_SYNC) != 0) throw_errno("msync of '" + path_ + "' failed", errno);
  }

 private:
  std::string path_;
};

class DimmapTarget : public MappedTarget {
 public:
  DimmapTarget(const Config& c, uint64_t pages, uint64_t buffer_bytes) : path_(c.file) {
    dimmap_config cfg = dimmap::config_for_buffer(buffer_bytes, c.hot_fraction);
    if (dimmap_instance_create(&cfg, &instance_) < 0)
      throw Error("cannot create a DI-MMAP buffer of " + dimmap::format_size(cfg.buffer_bytes) + ": " +
                  dimmap_last_error());
    const bool writes = c.sequence.write_fraction > 0;
    int fd = -1;
    try {
      fd = open_file(c, 0);
    } catch (...) {
      dimmap_instance_destroy(instance_);
      throw;
    }
    length_ = pages * kPageSize;
    void* p = dimmap_instance_mmap(instance_, nullptr, length_, writes ? PROT_READ | PROT_WRITE : PROT_READ,
                                   MAP_SHARED, fd, 0);
    close(fd);  // the engine opened the file for itself
    if (p == MAP_FAILED) {
      std::string why = dimmap_last_error();
      dimmap_instance_destroy(instance_);
      throw Error("cannot map '" + path_ + "' with DI-MMAP: " + why);
    }
    base_ = static_cast<uint64_t*>(p);
  }

  ~DimmapTarget() override {
    if (dimmap_munmap(base_, length_) != 0)
      std::fprintf(stderr, "lriot: dimmap_munmap of '%s' failed: %s\n", path_.c_str(), dimmap_last_error());
    else
      dimmap_instance_destroy(instance_);
  }

  void sync() override {
    if (dimmap_msync(base_, length_, MS_SYNC) != 0)
      throw Error("dimmap_msync of '" + path_ + "' failed: " + dimmap_last_error());
  }

  bool stats(struct dimmap_stats* out) const override { return dimmap_instance_stats(instance_, out) == 0; }

 private:
  std::string path_;
  dimmap_instance* instance_ = nullptr;
};

}  // namespace

std::unique_ptr<Target> open_target(const Config& c, uint64_t pages, uint64_t buffer_bytes) {
  switch (c.mode) {
    case Mode::direct:
      return std::make_unique<FileTarget>(c, true);
    case Mode::stdio:
      return std::make_unique<FileTarget>(c, false);
    case Mode::mmap:
      return std::make_unique<MmapTarget>(c, pages);
    case Mode::dimmap:
      return std::make_unique<DimmapTarget>(c, pages, buffer_bytes);
  }
  throw Error("unknown mode");
}

}  // namespace lriot::detail
