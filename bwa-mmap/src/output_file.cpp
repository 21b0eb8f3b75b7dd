// output_file.cpp - temporary names, rename on commit, removal on every way out.
#include <bwammap/output_file.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/atomic_file.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace bwammap {
namespace {

// Paths to remove if the process leaves early. A fixed table of plain char arrays, so the
// signal handler only reads memory and calls unlink() (async-signal-safe).
constexpr int kMaxPending = 16;
constexpr size_t kMaxPath = 4096;
struct PendingTable {
  char path[kMaxPending][kMaxPath];
  volatile sig_atomic_t used[kMaxPending];
};
PendingTable g_pending;
std::mutex g_pending_mu;

void remove_pending() {
  for (int i = 0; i < kMaxPending; ++i)
    if (g_pending.used[i]) {
      ::unlink(g_pending.path[i]);
      g_pending.used[i] = 0;
    }
}

extern "C" void on_fatal_signal(int sig) {
  remove_pending();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(remove_pending);
    // Crashes too (SIGABRT from an assert in libbwa, SIGBUS from a failed DI-MMAP read):
    // the handler re-raises with the default action, so core dumps are unchanged.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGBUS, SIGABRT}) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_fatal_signal;
      sigemptyset(&sa.sa_mask);
      struct sigaction old;
      // Respect a caller that ignores the signal (e.g. nohup).
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaction(sig, &sa, nullptr);
    }
  });
}

void track(const std::string& path) {
  if (path.size() >= kMaxPath) throw dimmap::Error("output path too long: '" + path + "'");
  install_handlers_once();
  std::lock_guard<std::mutex> lock(g_pending_mu);
  for (int i = 0; i < kMaxPending; ++i)
    if (!g_pending.used[i]) {
      std::memcpy(g_pending.path[i], path.c_str(), path.size() + 1);
      g_pending.used[i] = 1;
      return;
    }
  throw dimmap::Error("internal error: too many pending output files");
}

void untrack(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  for (int i = 0; i < kMaxPending; ++i)
    if (g_pending.used[i] && path == g_pending.path[i]) g_pending.used[i] = 0;
}

}  // namespace

std::string temporary_name(const std::string& final_path) {
  return dimmap::support::temporary_path(final_path, "bwa-mmap-tmp");
}

PendingFiles::~PendingFiles() {
  for (const auto& file : files_)
    if (file.pending()) untrack(file.temp_path());
  // Each PendingRename removes its temporary file unless committed.
}

const std::string& PendingFiles::add(const std::string& final_path, std::string tmp) {
  if (tmp.empty()) tmp = temporary_name(final_path);
  track(tmp);
  files_.emplace_back(final_path, std::move(tmp));
  return files_.back().temp_path();
}

void PendingFiles::commit() {
  // Old outputs go first, so no mix of old and new files ever looks like a complete set.
  for (auto it = files_.rbegin(); it != files_.rend(); ++it)
    if (::unlink(it->final_path().c_str()) != 0 && errno != ENOENT)
      throw dimmap::Error("cannot replace '" + it->final_path() + "': " + std::strerror(errno));
  for (auto& file : files_) {
    const std::string tmp = file.temp_path();
    try {
      file.commit();  // throws dimmap::Error naming both paths, having removed the temporary
    } catch (...) {
      untrack(tmp);
      throw;
    }
    untrack(tmp);
  }
}

OutputStream::OutputStream(const std::string& path) : path_(path) {
  file_ = stdout;
  if (path.empty() || path == "-") return;
  // libbwa writes the SAM header to stdout itself, so stdout is what gets redirected.
  is_stdout_ = false;
  const std::string& tmp = pending_.add(path);
  if (!std::freopen(tmp.c_str(), "wb", stdout)) throw dimmap::Error("cannot create '" + path + "': " + std::strerror(errno));
}

OutputStream::~OutputStream() = default;

void OutputStream::write(const char* s) {
  if (error_) return;
  if (std::fputs(s, file_) == EOF) error_ = errno ? errno : EIO;
}

void OutputStream::commit() {
  const std::string name = is_stdout_ ? std::string("standard output") : "'" + path_ + "'";
  if (std::fflush(file_) != 0 && !error_) error_ = errno;
  if (!error_ && std::ferror(file_)) error_ = EIO;
  // Durable before it gets its final name (fsync fails with EINVAL on pipes: nothing to do).
  if (!is_stdout_ && !error_ && ::fsync(fileno(file_)) != 0 && errno != EINVAL) error_ = errno;
  if (error_) throw dimmap::Error("cannot write " + name + ": " + std::strerror(error_));
  if (!is_stdout_) pending_.commit();
}

}  // namespace bwammap
