// log.cpp - runtime logging and the thread-local last-error text.
#include "log.hpp"

#include <dimmap/dimmap.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace dimmap::detail {
namespace {

thread_local char last_error[512];

LogLevel configured_level() {
  static const LogLevel level = [] {
    const char* env = std::getenv("DIMMAP_LOG");
    if (!env || !*env) return LogLevel::warn;
    if (!std::strcmp(env, "error")) return LogLevel::error;
    if (!std::strcmp(env, "info")) return LogLevel::info;
    if (!std::strcmp(env, "debug")) return LogLevel::debug;
    return LogLevel::warn;
  }();
  return level;
}

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

void vlog(LogLevel level, const char* fmt, va_list ap) {
  char line[768];
  int n = std::snprintf(line, sizeof line, "dimmap: %s: ", level_name(level));
  std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  std::strcat(line, "\n");
  std::fputs(line, stderr);  // one call per line so threads do not interleave
}

}  // namespace

bool log_enabled(LogLevel level) { return level <= configured_level(); }

void log(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  va_list ap;
  va_start(ap, fmt);
  vlog(level, fmt, ap);
  va_end(ap);
}

int fail(int err, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  log(LogLevel::info, "%s", last_error);
  return -err;
}

void clear_error() { last_error[0] = '\0'; }

}  // namespace dimmap::detail

extern "C" const char* dimmap_last_error(void) { return dimmap::detail::last_error; }
