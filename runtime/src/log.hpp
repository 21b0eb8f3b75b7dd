// log.hpp - runtime logging (DIMMAP_LOG) and the thread-local last-error text.
#pragma once

#include <cstdarg>

namespace dimmap::detail {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

bool log_enabled(LogLevel level);
void log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Records a failure for dimmap_last_error() and returns -err, so call sites read
// `return fail(EINVAL, "...")`. The text is also logged at info level.
int fail(int err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void clear_error();

}  // namespace dimmap::detail
