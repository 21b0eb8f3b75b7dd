// json_summary.hpp - the one-object JSON summary a tool writes with --json=FILE: its name,
// wall seconds, its main rate, its own numbers and, when a DI-MMAP buffer was used, the
// buffer's counters. The comparison harness reads these instead of scraping text.
//
// Common keys: "tool", "wall_seconds", "rate" (the number the tool is measured by) and
// "rate_unit"; "dimmap_stats" (an object of every struct dimmap_stats counter) when a buffer
// was used.
#pragma once

#include <dimmap/dimmap.h>
#include <dimmap/placement.hpp>  // dimmap::Error
#include <dimmap/support/atomic_file.hpp>
#include <dimmap/support/stats_text.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace dimmap::json {

// s as a JSON string literal: quotes, backslashes and control characters escaped (RFC 8259);
// other bytes pass through, so UTF-8 stays UTF-8.
inline std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// A JSON object built key by key, in the order given. Keys are the caller's literals.
class Object {
 public:
  Object& add(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  Object& add(const char* key, const std::string& v) { return raw(key, quote(v)); }
  Object& add(const char* key, const char* v) { return raw(key, quote(v)); }
  Object& add(const char* key, double v) {
    char buf[40];
    // Not a JSON number: NaN and infinity (a rate over zero seconds) become null.
    if (v != v || v - v != 0) return raw(key, "null");
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return raw(key, buf);
  }
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
  Object& add(const char* key, T v) {
    return raw(key, std::to_string(v));
  }
  Object& add(const char* key, const Object& v) { return raw(key, v.str()); }
  // key: an already formatted JSON value.
  Object& raw(const char* key, const std::string& json) {
    text_ += (text_.empty() ? "{" : ", ") + quote(key) + ": " + json;
    return *this;
  }
  std::string str() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  std::string text_;
};

// A JSON array of objects (one per run of a sweep).
inline std::string array(const std::vector<Object>& items) {
  std::string text = "[";
  for (const Object& o : items) text += (text.size() > 1 ? ", " : "") + o.str();
  return text + "]";
}

// Every counter of a DI-MMAP buffer, named as in struct dimmap_stats.
inline Object stats(const struct dimmap_stats& s) {
  Object o;
  for (const support::StatsField& f : support::kStatsFields) o.add(f.name, s.*f.member);
  return o;
}

// The start of a summary: the keys every tool's summary has.
inline Object summary(const char* tool, double wall_seconds, double rate, const char* rate_unit) {
  return Object().add("tool", tool).add("wall_seconds", wall_seconds).add("rate", rate).add("rate_unit", rate_unit);
}

// Writes a JSON text (Object::str()) and a newline to path, through a temporary name in the same directory, so
// a reader never sees half a summary. Throws dimmap::Error naming the file.
inline void write_file(const std::string& path, const std::string& json) {
  try {
    support::write_file_atomically(path, json + "\n", support::Durability::no_sync);
  } catch (const Error& e) {
    throw Error("cannot write the JSON summary '" + path + "': " + e.what());
  }
}

}  // namespace dimmap::json
