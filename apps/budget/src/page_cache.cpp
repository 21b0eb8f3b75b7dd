// page_cache.cpp - dropping the page cache, evicting one file, measuring residency.
#include <budget/page_cache.hpp>
#include <dimmap/file_size.hpp>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace budget {
namespace {

using dimmap::Error;

[[noreturn]] void throw_errno(const std::string& what, int err) { throw Error(what + ": " + std::strerror(err)); }

class File {
 public:
  explicit File(const std::string& path) : path_(path), fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw_errno("cannot open '" + path + "'", errno);
  }
  ~File() { close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }

  uint64_t size() const { return dimmap::file_or_device_size(fd_, path_); }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

void drop_page_cache() {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("cannot drop the page cache through /proc/sys/vm/drop_caches (needs root)", errno);
  ssize_t n = write(fd, "1", 1);
  int err = errno;
  close(fd);
  if (n != 1) throw_errno("cannot drop the page cache through /proc/sys/vm/drop_caches", err);
}

void evict_file(const std::string& path) {
  File file(path);
  // Dirty pages cannot be dropped: write them back first.
  if (fdatasync(file.fd()) != 0 && errno != EINVAL) throw_errno("cannot write back '" + path + "'", errno);
  if (int err = posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED))
    throw_errno("cannot drop '" + path + "' from the page cache", err);
}

double resident_fraction(const std::string& path) {
  File file(path);
  const uint64_t bytes = file.size();
  if (bytes == 0) return 0.0;
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (map == MAP_FAILED) throw_errno("cannot map '" + path + "' to measure its page-cache residency", errno);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  int rc = mincore(map, bytes, resident.data());
  int err = errno;
  munmap(map, bytes);
  if (rc != 0) throw_errno("mincore on '" + path + "' failed", err);
  size_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return static_cast<double>(count) / static_cast<double>(resident.size());
}

}  // namespace budget
