// backing_file.cpp - validation of mapping requests and private descriptors for engine I/O.
#include "backing_file.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <linux/magic.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "log.hpp"

namespace dimmap::detail {
namespace {

std::string fd_path(int fd) {
  char link[64], target[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return "fd " + std::to_string(fd);
  target[n] = '\0';
  return target;
}

}  // namespace

BackingFile::~BackingFile() {
  if (direct_ >= 0) close(direct_);
  if (buffered_ >= 0) close(buffered_);
}

int BackingFile::open(int app_fd, size_t length, int prot, int flags, off_t offset, bool want_direct) {
  const long page = sysconf(_SC_PAGESIZE);
  if (app_fd < 0) return fail(EBADF, "dimmap_mmap: invalid file descriptor %d", app_fd);
  path_ = fd_path(app_fd);
  const char* p = path_.c_str();
  if (length == 0) return fail(EINVAL, "dimmap_mmap('%s'): length is zero", p);
  if (offset < 0 || offset % page)
    return fail(EINVAL, "dimmap_mmap('%s'): offset %lld is not a multiple of the page size %ld", p,
                static_cast<long long>(offset), page);
  const int kind = flags & (MAP_SHARED | MAP_PRIVATE);
  if (kind != MAP_SHARED && kind != MAP_PRIVATE)
    return fail(EINVAL, "dimmap_mmap('%s'): flags need exactly one of MAP_SHARED and MAP_PRIVATE", p);
  if (flags & MAP_ANONYMOUS) return fail(EINVAL, "dimmap_mmap: MAP_ANONYMOUS is not supported: dimmap maps files");
  if (!(prot & (PROT_READ | PROT_WRITE)))
    return fail(EINVAL, "dimmap_mmap('%s'): prot must allow reading or writing", p);
  const bool writable = (prot & PROT_WRITE) && kind == MAP_SHARED;
  if ((prot & PROT_WRITE) && kind == MAP_PRIVATE)
    return fail(ENOTSUP, "dimmap_mmap('%s'): writable MAP_PRIVATE mappings are not supported; use MAP_SHARED "
                "or map read-only", p);

  const int acc = fcntl(app_fd, F_GETFL);
  if (acc < 0) return fail(EBADF, "dimmap_mmap: file descriptor %d is not open", app_fd);
  if ((acc & O_ACCMODE) == O_WRONLY) return fail(EACCES, "dimmap_mmap('%s'): file is open write-only", p);
  app_read_only_ = (acc & O_ACCMODE) == O_RDONLY;
  if (writable && (acc & O_ACCMODE) != O_RDWR)
    return fail(EACCES, "dimmap_mmap('%s'): a writable shared mapping needs the file opened read-write", p);

  struct stat st;
  if (fstat(app_fd, &st) != 0) return fail(errno, "dimmap_mmap('%s'): cannot stat: %s", p, std::strerror(errno));
  if (S_ISBLK(st.st_mode)) {
    if (ioctl(app_fd, BLKGETSIZE64, &size_) != 0)
      return fail(errno, "dimmap_mmap('%s'): cannot read the device size: %s", p, std::strerror(errno));
  } else if (S_ISREG(st.st_mode)) {
    size_ = static_cast<uint64_t>(st.st_size);
  } else {
    return fail(ENODEV, "dimmap_mmap('%s'): not a regular file or block device", p);
  }
  const uint64_t end = static_cast<uint64_t>(offset) + length;
  const uint64_t mappable = (size_ + page - 1) / page * page;
  if (end > mappable)
    return fail(EINVAL, "dimmap_mmap('%s'): mapping bytes [%lld, %llu) extends past the end of the file (%llu bytes)",
                p, static_cast<long long>(offset), static_cast<unsigned long long>(end),
                static_cast<unsigned long long>(size_));

  // Private descriptors: the application may close or seek its own.
  char self[64];
  std::snprintf(self, sizeof self, "/proc/self/fd/%d", app_fd);
  const int mode = writable ? O_RDWR : O_RDONLY;
  buffered_ = ::open(self, mode | O_CLOEXEC);
  if (buffered_ < 0) buffered_ = fcntl(app_fd, F_DUPFD_CLOEXEC, 0);  // no /proc: share the description
  if (buffered_ < 0) return fail(errno, "dimmap_mmap('%s'): cannot reopen: %s", p, std::strerror(errno));
  struct statfs fs = {};
  in_memory_ = fstatfs(buffered_, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
  if (want_direct && !in_memory_) {
    direct_ = ::open(self, mode | O_CLOEXEC | O_DIRECT);
    if (direct_ < 0)
      log(LogLevel::info, "'%s': O_DIRECT unavailable (%s): pages may also sit in the Linux page cache", p,
          std::strerror(errno));
  }
  return 0;
}

ssize_t BackingFile::read_at_once(char* buf, size_t len, uint64_t offset) const {
  if (in_memory_) {
    const ssize_t n = pread(buffered_, buf, len, static_cast<off_t>(offset));
    return n < 0 ? -errno : n;
  }
  if (direct_ >= 0) return -EAGAIN;
  struct iovec iov = {buf, len};
  const ssize_t n = preadv2(buffered_, &iov, 1, static_cast<off_t>(offset), RWF_NOWAIT);
  // A short read may mean part of the range is not cached: let the queue read it whole.
  if (n < 0 || (static_cast<size_t>(n) < len && offset + n < size_)) return n < 0 && errno != EAGAIN ? -errno : -EAGAIN;
  return n;
}

int BackingFile::write_fd_for(uint64_t file_offset, size_t len) const {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (direct_ >= 0 && len % page == 0 && file_offset % page == 0) return direct_;
  return buffered_;
}


bool BackingFile::is_hole(uint64_t offset, uint64_t len) const {
  const off_t data = lseek(buffered_, static_cast<off_t>(offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO;  // no data after offset (EINVAL etc.: unknown, say no)
  return static_cast<uint64_t>(data) >= offset + len;
}

}  // namespace dimmap::detail
