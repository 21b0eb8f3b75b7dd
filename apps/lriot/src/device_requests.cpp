// device_requests.cpp - see device_requests.hpp. The fields of the stat file are those of
// Documentation/block/stat.rst: the 1st is completed reads, the 5th completed writes.
#include "device_requests.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>

namespace lriot::detail {

std::string device_stat_file(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  const std::string file =
      "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev)) + "/stat";
  return access(file.c_str(), R_OK) == 0 ? file : "";
}

bool read_device_requests(const std::string& stat_file, DeviceRequests* out) {
  if (stat_file.empty()) return false;
  FILE* f = std::fopen(stat_file.c_str(), "re");
  if (!f) return false;
  unsigned long long fields[5];
  const int n = std::fscanf(f, "%llu %llu %llu %llu %llu", &fields[0], &fields[1], &fields[2], &fields[3], &fields[4]);
  std::fclose(f);
  if (n != 5) return false;
  out->reads = fields[0];
  out->writes = fields[4];
  return true;
}

}  // namespace lriot::detail
