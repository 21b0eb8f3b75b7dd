// input_check_test.cpp - bad reference and read files are refused with the file named;
// good ones (plain or gzip) pass and are left positioned for libbwa's parser.
#include <bwa/bwa.h>
#include <bwammap/index_build.hpp>
#include <bwammap/input_check.hpp>
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "test_util.hpp"

namespace bwammap {
namespace {

using testing::TempDir;

void write_gz(const std::string& path, const std::string& content) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, content.data(), static_cast<unsigned>(content.size())), static_cast<int>(content.size()));
  gzclose(gz);
}

std::string fasta_error(const std::string& path) {
  try {
    check_reference_fasta(path);
  } catch (const dimmap::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ReferenceFasta, GoodFilesPass) {
  TempDir dir;
  testing::write_file(dir.file("a.fa"), ">x\nACGT\n");
  write_gz(dir.file("b.fa.gz"), "\n>x desc\n\n>y\nNNNN\n");
  testing::write_file(dir.file("c.fa"), ">x\n");  // a second record has the bases
  testing::write_file(dir.file("c.fa"), ">empty\n>x\nA\n");
  EXPECT_EQ(fasta_error(dir.file("a.fa")), "");
  EXPECT_EQ(fasta_error(dir.file("b.fa.gz")), "");
  EXPECT_EQ(fasta_error(dir.file("c.fa")), "");
}

TEST(ReferenceFasta, TextBytesOfPlainAndGzipFiles) {
  TempDir dir;
  const std::string text = ">x\n" + std::string(100000, 'A') + "\n";
  testing::write_file(dir.file("a.fa"), text);
  write_gz(dir.file("a.fa.gz"), text);
  EXPECT_EQ(reference_text_bytes(dir.file("a.fa")), text.size());
  EXPECT_EQ(reference_text_bytes(dir.file("a.fa.gz")), text.size());
}

// Auto picks bwtsw only where IS's 10 bytes per base would not fit the memory limit.
TEST(ReferenceFasta, AutoAlgorithmFollowsTheMemoryLimit) {
  TempDir dir;
  write_gz(dir.file("g.fa.gz"), ">x\n" + std::string(100000, 'C') + "\n");  // 1M for IS
  IndexOptions o;
  o.fasta = dir.file("g.fa.gz");
  std::string why;
  EXPECT_EQ(choose_algorithm(o, &why), BWTALGO_AUTO);  // limit unknown: bwa's own rule
  o.memory_limit = 64ull << 20;
  EXPECT_EQ(choose_algorithm(o, &why), BWTALGO_AUTO);
  EXPECT_EQ(why, "");
  o.memory_limit = 512ull << 10;
  EXPECT_EQ(choose_algorithm(o, &why), BWTALGO_BWTSW);
  EXPECT_NE(why.find("memory limit of 512K"), std::string::npos) << why;
  o.algorithm = "is";  // asked for: kept
  why.clear();
  EXPECT_EQ(choose_algorithm(o, &why), BWTALGO_IS);
  EXPECT_EQ(why, "");
}

TEST(ReferenceFasta, BadFilesNameTheFileAndTheProblem) {
  TempDir dir;
  testing::write_file(dir.file("empty.fa"), "");
  testing::write_file(dir.file("blank.fa"), "\n \n");
  testing::write_file(dir.file("headers.fa"), ">one\n>two\n\n");
  testing::write_file(dir.file("text.fa"), "hello world\n");
  testing::write_file(dir.file("broken.fa.gz"), std::string("\x1f\x8b\x08\x00garbage", 12));
  struct Case {
    const char* file;
    const char* words;
  };
  for (const Case& c : {Case{"missing.fa", "No such file"}, Case{"empty.fa", "empty"}, Case{"blank.fa", "white space"},
                        Case{"headers.fa", "no sequence"}, Case{"text.fa", "not a FASTA"}, Case{"broken.fa.gz", ""}}) {
    const std::string e = fasta_error(dir.file(c.file));
    EXPECT_NE(e.find(c.file), std::string::npos) << c.file << ": " << e;
    EXPECT_NE(e.find(c.words), std::string::npos) << c.file << ": " << e;
  }
  EXPECT_NE(fasta_error(dir.path()).find("directory"), std::string::npos);
}

TEST(ReadsFile, FastqAndFastaAreReadFromTheFirstRecord) {
  TempDir dir;
  testing::write_file(dir.file("r.fq"), "\n@r1\nACGT\n+\nIIII\n");
  write_gz(dir.file("r.fa.gz"), ">r1\nACGT\n");
  for (const char* name : {"r.fq", "r.fa.gz"}) {
    ReadsFile r(dir.file(name));
    EXPECT_FALSE(r.empty());
    char c = 0;
    ASSERT_EQ(gzread(r.gz(), &c, 1), 1);
    EXPECT_TRUE(c == '@' || c == '>') << name << " gave '" << c << "'";
  }
}

TEST(ReadsFile, EmptyIsAcceptedOtherContentIsNot) {
  TempDir dir;
  testing::write_file(dir.file("empty.fq"), "");
  EXPECT_TRUE(ReadsFile(dir.file("empty.fq")).empty());
  testing::write_file(dir.file("sam.txt"), "@HD\tVN:1.6\n");  // starts with '@': looks like FASTQ to bwa too
  EXPECT_FALSE(ReadsFile(dir.file("sam.txt")).empty());
  testing::write_file(dir.file("bin.dat"), std::string("\x00\x01\x02", 3));
  testing::write_file(dir.file("csv.txt"), "id,seq\n1,ACGT\n");
  for (const char* name : {"bin.dat", "csv.txt", "missing.fq"}) {
    try {
      ReadsFile r(dir.file(name));
      ADD_FAILURE() << name << " accepted";
    } catch (const dimmap::Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace bwammap
