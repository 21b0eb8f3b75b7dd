// device_requests.hpp - the requests a file's block device has completed, from sysfs: how many
// reads and writes of the device an operation cost, the measure of an I/O policy beside time.
#pragma once

#include <cstdint>
#include <string>

namespace lriot::detail {

struct DeviceRequests {
  uint64_t reads = 0, writes = 0;
};

// The block-layer statistics file of the device holding path (a disk or a partition; for a
// block device node, the device itself), or "" where there is none (tmpfs, overlays, NFS).
std::string device_stat_file(const std::string& path);

// The reads and writes the device completed since boot; false if stat_file cannot be read.
bool read_device_requests(const std::string& stat_file, DeviceRequests* out);

}  // namespace lriot::detail
