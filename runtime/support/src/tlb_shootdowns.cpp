// tlb_shootdowns.cpp - see tlb_shootdowns.hpp.
#include <dimmap/support/tlb_shootdowns.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace dimmap::support {

std::optional<uint64_t> tlb_shootdowns() {
  std::ifstream in("/proc/interrupts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (!(words >> name) || name != "TLB:") continue;
    uint64_t sum = 0, count = 0;
    while (words >> count) sum += count;  // stops at the description ("TLB shootdowns")
    return sum;
  }
  return std::nullopt;
}

}  // namespace dimmap::support
