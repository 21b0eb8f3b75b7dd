// c_boundary.hpp - no C++ exception crosses the C API or ends a thread of the runtime.
// Every extern "C" function runs its
// body through one of these guards: an exception (std::bad_alloc from a container, a
// std::system_error from a thread that cannot start, an out_of_range from .at()) becomes
// the usual failure of that function - -ENOMEM, the error's errno, or -EIO - with the text in
// dimmap_last_error() and the log, instead of std::terminate in the caller's program.
#pragma once

#include <cerrno>
#include <exception>
#include <new>
#include <system_error>

#include "log.hpp"

namespace dimmap::detail {

// Inside a catch block: records the exception being handled and returns its -errno.
inline int exception_status(const char* where) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return fail(ENOMEM, "%s: out of memory", where);
  } catch (const std::system_error& e) {
    return fail(e.code().value() > 0 ? e.code().value() : EIO, "%s: %s", where, e.what());
  } catch (const std::exception& e) {
    return fail(EIO, "%s: internal error: %s", where, e.what());
  } catch (...) {
    return fail(EIO, "%s: internal error", where);
  }
}

// For functions that return 0 or -errno.
template <class F>
int guard_status(const char* where, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return exception_status(where);
  }
}

// For functions that return -1 and set errno (munmap, msync).
template <class F>
int guard_posix(const char* where, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    errno = -exception_status(where);
    return -1;
  }
}

// For functions that return a value, and `failed` (with errno set) when they fail.
template <class T, class F>
T guard_value(const char* where, T failed, F&& body) noexcept {
  try {
    return body();
  } catch (...) {
    errno = -exception_status(where);
    return failed;
  }
}

template <class F>
void guard_void(const char* where, F&& body) noexcept {
  try {
    body();
  } catch (...) {
    exception_status(where);
  }
}

// The body of a thread that others wait on (a fault service thread, an I/O worker): an
// exception is logged and the body entered again, because a thread that ended would leave
// the faults or I/O it serves waiting forever. Returns when the body returns.
template <class F>
void keep_serving(const char* name, F&& body) noexcept {
  for (;;) {
    try {
      body();
      return;
    } catch (const std::exception& e) {
      log(LogLevel::error, "%s: %s; serving on", name, e.what());
    } catch (...) {
      log(LogLevel::error, "%s: unknown exception; serving on", name);
    }
  }
}

}  // namespace dimmap::detail
