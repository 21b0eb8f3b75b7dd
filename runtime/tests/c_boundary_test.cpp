// The guards that keep C++ exceptions from crossing the C API or ending a runtime thread.
#include <dimmap/dimmap.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "c_boundary.hpp"

namespace {

using namespace dimmap::detail;

TEST(CBoundary, ExceptionsBecomeTheirErrno) {
  EXPECT_EQ(guard_status("f", []() -> int { throw std::bad_alloc(); }), -ENOMEM);
  EXPECT_NE(std::string(dimmap_last_error()).find("f: out of memory"), std::string::npos);
  EXPECT_EQ(guard_status("g", []() -> int { throw std::system_error(EAGAIN, std::generic_category(), "thread"); }),
            -EAGAIN);
  EXPECT_EQ(guard_status("h", []() -> int { return std::vector<int>().at(3); }), -EIO);
  EXPECT_NE(std::string(dimmap_last_error()).find("h: internal error"), std::string::npos);
  EXPECT_EQ(guard_status("i", []() -> int { throw 42; }), -EIO);
  EXPECT_EQ(guard_status("j", []() -> int { return -EBADF; }), -EBADF);  // no exception: as is
}

TEST(CBoundary, PosixAndValueFunctionsSetErrno) {
  errno = 0;
  EXPECT_EQ(guard_posix("munmap", []() -> int { throw std::bad_alloc(); }), -1);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  void* p = guard_value<void*>("mmap", MAP_FAILED, []() -> void* { throw std::runtime_error("x"); });
  EXPECT_EQ(p, MAP_FAILED);
  EXPECT_EQ(errno, EIO);
  int called = 0;
  guard_void("v", [&] {
    called++;
    throw std::bad_alloc();
  });
  EXPECT_EQ(called, 1);
}

TEST(CBoundary, AThreadBodyThatThrowsIsEnteredAgain) {
  int entries = 0;
  keep_serving("test thread", [&] {
    if (++entries < 3) throw std::runtime_error("transient");
  });
  EXPECT_EQ(entries, 3);
}

}  // namespace
