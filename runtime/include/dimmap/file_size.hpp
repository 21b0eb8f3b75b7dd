// file_size.hpp - the size of what a descriptor opens: a regular file or a block device.
#pragma once

#include <cstdint>
#include <string>

namespace dimmap {

// st_size of a regular file, BLKGETSIZE64 of a block device; throws dimmap::Error naming `path`
// for anything else or when fstat/ioctl fails.
uint64_t file_or_device_size(int fd, const std::string& path);

}  // namespace dimmap
