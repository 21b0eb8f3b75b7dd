// progress.cpp - stderr progress bar (redrawn on a tty, a line per 10% otherwise).
#include <kmer/progress.hpp>

#include <unistd.h>

#include <cstdio>

namespace kmer {

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total ? total : 1), enabled_(enabled), tty_(isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::add(uint64_t amount) {
  const uint64_t done = done_.fetch_add(amount) + amount;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const int decile = static_cast<int>(10 * std::min(done, total_) / total_);
  if (tty_ ? now - last_draw_ < std::chrono::milliseconds(200) : decile == last_decile_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  last_draw_ = now;
  last_decile_ = decile;
  draw(done, false);
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  draw(done_.load(), true);
}

void Progress::draw(uint64_t done, bool final) {
  const double frac = std::min(1.0, double(done) / total_);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (tty_) {
    char bar[31];
    const int fill = static_cast<int>(frac * 30);
    for (int i = 0; i < 30; ++i) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    std::fprintf(stderr, "\r%-24s [%s] %5.1f%% %6.1fs%s", label_.c_str(), bar, 100 * frac, secs, final ? "\n" : "");
  } else if (!final || last_decile_ != 10) {
    std::fprintf(stderr, "%s: %5.1f%% (%.1fs)\n", label_.c_str(), 100 * frac, secs);
  }
  std::fflush(stderr);
}

}  // namespace kmer
