// progress.cpp - rate-limited progress output.
#include <graph/progress.hpp>

#include <unistd.h>

#include <cstdio>

namespace graph {

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), tty_(::isatty(STDERR_FILENO) != 0) {
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::advance(uint64_t amount) {
  const uint64_t done = done_.fetch_add(amount) + amount;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto period = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_ < period) return;
  last_ = now;
  draw(done, false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_ || !enabled_) return;
  finished_ = true;
  // Short runs stay quiet; long ones end with a final line.
  if (std::chrono::steady_clock::now() - start_ > std::chrono::seconds(1)) draw(done_.load(), true);
}

void Progress::draw(uint64_t done, bool final) {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 0.0;
  char eta[32] = "";
  if (!final && frac > 0.001) std::snprintf(eta, sizeof eta, "  ETA %.0fs", secs / frac - secs);
  std::fprintf(stderr, "%s%s %5.1f%%  %llu/%llu  %.1fs%s%s", tty_ ? "\r" : "", label_.c_str(), 100.0 * frac,
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_), secs, eta,
               (final || !tty_) ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace graph
