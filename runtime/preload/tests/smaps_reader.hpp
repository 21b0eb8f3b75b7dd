// smaps_reader.hpp - test helper: what /proc/self/smaps says about an address range.
// Written separately from the arena's own reader so the tests check it independently.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace dimmap::test {

struct RangeMemory {
  uint64_t rss_kib = 0;
  uint64_t anon_huge_kib = 0;  // THP
  uint64_t hugetlb_kib = 0;    // hugetlbfs (Private_Hugetlb + Shared_Hugetlb)
  uint64_t locked_kib = 0;
};

inline RangeMemory smaps_range(const void* addr, uint64_t len) {
  const uint64_t lo = reinterpret_cast<uintptr_t>(addr), hi = lo + len;
  std::ifstream in("/proc/self/smaps");
  RangeMemory m;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    const size_t dash = line.find('-'), space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      const uint64_t start = std::stoull(line.substr(0, dash), nullptr, 16);
      const uint64_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = start < hi && end > lo;
      continue;
    }
    if (!inside) continue;
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    fields >> key >> kib;
    if (key == "Rss:") m.rss_kib += kib;
    if (key == "AnonHugePages:") m.anon_huge_kib += kib;
    if (key == "Private_Hugetlb:" || key == "Shared_Hugetlb:") m.hugetlb_kib += kib;
    if (key == "Locked:") m.locked_kib += kib;
  }
  return m;
}

}  // namespace dimmap::test
