// FASTA/FASTQ reader: good input (plain, gzip, multi-line) and malformed or truncated records,
// each refused with the file name and line in the message.
#include <kmer/error.hpp>
#include <kmer/read_pairs.hpp>
#include <kmer/sequence_reader.hpp>

#include <zlib.h>

#include "test_util.hpp"

namespace {

using kmer_test::TempDir;

std::vector<kmer::SequenceRecord> read_all(const std::string& path) {
  kmer::SequenceReader r(path);
  std::vector<kmer::SequenceRecord> out;
  kmer::SequenceRecord rec;
  while (r.next(rec)) out.push_back(rec);
  return out;
}

std::string error_of(const std::string& path) {
  try {
    read_all(path);
  } catch (const kmer::Error& e) {
    return e.what();
  }
  return "";
}

void gzip_file(const std::string& text, const std::string& path, bool truncate = false) {
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  if (truncate) {
    FILE* f = std::fopen(path.c_str(), "rb+");
    std::fseek(f, 0, SEEK_END);
    const long n = std::ftell(f);
    std::fclose(f);
    ASSERT_EQ(::truncate(path.c_str(), n / 2), 0);
  }
}

TEST(Reader, FastaMultiLineAndFastqMixed) {
  TempDir d;
  const auto p = d.write("a.fa", ">one desc\nACGT\nNNac\n\n>two\nGG\n");
  auto recs = read_all(p);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].id, "one");
  EXPECT_EQ(recs[0].sequence, "ACGTNNac");
  EXPECT_EQ(recs[1].sequence, "GG");
  const auto q = d.write("a.fq", "@r1 x\nACGT\n+\n@@@@\n@r2\nAC\nGT\n+r2\nII\nII\n");
  recs = read_all(q);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].sequence, "ACGT");  // quality starting with '@' is quality
  EXPECT_EQ(recs[1].id, "r2");
  EXPECT_EQ(recs[1].sequence, "ACGT");
}

TEST(Reader, GzipEqualsPlain) {
  TempDir d;
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "@r" + std::to_string(i) + "\nACGTACGTAC\n+\nIIIIIIIIII\n";
  const auto plain = d.write("r.fq", text);
  gzip_file(text, d.file("r.fq.gz"));
  const auto a = read_all(plain), b = read_all(d.file("r.fq.gz"));
  ASSERT_EQ(a.size(), 5000u);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_EQ(b.back().id, a.back().id);
}

TEST(Reader, MalformedInputNamesFileAndLine) {
  TempDir d;
  std::string e = error_of(d.write("noplus.fq", "@r1\nACGT\n@r2\nACGT\n+\nIIII\n"));
  EXPECT_NE(e.find("noplus.fq:3"), std::string::npos) << e;
  EXPECT_NE(e.find("'+'"), std::string::npos) << e;
  e = error_of(d.write("noplus_eof.fq", "@r1\nACGT\n"));
  EXPECT_NE(e.find("no '+' line"), std::string::npos) << e;
  e = error_of(d.write("unequal.fq", "@r1\nACGT\n+\nIIIII\n"));
  EXPECT_NE(e.find("unequal.fq:4"), std::string::npos) << e;
  EXPECT_NE(e.find("4 bases but quality has 5"), std::string::npos) << e;
  e = error_of(d.write("short.fq", "@r1\nACGT\n+\nII\n"));
  EXPECT_NE(e.find("quality"), std::string::npos) << e;
  e = error_of(d.write("empty.fa", ""));
  EXPECT_NE(e.find("empty.fa: empty file"), std::string::npos) << e;
  e = error_of(d.write("blank.fa", "\n\n"));
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  e = error_of(d.write("junk.fa", "ACGT\n"));
  EXPECT_NE(e.find("junk.fa:1"), std::string::npos) << e;
  e = error_of(d.file("missing.fa"));
  EXPECT_NE(e.find("missing.fa: cannot open"), std::string::npos) << e;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += ">s" + std::to_string(i) + "\nACGTTGCAACGTTGCA\n";
  gzip_file(text, d.file("cut.fa.gz"), /*truncate=*/true);
  e = error_of(d.file("cut.fa.gz"));
  EXPECT_NE(e.find("cut.fa.gz"), std::string::npos) << e;
  EXPECT_NE(e.find("gzip"), std::string::npos) << e;
}

// A file cut anywhere inside a record is refused, naming the file, line and record; a cut
// between records cannot be seen (tests/truncated_reads.sh cuts real files at every byte).
TEST(Reader, TruncatedRecordsAreRefused) {
  TempDir d;
  struct Case {
    const char* name;
    const char* text;
    const char* expect;
  } cases[] = {
      {"cut_seq.fa", ">r1\nACGTACGT\n>r2\nACG", "cut_seq.fa:4: the file ends inside this line (no newline at the end) of record 'r2'"},
      {"header_only.fa", ">r1\nACGT\n>r2\n", "header_only.fa:3: FASTA record 'r2' has no sequence"},
      {"cut_header.fa", ">r1\nACGT\n>r2 des", "cut_header.fa:3: the file ends inside this line (no newline at the end) of record 'r2'"},
      {"cut_qual.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIIII", "cut_qual.fq:8: the file ends inside this line (no newline at the end) of record 'r2'"},
      {"cut_plus.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+", "cut_plus.fq:7: the file ends inside this line (no newline at the end) of record 'r2'"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(d.write(c.name, c.text));
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.name << ": " << e;
  }
}

// SAM (BAM and CRAM decode to the same records; tests/read_formats.sh covers those files):
// primary records only, reverse-strand bases turned back, names cut at the first blank.
TEST(Reader, SamPrimaryRecordsAsSequenced) {
  TempDir d;
  const std::string header = "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr\tLN:1000\n";
  const auto p = d.write("a.sam", header +
                                      "fwd\t0\tchr\t1\t60\t8M\t*\t0\t0\tACGTTGCA\tIIIIIIII\n"
                                      "rev\t16\tchr\t20\t60\t6M\t*\t0\t0\tAACCGN\tIIIIII\n"
                                      "rev\t256\tchr\t40\t0\t6M\t*\t0\t0\tAACCGN\tIIIIII\n"
                                      "fwd\t2048\tchr\t60\t0\t4M4H\t*\t0\t0\tACGT\tIIII\n"
                                      "unmapped\t4\t*\t0\t0\t*\t*\t0\t0\tGGGA\t*\n");
  kmer::SequenceReader r(p);
  EXPECT_EQ(r.format(), "SAM");
  std::vector<kmer::SequenceRecord> recs;
  kmer::SequenceRecord rec;
  while (r.next(rec)) recs.push_back(rec);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].id, "fwd");
  EXPECT_EQ(recs[0].sequence, "ACGTTGCA");
  EXPECT_EQ(recs[1].id, "rev");
  EXPECT_EQ(recs[1].sequence, "NCGGTT");  // reverse complement of the stored AACCGN
  EXPECT_EQ(recs[2].sequence, "GGGA");
  EXPECT_EQ(recs[2].line, 5u);  // record numbers count the skipped secondary ones too
  std::string e = error_of(d.write("noseq.sam", header + "r1\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n"));
  EXPECT_NE(e.find("noseq.sam: record 1 'r1' has no bases"), std::string::npos) << e;
  e = error_of(d.write("header_only.sam", header));
  EXPECT_NE(e.find("header_only.sam: no reads"), std::string::npos) << e;
  e = error_of(d.write("bad.sam", header + "r1\t0\tchr\tone\t60\t4M\t*\t0\t0\tACGT\tIIII\n"));
  EXPECT_NE(e.find("bad.sam: malformed, corrupt or truncated data before the first record"), std::string::npos) << e;
}

// Mates: joined with an N, named without /1; a missing or foreign mate names file and record.
TEST(Reader, PairsJoinMates) {
  TempDir d;
  const auto r1 = d.write("r1.fq", "@p1/1\nACGT\n+\nIIII\n@p2/1\nGGGG\n+\nIIII\n");
  const auto r2 = d.write("r2.fq", "@p1/2\nTTTT\n+\nIIII\n@p2/2\nCCCC\n+\nIIII\n");
  kmer::ReadSource pairs({r1, r2, false, {}});
  std::vector<kmer::SequenceRecord> batch;
  ASSERT_EQ(pairs.next_batch(batch, 10), 2u);
  EXPECT_EQ(batch[0].id, "p1");
  EXPECT_EQ(batch[0].sequence, "ACGTNTTTT");
  EXPECT_EQ(batch[1].sequence, "GGGGNCCCC");
  const auto il = d.write("il.fq", "@p1/1\nACGT\n+\nIIII\n@p1/2\nTTTT\n+\nIIII\n@p2/1\nGG\n+\nII\n");
  kmer::ReadSource interleaved({il, "", true, {}});
  std::string e;
  try {
    while (interleaved.next_batch(batch, 10) > 0) {
    }
  } catch (const kmer::Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("il.fq:9: interleaved pairs: record 'p2/1' is the last one and has no mate"), std::string::npos) << e;
  const auto other = d.write("other.fq", "@p1/2\nTTTT\n+\nIIII\n@q2/2\nCCCC\n+\nIIII\n");
  kmer::ReadSource wrong({r1, other, false, {}});
  e.clear();
  try {
    wrong.next_batch(batch, 10);
  } catch (const kmer::Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("other.fq:5: record 'q2/2' is not the mate of 'p2/1'"), std::string::npos) << e;
}

}  // namespace
