// Tests of LRIOT's pattern files: creation, the verifier, and what it catches.
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lriot/pattern.hpp>
#include <lriot/sequence.hpp>
#include <unistd.h>

#include <filesystem>

#include <dimmap/testing/temp_dir.hpp>

namespace lriot {
namespace {

using dimmap::testing::TempDir;


uint64_t word_at(const std::string& path, uint64_t page, size_t word) {
  int fd = open(path.c_str(), O_RDONLY);
  uint64_t v = 0;
  EXPECT_EQ(pread(fd, &v, 8, static_cast<off_t>(page * kPageSize + word * 8)), 8);
  close(fd);
  return v;
}

void write_word(const std::string& path, uint64_t page, size_t word, uint64_t v) {
  int fd = open(path.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, &v, 8, static_cast<off_t>(page * kPageSize + word * 8)), 8);
  close(fd);
}

TEST(PatternFile, CreatedFileHasTheDocumentedLayout) {
  TempDir dir;
  const std::string path = dir.file("p.dat");
  create_pattern_file(path, 1 << 20);
  EXPECT_EQ(std::filesystem::file_size(path), 1u << 20);
  EXPECT_EQ(word_at(path, 0, 0), 0x4c52494f54000000ull);
  EXPECT_EQ(word_at(path, 37, 0), 0x4c52494f54000000ull ^ 37);
  EXPECT_EQ(word_at(path, 37, 1), 0u);
  EXPECT_EQ(word_at(path, 37, 2), mix64(37 * 512 + 2));
  EXPECT_EQ(word_at(path, 255, 511), mix64(255 * 512 + 511));
  FileCheck check = verify_pattern_file(path);
  EXPECT_EQ(check.pages, 256u);
  EXPECT_EQ(check.bad_pages, 0u);
  EXPECT_EQ(check.counter_sum, 0u);
  // Only the file itself is left: the temporary name was renamed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(PatternFile, VerifierFindsCorruptionAndSumsCounters) {
  TempDir dir;
  const std::string path = dir.file("p.dat");
  create_pattern_file(path, 64 * kPageSize);
  write_word(path, 3, kCounterWord, 5);
  write_word(path, 9, kCounterWord, 7);
  FileCheck counters = verify_pattern_file(path);
  EXPECT_EQ(counters.bad_pages, 0u) << "counters may change";
  EXPECT_EQ(counters.counter_sum, 12u);
  write_word(path, 41, 300, 12345);
  write_word(path, 50, 0, 0);
  FileCheck bad = verify_pattern_file(path);
  EXPECT_EQ(bad.bad_pages, 2u);
  EXPECT_EQ(bad.first_bad_page, 41u);
}

TEST(PatternFile, CreateRejectsBadSizesAndLeavesNothing) {
  TempDir dir;
  const std::string path = dir.file("p.dat");
  EXPECT_THROW(create_pattern_file(path, 0), dimmap::Error);
  EXPECT_THROW(create_pattern_file(path, 5000), dimmap::Error);
  EXPECT_THROW(create_pattern_file(dir.file("missing/dir/p.dat"), 4096), dimmap::Error);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 0);
}

TEST(PatternFile, CreateReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.file("p.dat");
  create_pattern_file(path, 8 * kPageSize);
  write_word(path, 1, 0, 99);
  create_pattern_file(path, 4 * kPageSize);
  EXPECT_EQ(std::filesystem::file_size(path), 4 * kPageSize);
  EXPECT_EQ(verify_pattern_file(path).bad_pages, 0u);
}

}  // namespace
}  // namespace lriot
