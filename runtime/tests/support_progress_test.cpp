// support_progress_test.cpp - the reporter's log lines stay few; the terminal line is redrawn.
#include <dimmap/support/progress.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using dimmap::support::ProgressReporter;

// Everything the reporter printed into a memory stream.
struct Captured {
  char* data = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&data, &size);
  ~Captured() {
    if (stream) std::fclose(stream);
    std::free(data);
  }
  std::string text() {
    std::fflush(stream);
    return std::string(data, size);
  }
};

size_t count(const std::string& text, char c) { return static_cast<size_t>(std::count(text.begin(), text.end(), c)); }

TEST(ProgressReporter, LogOutputIsSparse) {
  Captured out;
  {
    ProgressReporter p("scanning", 1000, true, {out.stream, ProgressReporter::Output::Mode::log});
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the quiet start
    for (int i = 0; i < 1000; ++i) p.advance(1);
  }
  const std::string text = out.text();
  // One line per tenth and a closing one at most, whatever the number of advance() calls.
  EXPECT_GE(count(text, '\n'), 2u) << text;
  EXPECT_LE(count(text, '\n'), 11u) << text;
  EXPECT_EQ(count(text, '\r'), 0u) << text;
  EXPECT_NE(text.find("scanning: 100.0%"), std::string::npos) << text;
}

TEST(ProgressReporter, ShortRunsStayQuietInLogs) {
  Captured out;
  {
    ProgressReporter p("quick", 10, true, {out.stream, ProgressReporter::Output::Mode::log});
    for (int i = 0; i < 10; ++i) p.advance(1);
  }
  EXPECT_EQ(out.text(), "");
}

TEST(ProgressReporter, TerminalRedrawsOneLine) {
  Captured out;
  {
    ProgressReporter p("writing", 100, true, {out.stream, ProgressReporter::Output::Mode::terminal});
    for (int i = 0; i < 5; ++i) {
      p.set(20 * (i + 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(210));
    }
  }
  const std::string text = out.text();
  EXPECT_GE(count(text, '\r'), 2u) << text;
  EXPECT_EQ(count(text, '\n'), 1u) << text;  // only the closing line ends with a newline
  EXPECT_NE(text.find("100.0%"), std::string::npos) << text;
}

TEST(ProgressReporter, DisabledPrintsNothingButCounts) {
  Captured out;
  ProgressReporter p("off", 10, false, {out.stream, ProgressReporter::Output::Mode::terminal});
  p.advance(4);
  p.set(7);
  p.set(5);  // never backwards
  p.finish();
  EXPECT_EQ(p.done(), 7u);
  EXPECT_EQ(out.text(), "");
}

}  // namespace
