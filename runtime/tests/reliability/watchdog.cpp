// watchdog.cpp - see watchdog.hpp.
#include "watchdog.hpp"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace dimmap::reliability {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string status_field(const std::string& status, const std::string& key) {
  const size_t at = status.find(key + ":");
  if (at == std::string::npos) return "?";
  const size_t begin = status.find_first_not_of(" \t", at + key.size() + 1);
  return status.substr(begin, status.find('\n', begin) - begin);
}

}  // namespace

void dump_thread_stacks() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return;
  std::fprintf(stderr, "---- threads of pid %d ----\n", getpid());
  for (struct dirent* e; (e = readdir(dir)) != nullptr;) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    const std::string status = read_file(task + "/status");
    std::fprintf(stderr, "thread %s (%s) state %s wchan %s\n", e->d_name, status_field(status, "Name").c_str(),
                 status_field(status, "State").c_str(), read_file(task + "/wchan").c_str());
    const std::string stack = read_file(task + "/stack");  // needs root; empty otherwise
    if (!stack.empty()) std::fprintf(stderr, "%s", stack.c_str());
  }
  closedir(dir);
  std::fprintf(stderr, "---- end of threads ----\n");
}

Watchdog::Watchdog(double seconds, std::string what) {
  thread_ = std::thread([this, seconds, what = std::move(what)] {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
    std::fprintf(stderr, "\nwatchdog: '%s' did not finish within %.0f s: a thread hangs\n", what.c_str(), seconds);
    dump_thread_stacks();
    std::fflush(stderr);
    _exit(124);
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace dimmap::reliability
