// The keeper's writeback starts: the dirty pages of a range given to the starter are written,
// through io_uring where the kernel allows it and with DIMMAP_IO=threads by a call made at
// once, and a starter with its depth in flight refuses more until they return.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "pagecache_engine.hpp"
#include "test_files.hpp"
#include "writeback_starter.hpp"

namespace {

using dimmap::detail::WritebackStarter;
using dimmap::detail::pagecache::dirty_pages;
using dimmap::test::kPage;
using dimmap::test::TempFile;

constexpr size_t kPages = 64;

// Makes every page of f dirty in the page cache (the file is written and clean before).
void dirty_all(const TempFile& f) {
  std::vector<char> page(kPage, 'x');
  for (size_t p = 0; p < kPages; ++p)
    ASSERT_EQ(pwrite(f.fd(), page.data(), kPage, static_cast<off_t>(p * kPage)), static_cast<ssize_t>(kPage));
}

void expect_started_writes_land(bool want_io_uring) {
  if (!want_io_uring) setenv("DIMMAP_IO", "threads", 1);
  WritebackStarter starter(4);
  unsetenv("DIMMAP_IO");
  if (!want_io_uring) {
    EXPECT_FALSE(starter.asynchronous());
  }
  TempFile f(kPages);
  dirty_all(f);
  ASSERT_EQ(dirty_pages(f.fd(), 0, 0), kPages) << "the pages written are dirty until written back";
  ASSERT_TRUE(starter.start(f.fd(), 0, kPages / 2 * kPage, 7));
  ASSERT_TRUE(starter.start(f.fd(), kPages / 2 * kPage, kPages / 2 * kPage, 8));
  starter.submit();
  std::vector<uint64_t> tags;
  starter.finished(&tags, true);
  EXPECT_EQ(tags, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(starter.in_flight(), 0u);
  // The starts handed the pages to writeback; once it is done none is dirty.
  ASSERT_EQ(sync_file_range(f.fd(), 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE), 0);
  EXPECT_EQ(dirty_pages(f.fd(), 0, 0), 0u);
}

TEST(WritebackStarter, StartsTheWritebackOfItsRanges) { expect_started_writes_land(true); }

TEST(WritebackStarter, StartsTheWritebackOfItsRangesWithoutIoUring) { expect_started_writes_land(false); }

TEST(WritebackStarter, RefusesMoreThanItsDepthUntilTheyReturn) {
  WritebackStarter starter(1);
  if (!starter.asynchronous()) GTEST_SKIP() << "io_uring is not available here: every start is made at once";
  TempFile f(kPages);
  dirty_all(f);
  ASSERT_TRUE(starter.start(f.fd(), 0, kPage, 1));
  EXPECT_FALSE(starter.start(f.fd(), kPage, kPage, 2)) << "one start in flight is the depth";
  starter.submit();
  std::vector<uint64_t> tags;
  starter.finished(&tags, true);
  EXPECT_EQ(tags, std::vector<uint64_t>{1});
  EXPECT_TRUE(starter.start(f.fd(), kPage, kPage, 2));
  starter.submit();
  starter.finished(&tags, true);
  EXPECT_EQ(tags, (std::vector<uint64_t>{1, 2}));
}

}  // namespace
