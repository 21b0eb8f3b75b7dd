// Fuzz target: the runtime's size parser (dimmap_parse_size, used for DIMMAP_BUFFER and every
// --buffer / --min-alloc flag) against a reference written from its documentation, and its
// C++ wrapper dimmap::parse_size against the C function.
//
// Grammar (dimmap.h, plus the suffix forms size.cpp documents): DIGITS [UNIT], UNIT one of
// B, or K/M/G/T/P optionally followed by i and/or B, case-insensitive, powers of 1024; no
// sign, no spaces, no fraction; values beyond 2^64 - 1 are refused.
#include <dimmap/dimmap.h>
#include <dimmap/placement.hpp>

#include <cctype>
#include <cstring>
#include <optional>
#include <string>

#include "fuzz_input.hpp"

namespace {

std::optional<uint64_t> reference_parse(const std::string& s) {
  size_t i = 0;
  unsigned __int128 value = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    value = value * 10 + static_cast<unsigned>(s[i] - '0');
    if (value > UINT64_MAX) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string unit = s.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else {
    const std::string units = "KMGTP";
    const size_t u = units.find(unit[0]);
    if (u == std::string::npos) return std::nullopt;
    const std::string rest = unit.substr(1);
    if (!(rest.empty() || rest == "I" || rest == "B" || rest == "IB")) return std::nullopt;
    shift = 10 * static_cast<unsigned>(u + 1);
  }
  value <<= shift;
  if (value > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string c_text = text.substr(0, text.find('\0'));  // what a C caller can pass

  uint64_t bytes = 0;
  const int rc = dimmap_parse_size(c_text.c_str(), &bytes);
  const std::optional<uint64_t> want = reference_parse(c_text);
  if ((rc == 0) != want.has_value())
    property_failed("dimmap_parse_size('" + c_text + "') " + (rc == 0 ? "accepted" : "refused") +
                    " what the documented grammar " + (want ? "accepts" : "refuses"));
  if (rc == 0 && bytes != *want)
    property_failed("dimmap_parse_size('" + c_text + "') = " + std::to_string(bytes) + ", expected " +
                    std::to_string(*want));
  if (rc != 0 && dimmap_last_error()[0] == '\0') property_failed("a refused size leaves no error message");

  // The C++ wrapper: same verdict, or an exception naming what was parsed.
  try {
    const uint64_t v = dimmap::parse_size(c_text, "--buffer");
    if (rc != 0 || v != bytes) property_failed("dimmap::parse_size disagrees with dimmap_parse_size on '" + c_text + "'");
  } catch (const dimmap::Error& e) {
    if (rc == 0) property_failed("dimmap::parse_size refused '" + c_text + "': " + e.what());
    if (!std::strstr(e.what(), "--buffer")) property_failed(std::string("error does not name the flag: ") + e.what());
  }

  // Sizes printed without a fraction parse back to themselves. format_size divides in double,
  // so only values below 2^53 are exact (above, "1024P" may stand for 2^60 + 1).
  if (size >= 8) {
    uint64_t x;
    std::memcpy(&x, data, sizeof x);
    x &= (uint64_t{1} << 53) - 1;
    const std::string shown = dimmap::format_size(x);
    uint64_t back = 0;
    if (shown.find('.') == std::string::npos && (dimmap_parse_size(shown.c_str(), &back) != 0 || back != x))
      property_failed("format_size(" + std::to_string(x) + ") = '" + shown + "' does not parse back");
  }
  return 0;
}
