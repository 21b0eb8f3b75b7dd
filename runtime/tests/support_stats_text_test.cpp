// support_stats_text_test.cpp - every counter shows up in the text and the key=value form.
#include <dimmap/support/stats_text.hpp>
#include <gtest/gtest.h>

#include <string>

namespace {

dimmap_stats_t sample() {
  dimmap_stats_t s{};
  s.faults = 101;
  s.misses = 102;
  s.recoveries = 103;
  s.hits = 104;
  s.write_faults = 105;
  s.hot_promotions = 106;
  s.evictions = 107;
  s.eviction_batches = 108;
  s.writebacks = 109;
  s.write_ios = 110;
  s.bytes_read = 2 << 20;
  s.bytes_written = 3 << 20;
  s.read_errors = 111;
  s.write_errors = 112;
  s.prefetched = 113;
  s.zero_fills = 114;
  return s;
}

TEST(StatsText, NamesEveryCounter) {
  const std::string t = dimmap::support::stats_text(sample());
  for (const char* part : {"faults 101", "misses 102", "recoveries 103", "hits 104", "write faults 105",
                           "hot promotions 106", "evictions 107 in 108 batches", "writebacks 109 in 110 writes",
                           "read 2M", "wrote 3M", "errors 111/112", "prefetched 113", "zero fills 114"})
    EXPECT_NE(t.find(part), std::string::npos) << part << " missing from: " << t;
}

TEST(StatsText, FieldsCarryThePrefix) {
  char buf[1024];
  const int n = dimmap::support::format_stats_fields(buf, sizeof buf, sample(), "dimmap_");
  ASSERT_GT(n, 0);
  ASSERT_LT(static_cast<size_t>(n), sizeof buf);
  const std::string t = buf;
  for (const char* part : {"dimmap_faults=101 ", "dimmap_misses=102 ", "dimmap_evictions=107 ",
                           "dimmap_bytes_read=2097152 ", "dimmap_zero_fills=114"})
    EXPECT_NE(t.find(part), std::string::npos) << part << " missing from: " << t;
}

TEST(StatsText, FieldsAreCutNotOverrun) {
  char buf[16];
  const int n = dimmap::support::format_stats_fields(buf, sizeof buf, sample());
  EXPECT_GT(n, 15);
  EXPECT_EQ(std::string(buf).size(), 15u);
}

TEST(StatsText, SumAddsEveryField) {
  dimmap_stats_t sum = sample();
  dimmap::support::operator+=(sum, sample());
  EXPECT_EQ(sum.faults, 202u);
  EXPECT_EQ(sum.zero_fills, 228u);
  EXPECT_EQ(sum.bytes_written, uint64_t{6} << 20);
}

}  // namespace
