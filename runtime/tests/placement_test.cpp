// The C++ placements: the same Region code over memory, mmap and dimmap, on real files.
#include <dimmap/placement.hpp>
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "test_files.hpp"

namespace dimmap::test {
namespace {

std::string scratch_dir() { return dimmap::testing::test_scratch_root(); }

std::vector<Placement> all_placements(const std::shared_ptr<Buffer>& buffer) {
  return {Placement::anonymous(), Placement::memory("/dev/shm"), Placement::mmap(scratch_dir()),
          Placement::dimmap(scratch_dir(), buffer)};
}

class PlacementTest : public ::testing::Test {
 protected:
  std::shared_ptr<Buffer> buffer = Buffer::create(64 * kPage);
};

TEST_F(PlacementTest, OpenReadsTheFileOnEveryPlacement) {
  const size_t pages = 256;  // 4x the dimmap buffer
  TempFile f(pages);
  for (const Placement& p : all_placements(buffer)) {
    Region r = Region::open(p, f.path(), Access::read_only);
    ASSERT_EQ(r.size(), pages * kPage) << p.describe();
    const uint64_t* w = r.as<uint64_t>();
    for (size_t pg = 0; pg < pages; ++pg) ASSERT_EQ(w[pg * 512 + 9], pattern_word(pg, 9, 0)) << p.describe();
  }
}

TEST_F(PlacementTest, ScratchRegionsAreZeroedWritableAndLeaveNoFile) {
  const size_t bytes = 512 * kPage;
  for (const Placement& p : all_placements(buffer)) {
    Region r = Region::scratch(p, bytes, "test");
    uint64_t* w = r.as<uint64_t>();
    for (size_t i = 0; i < bytes / 8; i += 97) ASSERT_EQ(w[i], 0u) << p.describe();
    for (size_t i = 0; i < bytes / 8; i += 97) w[i] = i * 3 + 1;
    for (size_t i = 0; i < bytes / 8; i += 97) ASSERT_EQ(w[i], i * 3 + 1) << p.describe();
    r.close();
    EXPECT_TRUE(r.empty());
  }
}

TEST_F(PlacementTest, CreatedFilesKeepTheirContents) {
  for (const Placement& p : all_placements(buffer)) {
    const std::string path = scratch_dir() + "/dimmap-placement-create-" + std::to_string(getpid());
    {
      Region r = Region::create(p, path, 300 * kPage);
      uint64_t* w = r.as<uint64_t>();
      for (size_t pg = 0; pg < 300; ++pg) w[pg * 512] = pattern_word(pg, 0, 7);
      r.sync();
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<uint64_t> page(512);
    for (size_t pg = 0; pg < 300; ++pg) {
      in.read(reinterpret_cast<char*>(page.data()), kPage);
      ASSERT_EQ(page[0], pattern_word(pg, 0, 7)) << p.describe() << " page " << pg;
      ASSERT_EQ(page[1], 0u);
    }
    unlink(path.c_str());
  }
}

TEST_F(PlacementTest, ReadWriteOpenOnStorageWritesThrough) {
  const size_t pages = 128;
  for (const Placement& p : {Placement::mmap(scratch_dir()), Placement::dimmap(scratch_dir(), buffer)}) {
    TempFile f(pages);
    {
      Region r = Region::open(p, f.path(), Access::read_write);
      r.as<uint64_t>()[77 * 512 + 5] = pattern_word(77, 5, 3);
    }  // destructor syncs and unmaps
    EXPECT_EQ(f.word_on_disk(77, 5), pattern_word(77, 5, 3)) << p.describe();
  }
}

TEST_F(PlacementTest, ErrorsNameTheFileAndTheProblem) {
  auto message_of = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([&] { Region::open(Placement::mmap("."), "/no/such/file", Access::read_only); })
                .find("/no/such/file"),
            std::string::npos);
  TempFile f(4);
  EXPECT_NE(message_of([&] { Region::open(Placement::memory(), f.path(), Access::read_write); }).find("read-only"),
            std::string::npos);
  const std::string empty = scratch_dir() + "/dimmap-empty-" + std::to_string(getpid());
  std::ofstream(empty).close();
  EXPECT_NE(message_of([&] { Region::open(Placement::mmap("."), empty, Access::read_only); }).find("empty"),
            std::string::npos);
  unlink(empty.c_str());
  EXPECT_NE(message_of([&] { Region::scratch(Placement::mmap("/no/such/dir"), kPage, "x"); }).find("/no/such/dir"),
            std::string::npos);
  EXPECT_NE(message_of([&] { Region::scratch(Placement::anonymous(), 0, "x"); }).find("empty"), std::string::npos);
  EXPECT_THROW(parse_backend("tape"), Error);
  EXPECT_THROW(Placement::dimmap(".", nullptr), Error);
  EXPECT_THROW(Buffer::create(4 * kPage), Error) << "a buffer of a few pages is refused";
}

TEST_F(PlacementTest, BuffersShareTheirBudgetAcrossRegions) {
  const size_t pages = 200;
  TempFile a(pages, "dimmap-a"), b(pages, "dimmap-b");
  Placement p = Placement::dimmap(scratch_dir(), buffer);
  Region ra = Region::open(p, a.path(), Access::read_only);
  Region rb = Region::open(p, b.path(), Access::read_only);
  for (size_t i = 0; i < pages; ++i) {
    const size_t pg = i * 7 % pages;  // not sequential: no read-ahead
    ASSERT_EQ(ra.as<uint64_t>()[pg * 512], pattern_word(pg, 0, 0));
    ASSERT_EQ(rb.as<uint64_t>()[pg * 512], pattern_word(pg, 0, 0));
  }
  dimmap_stats_t s = buffer->stats();
  // Every page of both files entered the one buffer (on the pagecache engine some more than
  // once: fault-around maps cached neighbours, which may leave and come back)...
  EXPECT_GE(s.misses, 2 * pages);
  // ...which held no more than its size for both.
  EXPECT_LE(s.resident_pages, 64u);
}

}  // namespace
}  // namespace dimmap::test
