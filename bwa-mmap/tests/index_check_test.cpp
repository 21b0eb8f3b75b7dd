// index_check_test.cpp - the index verifier accepts what upstream `bwa index` writes and
// names the file for each kind of damage.
#include <bwammap/index_check.hpp>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "test_util.hpp"

namespace bwammap {
namespace {

using testing::TempDir;

class IndexCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two contigs of known length, indexed by the bwa binary (the independent reference).
    testing::write_file(dir_.file("ref.fa"), testing::random_fasta({3000, 1999}, 11));
    ASSERT_EQ(testing::run("bwa index -p " + prefix() + " " + dir_.file("ref.fa") + " 2>/dev/null"), 0)
        << "the bwa binary (Debian package bwa) is needed";
  }
  std::string prefix() const { return dir_.file("ref"); }
  std::string path(const char* suffix) const { return prefix() + suffix; }

  // The message check_index throws, or "" if it accepts.
  std::string error() const {
    try {
      check_index(prefix());
    } catch (const dimmap::Error& e) {
      return e.what();
    }
    return "";
  }

  TempDir dir_;
};

TEST_F(IndexCheckTest, AcceptsUpstreamIndexAndReadsItsLayout) {
  const IndexLayout x = check_index(prefix());
  EXPECT_EQ(x.l_pac, 4999);
  EXPECT_EQ(x.n_seqs, 2);
  EXPECT_EQ(x.n_holes, 0);
  EXPECT_EQ(x.seq_len, 2u * 4999);
  EXPECT_EQ(x.sa_intv, 32);  // bwa index's sampling interval
  EXPECT_EQ(x.L2[4], x.seq_len);
  struct stat st;
  ASSERT_EQ(stat(path(".bwt").c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), kBwtHeaderBytes + 4 * x.bwt_words);
}

TEST_F(IndexCheckTest, MissingFile) {
  ASSERT_EQ(unlink(path(".sa").c_str()), 0);
  const std::string e = error();
  EXPECT_NE(e.find("ref.sa"), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST_F(IndexCheckTest, EmptyFile) {
  ASSERT_EQ(truncate(path(".ann").c_str(), 0), 0);
  const std::string e = error();
  EXPECT_NE(e.find("ref.ann"), std::string::npos) << e;
  EXPECT_NE(e.find("empty"), std::string::npos) << e;
}

TEST_F(IndexCheckTest, TruncatedBinaryFiles) {
  for (const char* suffix : {".bwt", ".sa", ".pac"}) {
    SetUp();  // a fresh copy each round
    struct stat st;
    ASSERT_EQ(stat(path(suffix).c_str(), &st), 0);
    ASSERT_EQ(truncate(path(suffix).c_str(), st.st_size - 8), 0);
    const std::string e = error();
    EXPECT_NE(e.find(std::string("ref") + suffix), std::string::npos) << suffix << ": " << e;
  }
}

TEST_F(IndexCheckTest, TruncatedTextFiles) {
  std::string ann = testing::read_file(path(".ann"));
  testing::write_file(path(".ann"), ann.substr(0, ann.size() / 2));
  EXPECT_NE(error().find("ref.ann"), std::string::npos) << error();
  SetUp();
  std::string amb = testing::read_file(path(".amb"));
  testing::write_file(path(".amb"), "99 1 0\n");
  EXPECT_NE(error().find("ref.amb"), std::string::npos) << error();
}

TEST_F(IndexCheckTest, FilesFromAnotherIndex) {
  // Same length, different sequence: sizes agree but the BWT headers do not.
  testing::write_file(dir_.file("other.fa"), testing::random_fasta({3000, 1999}, 12));
  ASSERT_EQ(testing::run("bwa index -p " + dir_.file("other") + " " + dir_.file("other.fa") + " 2>/dev/null"), 0);
  ASSERT_EQ(rename(dir_.file("other.sa").c_str(), path(".sa").c_str()), 0);
  const std::string e = error();
  EXPECT_NE(e.find("ref.sa"), std::string::npos) << e;
  EXPECT_NE(e.find("does not belong"), std::string::npos) << e;
}

TEST_F(IndexCheckTest, PacOfAnotherLength) {
  testing::write_file(dir_.file("short.fa"), testing::random_fasta({1000}, 13));
  ASSERT_EQ(testing::run("bwa index -p " + dir_.file("short") + " " + dir_.file("short.fa") + " 2>/dev/null"), 0);
  ASSERT_EQ(rename(dir_.file("short.pac").c_str(), path(".pac").c_str()), 0);
  EXPECT_NE(error().find("ref.pac"), std::string::npos) << error();
}

TEST(IndexCheckSizes, MatchBwaFormulas) {
  // E. coli 536 (l_pac 4938920): sizes of the files `bwa index` writes for it.
  EXPECT_EQ(kBwtHeaderBytes + 4 * expected_bwt_words(2 * 4938920ull), 4939004u);
  EXPECT_EQ(expected_pac_bytes(4938920), 1234732u);
  // Lambda phage (l_pac 48502): .pac 12127 bytes.
  EXPECT_EQ(expected_pac_bytes(48502), 12127u);
}

}  // namespace
}  // namespace bwammap
