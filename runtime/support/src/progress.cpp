// progress.cpp - the redrawn terminal line and the sparse log lines.
#include <dimmap/support/progress.hpp>

#include <unistd.h>

#include <algorithm>

namespace dimmap::support {
namespace {

constexpr auto kRedrawPeriod = std::chrono::milliseconds(200);
constexpr auto kQuietStart = std::chrono::seconds(1);  // log mode: shorter runs print nothing
constexpr auto kLogHeartbeat = std::chrono::seconds(60);
constexpr int kBarWidth = 30;

}  // namespace

ProgressReporter::ProgressReporter(std::string label, uint64_t total, bool enabled)
    : ProgressReporter(std::move(label), total, enabled, Output{}) {}

ProgressReporter::ProgressReporter(std::string label, uint64_t total, bool enabled, Output output)
    : label_(std::move(label)), total_(total), enabled_(enabled), out_(output.stream) {
  terminal_ = output.mode == Output::Mode::terminal ||
              (output.mode == Output::Mode::detect && ::isatty(::fileno(out_)) != 0);
  start_ = last_line_ = Clock::now();
}

ProgressReporter::~ProgressReporter() { finish(); }

void ProgressReporter::advance(uint64_t amount) {
  const uint64_t done = done_.fetch_add(amount, std::memory_order_relaxed) + amount;
  if (enabled_) maybe_draw(done);
}

void ProgressReporter::set(uint64_t done) {
  uint64_t seen = done_.load(std::memory_order_relaxed);
  while (seen < done && !done_.compare_exchange_weak(seen, done, std::memory_order_relaxed)) {
  }
  if (enabled_) maybe_draw(std::max(seen, done));
}

void ProgressReporter::maybe_draw(uint64_t done) {
  // Busy threads never wait for the one that draws.
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;
  const auto now = Clock::now();
  if (terminal_) {
    if (now - last_line_ < kRedrawPeriod) return;
  } else {
    if (now - start_ < kQuietStart) return;
    const int tenth = total_ ? static_cast<int>(10 * std::min(done, total_) / total_) : 0;
    if (tenth <= last_tenth_ && now - last_line_ < kLogHeartbeat) return;
    last_tenth_ = std::max(tenth, last_tenth_);
  }
  last_line_ = now;
  draw(done, false);
}

void ProgressReporter::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_ || !enabled_) return;
  finished_ = true;
  // A terminal line is always closed; a log gets a closing line only if it told of the run.
  if (terminal_ ? printed_ : (printed_ || Clock::now() - start_ >= kQuietStart)) draw(done(), true);
}

void ProgressReporter::draw(uint64_t done, bool final) {
  const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
  const double frac = total_ ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 0.0;
  char eta[32] = "";
  if (!final && frac > 0.001 && frac < 1.0) std::snprintf(eta, sizeof eta, "  ETA %.0fs", secs / frac - secs);
  if (terminal_) {
    char bar[kBarWidth + 1];
    const int fill = static_cast<int>(frac * kBarWidth);
    for (int i = 0; i < kBarWidth; ++i) bar[i] = i < fill ? '#' : '.';
    bar[kBarWidth] = '\0';
    std::fprintf(out_, "\r%-24s [%s] %5.1f%% %7.1fs%-12s%s", label_.c_str(), bar, 100 * frac, secs, eta,
                 final ? "\n" : "");
  } else {
    std::fprintf(out_, "%s: %5.1f%% (%.1fs%s)\n", label_.c_str(), 100 * frac, secs, eta);
  }
  std::fflush(out_);
  printed_ = true;
}

}  // namespace dimmap::support
