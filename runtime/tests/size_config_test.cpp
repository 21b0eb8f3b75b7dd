// Unit tests of size parsing and the DIMMAP_* configuration.
#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <string>

namespace {

TEST(ParseSize, AcceptsUnitsInPowersOf1024) {
  uint64_t v = 0;
  ASSERT_EQ(dimmap_parse_size("4096", &v), 0);
  EXPECT_EQ(v, 4096u);
  ASSERT_EQ(dimmap_parse_size("256M", &v), 0);
  EXPECT_EQ(v, 256ull << 20);
  ASSERT_EQ(dimmap_parse_size("4g", &v), 0);
  EXPECT_EQ(v, 4ull << 30);
  ASSERT_EQ(dimmap_parse_size("2KiB", &v), 0);
  EXPECT_EQ(v, 2048u);
  ASSERT_EQ(dimmap_parse_size("1TB", &v), 0);
  EXPECT_EQ(v, 1ull << 40);
  ASSERT_EQ(dimmap_parse_size("0", &v), 0);
  EXPECT_EQ(v, 0u);
}

TEST(ParseSize, RejectsMalformedInputWithAReason) {
  uint64_t v = 0;
  for (const char* bad : {"", "-1", " 5", "1.5G", "12Q", "5MM", "G", "99999999999999999999", "17179869184G"}) {
    EXPECT_LT(dimmap_parse_size(bad, &v), 0) << "'" << bad << "'";
    EXPECT_STRNE(dimmap_last_error(), "") << "'" << bad << "'";
  }
}

TEST(FormatSize, RoundTripsCommonSizes) {
  EXPECT_EQ(dimmap::format_size(256ull << 20), "256M");
  EXPECT_EQ(dimmap::format_size(1536), "1.5K");
  EXPECT_EQ(dimmap::format_size(100), "100");
  EXPECT_EQ(dimmap::parse_size("256M"), 256ull << 20);
  EXPECT_THROW(dimmap::parse_size("-3", "--buffer"), dimmap::Error);
}

class EnvTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"DIMMAP_BUFFER", "DIMMAP_HOT_FRACTION", "DIMMAP_ENGINE", "DIMMAP_EVICT_BATCH", "DIMMAP_READAHEAD"})
      unsetenv(name);
  }
};

TEST_F(EnvTest, DefaultsFollowThePapers) {
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  // The buffer follows the memory limit, at most the papers' 256M.
  EXPECT_LE(cfg.buffer_bytes, 256ull << 20);
  EXPECT_DOUBLE_EQ(cfg.hot_fraction, 0.75);
  EXPECT_EQ(cfg.engine, DIMMAP_ENGINE_AUTO);
  EXPECT_EQ(cfg.readahead_pages, 64u);
}

// The default buffer is the engine's: 7/8 of the limit where it is page cache the kernel may
// reclaim (pagecache, what auto runs here), half where it is the engine's own memory.
TEST_F(EnvTest, DefaultBufferDependsOnTheEngine) {
  const dimmap::MemoryLimit limit{32ull << 20, "a test's limit", "", "", false};
  const auto chosen = [&](const char* engine) {
    setenv("DIMMAP_ENGINE", engine, 1);
    return dimmap::choose_buffer("", limit);
  };
  EXPECT_EQ(chosen("uffd").bytes, 16ull << 20);
  EXPECT_NE(chosen("uffd").why.find("half the memory limit of 32M (a test's limit)"), std::string::npos);
  EXPECT_EQ(chosen("pagecache").bytes, 28ull << 20);
  EXPECT_NE(chosen("pagecache").why.find("7/8 of the memory limit"), std::string::npos);
  EXPECT_EQ(chosen("auto").bytes, 28ull << 20) << "auto runs pagecache on this kernel";
  setenv("DIMMAP_PERMA", "lcurr", 1);  // the latency model needs the userfaultfd engine
  EXPECT_EQ(chosen("auto").bytes, 16ull << 20);
  unsetenv("DIMMAP_PERMA");
  // The C API's default follows the same rule, from the real limit.
  const uint64_t real = dimmap::memory_limit().bytes;
  dimmap_config cfg;
  setenv("DIMMAP_ENGINE", "uffd", 1);
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  EXPECT_EQ(cfg.buffer_bytes, dimmap::default_buffer_bytes(real, false));
  setenv("DIMMAP_ENGINE", "auto", 1);
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  EXPECT_EQ(cfg.buffer_bytes, dimmap::default_buffer_bytes(real, true));
}

TEST_F(EnvTest, EnvironmentOverridesDefaults) {
  setenv("DIMMAP_BUFFER", "64M", 1);
  setenv("DIMMAP_HOT_FRACTION", "0.5", 1);
  setenv("DIMMAP_EVICT_BATCH", "32", 1);
  setenv("DIMMAP_READAHEAD", "0", 1);
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  EXPECT_EQ(cfg.readahead_pages, 0u);
  EXPECT_EQ(cfg.buffer_bytes, 64ull << 20);
  EXPECT_DOUBLE_EQ(cfg.hot_fraction, 0.5);
  EXPECT_EQ(cfg.evict_batch, 32u);
}

TEST_F(EnvTest, BadEnvironmentIsRejectedByName) {
  dimmap_config cfg;
  setenv("DIMMAP_BUFFER", "lots", 1);
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("DIMMAP_BUFFER"), std::string::npos);
  unsetenv("DIMMAP_BUFFER");
  setenv("DIMMAP_HOT_FRACTION", "1.5", 1);
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  unsetenv("DIMMAP_HOT_FRACTION");
  setenv("DIMMAP_ENGINE", "magic", 1);
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("DIMMAP_ENGINE"), std::string::npos);
  unsetenv("DIMMAP_ENGINE");
  setenv("DIMMAP_READAHEAD", "many", 1);
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("DIMMAP_READAHEAD"), std::string::npos);
  setenv("DIMMAP_READAHEAD", "5000", 1);
  EXPECT_EQ(dimmap_config_init(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("read-ahead"), std::string::npos);
}

TEST_F(EnvTest, TinyBufferIsRejected) {
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  cfg.buffer_bytes = 3 * 4096;
  EXPECT_EQ(dimmap_config_validate(&cfg), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("minimum"), std::string::npos);
  cfg.buffer_bytes = 0;
  EXPECT_EQ(dimmap_config_validate(&cfg), -EINVAL);
}

}  // namespace
