// file_size.cpp - sizes of regular files and block devices (for placements and page-cache tools).
#include <dimmap/file_size.hpp>
#include <dimmap/placement.hpp>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace dimmap {

uint64_t file_or_device_size(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) throw Error("cannot stat '" + path + "': " + std::strerror(errno));
  if (S_ISBLK(st.st_mode)) {
    uint64_t bytes = 0;
    if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0)
      throw Error("cannot size block device '" + path + "': " + std::strerror(errno));
    return bytes;
  }
  if (!S_ISREG(st.st_mode)) throw Error("'" + path + "' is not a regular file or block device");
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace dimmap
