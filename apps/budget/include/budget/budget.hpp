// budget.hpp - run a command under a memory budget (a fresh memory cgroup).
//
//   budget::Options opt;
//   opt.memory_bytes = 512ull << 20;
//   budget::Report r = budget::run(opt, {"lriot", "--mode=mmap", "--file=big.dat"});
//   // r.exit_status, r.peak_bytes, r.oom_killed ...
//
// The command runs in its own memory cgroup (made inside the caller's cgroup and removed
// afterwards), so its heap and the page cache it pulls in share one limit: Linux mmap gets
// exactly the DRAM a DI-MMAP buffer of that size would.
#pragma once

#include <budget/cgroup.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace budget {

struct Options {
  uint64_t memory_bytes = 0;             // the budget; at least kMinBudget
  bool drop_caches = false;              // sync and drop the whole page cache first
  std::vector<std::string> evict_files;  // drop these files from the page cache first
  std::string name = "run";              // part of the cgroup's directory name
  std::string cgroup_parent;             // "" = inside the caller's own memory cgroup
  // Forward SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the command while it
  // runs (a CLI wants this; a library caller that handles signals itself may not).
  bool forward_signals = true;
};

// Below this no program can even start; smaller budgets are rejected as a mistake.
constexpr uint64_t kMinBudget = 1ull << 20;

struct Report {
  int exit_status = 0;  // like a shell: the exit code, or 128 + signal if killed
  int signal = 0;       // the signal that killed the command, 0 if it exited
  uint64_t limit_bytes = 0;
  std::optional<uint64_t> peak_bytes;  // peak charged memory (heap + page cache)
  uint64_t oom_kills = 0;              // processes the OOM killer killed
  bool oom_killed() const { return oom_kills > 0; }
  uint64_t limit_hits = 0;  // times the cgroup hit its limit (reclaim under pressure)
  size_t stragglers_killed = 0;  // processes still in the cgroup after the command exited
  double seconds = 0;
  std::string cgroup;  // where it ran (removed by now)
  CgroupVersion version = CgroupVersion::v1;
};

// The command could not be started (not found, not executable, cannot join the cgroup).
class LaunchError : public std::runtime_error {
 public:
  LaunchError(const std::string& what, int err) : std::runtime_error(what), err_(err) {}
  int error_number() const { return err_; }

 private:
  int err_;
};

// Runs command (argv; looked up in PATH) to completion under the budget. Throws dimmap::Error
// for a bad budget or cgroup trouble and LaunchError if the command cannot be started.
Report run(const Options& options, const std::vector<std::string>& command);

// One line for stderr: peak, budget, limit hits, OOM killer, exit status, time.
std::string describe(const Report& report);
// The report as a JSON object.
std::string to_json(const Report& report);

}  // namespace budget
