// size.cpp - parsing and printing of sizes such as "256M" and "4G".
#include <dimmap/dimmap.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "log.hpp"

using dimmap::detail::fail;

extern "C" int dimmap_parse_size(const char* text, uint64_t* bytes) {
  if (!text || !*text) return fail(EINVAL, "empty size");
  const char* p = text;
  if (!std::isdigit(static_cast<unsigned char>(*p)))
    return fail(EINVAL, "size '%s' must start with a digit (no sign, no spaces)", text);
  uint64_t value = 0;
  for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) {
    unsigned digit = static_cast<unsigned>(*p - '0');
    if (value > (UINT64_MAX - digit) / 10) return fail(ERANGE, "size '%s' is too large", text);
    value = value * 10 + digit;
  }
  unsigned shift = 0;
  if (*p) {
    switch (std::toupper(static_cast<unsigned char>(*p))) {
      case 'B': shift = 0; break;
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'P': shift = 50; break;
      default: return fail(EINVAL, "size '%s' has an unknown unit (use K, M, G, T)", text);
    }
    ++p;
    // Accept "K", "KB", "KiB" (all powers of 1024); a bare "B" takes no suffix.
    if (shift && (*p == 'i' || *p == 'I')) ++p;
    if (shift && (*p == 'b' || *p == 'B')) ++p;
    if (*p) return fail(EINVAL, "size '%s' has trailing characters '%s'", text, p);
  }
  if (shift && value > (UINT64_MAX >> shift)) return fail(ERANGE, "size '%s' is too large", text);
  *bytes = value << shift;
  return 0;
}

namespace dimmap {

std::string format_size(uint64_t bytes) {
  static const char units[] = "BKMGTP";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(bytes));
  else if (v == static_cast<double>(static_cast<uint64_t>(v)))
    std::snprintf(buf, sizeof buf, "%.0f%c", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f%c", v, units[u]);
  return buf;
}

}  // namespace dimmap
