// backing_file.hpp - the file or block device behind a dimmap mapping, opened for the
// engine's own I/O: O_DIRECT where possible (so pages are not cached twice, once in our
// buffer and once in the Linux page cache) and buffered for what O_DIRECT cannot do.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dimmap::detail {

class BackingFile {
 public:
  BackingFile() = default;
  ~BackingFile();
  BackingFile(const BackingFile&) = delete;
  BackingFile& operator=(const BackingFile&) = delete;

  // Validates a mapping request against the application's fd (access mode, type, size,
  // alignment) and opens private descriptors. Returns 0 or -errno with fail() set.
  int open(int app_fd, size_t length, int prot, int flags, off_t offset, bool want_direct);

  int read_fd() const { return direct_ >= 0 ? direct_ : buffered_; }
  // O_DIRECT needs whole sectors: the file's last partial page goes through the buffered fd.
  int write_fd_for(uint64_t file_offset, size_t len) const;
  int buffered_fd() const { return buffered_; }
  bool direct() const { return direct_ >= 0; }
  // The file lives in memory (tmpfs, ramfs): O_DIRECT is pointless there.
  bool in_memory() const { return in_memory_; }
  // Reads now, without waiting for a device: from memory (tmpfs) or from pages the Linux
  // page cache holds. Returns the bytes read, -EAGAIN when the read would wait for the
  // device (then queue it), or -errno.
  ssize_t read_at_once(char* buf, size_t len, uint64_t offset) const;
  // The application's descriptor was opened read-only: the program cannot write the file
  // through any mapping of it.
  bool app_read_only() const { return app_read_only_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // True if [offset, offset+len) holds no data (a sparse hole), as SEEK_DATA reports.
  bool is_hole(uint64_t offset, uint64_t len) const;

 private:
  int direct_ = -1;
  int buffered_ = -1;
  bool in_memory_ = false;
  bool app_read_only_ = false;
  uint64_t size_ = 0;
  std::string path_;
};

}  // namespace dimmap::detail
