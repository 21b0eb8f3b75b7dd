// Reads parsed ahead on their own thread (BackgroundReads): the same records, in file order
// and in blocks of the size asked for, whatever the look-ahead (or read by the caller); a reader error comes after the
// blocks read before it, with the reader's message; stopping early joins the thread.
#include <kmer/classify_pipeline.hpp>
#include <kmer/error.hpp>

#include "test_util.hpp"

namespace {

using kmer_test::TempDir;

std::string fastq(size_t reads, size_t length) {
  std::string text;
  for (size_t i = 0; i < reads; ++i) {
    std::string seq;
    for (size_t j = 0; j < length; ++j) seq += "ACGT"[(i * 7 + j * 3) % 4];
    text += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(length, 'I') + "\n";
  }
  return text;
}

TEST(BackgroundReads, SameRecordsInOrderWhateverTheLookAhead) {
  TempDir d;
  const std::string path = d.write("reads.fq", fastq(1000, 40));
  for (uint64_t ahead : {uint64_t{0}, uint64_t{1}, uint64_t{500}, uint64_t{1} << 40}) {
    kmer::ReadSource source({path, "", false, {}});
    // ahead 0: no thread of its own, the caller reads each block
    kmer::BackgroundReads reads(source, 64, ahead, 18, ahead != 0);
    std::vector<kmer::SequenceRecord> block;
    size_t seen = 0, blocks = 0;
    while (size_t n = reads.next_batch(block)) {
      ASSERT_EQ(n, block.size());
      EXPECT_EQ(n, std::min<size_t>(64, 1000 - seen)) << "block " << blocks;
      for (const auto& r : block) EXPECT_EQ(r.id, "r" + std::to_string(seen++));
      ++blocks;
    }
    EXPECT_EQ(seen, 1000u) << "look-ahead " << ahead;
    EXPECT_EQ(blocks, 16u);
    EXPECT_EQ(reads.next_batch(block), 0u);  // stays at the end
  }
}

TEST(BackgroundReads, ReaderErrorComesAfterTheBlocksBeforeIt) {
  TempDir d;
  const std::string path = d.write("bad.fq", fastq(100, 30) + "@broken\nACGT\n-\nIIII\n");
  kmer::ReadSource source({path, "", false, {}});
  kmer::BackgroundReads reads(source, 10, 1 << 20, 18);
  std::vector<kmer::SequenceRecord> block;
  size_t seen = 0;
  std::string error;
  try {
    while (size_t n = reads.next_batch(block)) seen += n;
  } catch (const kmer::Error& e) {
    error = e.what();
  }
  EXPECT_EQ(seen, 100u);
  EXPECT_NE(error.find("bad.fq"), std::string::npos) << error;
}

TEST(BackgroundReads, StoppingEarlyJoinsTheThread) {
  TempDir d;
  const std::string path = d.write("reads.fq", fastq(5000, 50));
  kmer::ReadSource source({path, "", false, {}});
  {
    kmer::BackgroundReads reads(source, 16, 100, 18);
    std::vector<kmer::SequenceRecord> block;
    ASSERT_EQ(reads.next_batch(block), 16u);
    EXPECT_EQ(block.front().id, "r0");
  }  // the destructor stops the reader mid-file
  kmer::SequenceRecord rec;
  ASSERT_TRUE(source.next(rec));  // the source is left where the reader stopped, still usable
  EXPECT_EQ(rec.id.substr(0, 1), "r");
}

}  // namespace
