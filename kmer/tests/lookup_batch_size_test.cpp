// The sorted lookup batch chosen from the memory limit (choose_lookup_batch): it grows with
// the limit when the DB does not fit, leaves the DI-MMAP buffer and the reserves alone, stays
// at the default when the DB fits, and is split between ranks sharing a node.
#include <kmer/classify.hpp>
#include <kmer/commands.hpp>
#include <kmer/lookup_batch_size.hpp>

#include <gtest/gtest.h>

namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

kmer::LookupBatchInputs inputs(uint64_t limit, uint64_t buffer, uint64_t db) {
  kmer::LookupBatchInputs in;
  in.limit_bytes = limit;
  in.limit_source = "test";
  in.buffer_bytes = buffer;
  in.db_bytes = db;
  return in;
}

TEST(LookupBatchSize, MmapTakesAShareOfWhatTheReservesLeave) {
  const auto c = kmer::choose_lookup_batch(inputs(124 * MiB, 0, 131 * MiB));
  const uint64_t room = 124 * MiB - kmer::kProcessReserveBytes - kmer::kThreadReserveBytes - kmer::kReadaheadReserveBytes -
                        kmer::kSweepLookAheadKmers * kmer::kLookAheadBytesPerKmer;
  EXPECT_EQ(c.kmers, static_cast<uint64_t>(static_cast<double>(room) * kmer::kBatchShare) / kmer::kBatchBytesPerKmer);
  EXPECT_EQ(c.bytes, c.kmers * kmer::kBatchBytesPerKmer);
  EXPECT_LE(c.bytes + kmer::kProcessReserveBytes + kmer::kReadaheadReserveBytes, 124 * MiB);
  EXPECT_NE(c.why.find("124M"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("does not fit"), std::string::npos) << c.why;
  EXPECT_FALSE(c.db_fits);
}

TEST(LookupBatchSize, GrowsWithTheLimitWhenTheDbDoesNotFit) {
  uint64_t last = 0;
  for (uint64_t limit : {96 * MiB, 256 * MiB, 1024 * MiB, 8192 * MiB}) {
    const auto c = kmer::choose_lookup_batch(inputs(limit, 0, 64 * limit));
    EXPECT_GT(c.kmers, last) << limit;
    EXPECT_LT(c.bytes, limit);
    last = c.kmers;
  }
  // Never more than the classifier takes, however much memory there is.
  EXPECT_EQ(kmer::choose_lookup_batch(inputs(uint64_t{1} << 50, 0, uint64_t{1} << 56)).kmers,
            kmer::SortedBatchClassifier::kMaxLookupBatch);
}

TEST(LookupBatchSize, DimmapLeavesTheBufferAlone) {
  const auto c = kmer::choose_lookup_batch(inputs(124 * MiB, 62 * MiB, 131 * MiB));
  const uint64_t room = 124 * MiB - 62 * MiB - kmer::kProcessReserveBytes - kmer::kThreadReserveBytes -
                        kmer::kSweepLookAheadKmers * kmer::kLookAheadBytesPerKmer;
  EXPECT_EQ(c.kmers, static_cast<uint64_t>(static_cast<double>(room) * kmer::kBatchShare) / kmer::kBatchBytesPerKmer);
  // More threads, more reserve.
  auto many = inputs(124 * MiB, 62 * MiB, 131 * MiB);
  many.threads = 16;
  EXPECT_LT(kmer::choose_lookup_batch(many).kmers, c.kmers);
  EXPECT_NE(c.why.find("DI-MMAP buffer of 62M"), std::string::npos) << c.why;
  // A bigger buffer leaves a smaller batch.
  EXPECT_LT(kmer::choose_lookup_batch(inputs(124 * MiB, 90 * MiB, 131 * MiB)).kmers, c.kmers);
}

TEST(LookupBatchSize, ADbThatFitsKeepsTheDefault) {
  // Read once whatever the batch: no point holding more reads.
  EXPECT_EQ(kmer::choose_lookup_batch(inputs(16384 * MiB, 0, 131 * MiB)).kmers, kmer::kDefaultLookupBatch);
  EXPECT_EQ(kmer::choose_lookup_batch(inputs(16384 * MiB, 256 * MiB, 131 * MiB)).kmers, kmer::kDefaultLookupBatch);
  auto in = inputs(16384 * MiB, 0, 131 * MiB);
  in.db_in_memory = true;
  EXPECT_EQ(kmer::choose_lookup_batch(in).kmers, kmer::kDefaultLookupBatch);
  EXPECT_NE(kmer::choose_lookup_batch(in).why.find("fits"), std::string::npos);
  EXPECT_TRUE(kmer::choose_lookup_batch(in).db_fits);
  EXPECT_TRUE(kmer::choose_lookup_batch(inputs(16384 * MiB, 0, 131 * MiB)).db_fits);
  // A batch of the next reads, parsed ahead, is counted in the batch's memory when the DB fits.
  const auto fits = kmer::choose_lookup_batch(inputs(16384 * MiB, 0, 131 * MiB));
  EXPECT_EQ(fits.bytes, fits.kmers * (kmer::kBatchBytesPerKmer + kmer::kLookAheadBytesPerKmer));
  // On mmap the DB fits only beside a default batch, its look-ahead and the process.
  const uint64_t just = 131 * MiB + kmer::kDefaultLookupBatch * (kmer::kBatchBytesPerKmer + kmer::kLookAheadBytesPerKmer) +
                        kmer::kProcessReserveBytes + kmer::kThreadReserveBytes;
  EXPECT_TRUE(kmer::choose_lookup_batch(inputs(just, 0, 131 * MiB)).db_fits);
  EXPECT_FALSE(kmer::choose_lookup_batch(inputs(just - 1, 0, 131 * MiB)).db_fits);
  // Fitting but with little memory left: less than the default.
  EXPECT_LT(kmer::choose_lookup_batch(inputs(64 * MiB, 40 * MiB, 30 * MiB)).kmers, kmer::kDefaultLookupBatch);
}

TEST(LookupBatchSize, TinyLimitsGetTheSmallestBatchAndRanksShare) {
  EXPECT_EQ(kmer::choose_lookup_batch(inputs(8 * MiB, 0, 131 * MiB)).kmers, kmer::kMinChosenLookupBatch);
  auto one = inputs(1024 * MiB, 0, 8192 * MiB), four = one;
  four.sharers = 4;
  const auto c1 = kmer::choose_lookup_batch(one), c4 = kmer::choose_lookup_batch(four);
  EXPECT_EQ(c4.kmers, kmer::choose_lookup_batch(inputs(256 * MiB, 0, 8192 * MiB)).kmers);
  EXPECT_LT(c4.kmers, c1.kmers / 3);
  EXPECT_NE(c4.why.find("shared by 4 ranks"), std::string::npos) << c4.why;
}

}  // namespace
