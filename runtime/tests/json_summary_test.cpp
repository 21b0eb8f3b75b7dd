// The --json summary writer: strings escaped as JSON requires, numbers that JSON can hold,
// the file written whole or not at all.
#include <dimmap/support/json_summary.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace {

TEST(JsonSummary, StringsAreEscaped) {
  EXPECT_EQ(dimmap::json::quote("plain"), "\"plain\"");
  EXPECT_EQ(dimmap::json::quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(dimmap::json::quote("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(dimmap::json::quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(dimmap::json::quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // UTF-8 passes through
}

TEST(JsonSummary, ObjectKeepsOrderAndTypes) {
  struct dimmap_stats st {};
  st.faults = 7;
  st.prefetched = 3;
  const std::string text = dimmap::json::summary("bfs", 1.5, 2e6, "TEPS")
                               .add("count", uint64_t{18446744073709551615ull})
                               .add("ok", true)
                               .add("not_a_number", std::nan(""))
                               .add("inf", HUGE_VAL)
                               .add("dimmap_stats", dimmap::json::stats(st))
                               .str();
  EXPECT_EQ(text.rfind("{\"tool\": \"bfs\", \"wall_seconds\": 1.5, \"rate\": 2000000, \"rate_unit\": \"TEPS\", ", 0),
            0u)
      << text;
  EXPECT_NE(text.find("\"count\": 18446744073709551615, \"ok\": true, \"not_a_number\": null, \"inf\": null"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"dimmap_stats\": {\"faults\": 7, "), std::string::npos) << text;
  EXPECT_NE(text.find("\"prefetched\": 3}}"), std::string::npos) << text;
  EXPECT_EQ(dimmap::json::Object().str(), "{}");
  EXPECT_EQ(dimmap::json::array({}), "[]");
  EXPECT_EQ(dimmap::json::array({dimmap::json::Object().add("a", 1), dimmap::json::Object()}), "[{\"a\": 1}, {}]");
}

TEST(JsonSummary, FileIsWrittenWholeOrAnErrorNamesIt) {
  const std::string path = ::testing::TempDir() + "json_summary_test.json";
  dimmap::json::write_file(path, dimmap::json::Object().add("x", 1).str());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"x\": 1}\n");
  std::remove(path.c_str());
  const std::string bad = ::testing::TempDir() + "no-such-dir/s.json";
  try {
    dimmap::json::write_file(bad, "{}");
    FAIL() << "writing into a missing directory succeeded";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
  }
}

}  // namespace
