// run.cpp - fork a command into a fresh memory cgroup, forward signals, report what it used.
#include <budget/budget.hpp>
#include <budget/page_cache.hpp>
#include <dimmap/support/json_summary.hpp>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace budget {
namespace {

using dimmap::Error;
using dimmap::format_size;

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// The running command, read by the signal handler (lock-free, so async-signal-safe).
std::atomic<pid_t> g_command{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void forward_signal(int sig, siginfo_t* info, void*) {
  // A signal typed at the terminal (SI_KERNEL) already reached the command, which shares our
  // foreground process group; forwarding it would deliver it twice.
  if (info && info->si_code == SI_KERNEL) return;
  const pid_t pid = g_command.load();
  if (pid > 0) kill(pid, sig);
}

// Installs the forwarding handlers for its lifetime.
class SignalForwarding {
 public:
  explicit SignalForwarding(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    struct sigaction sa = {};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &sa, &old_[i]);
  }
  ~SignalForwarding() {
    if (!enabled_) return;
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &old_[i], nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  bool enabled_;
  struct sigaction old_[std::size(kForwardedSignals)];
};

// What a child that could not exec tells its parent through the close-on-exec pipe.
struct LaunchFailure {
  int joining_cgroup;  // 1: could not join the cgroup, 0: exec failed
  int err;
};

// In the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_in_cgroup(const char* procs_file, char* const argv[], const sigset_t* mask, int report_fd) {
  LaunchFailure failure = {1, 0};
  int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, "0", 1) != 1) {
    failure.err = errno;
  } else {
    close(fd);
    sigprocmask(SIG_SETMASK, mask, nullptr);
    execvp(argv[0], argv);
    failure = {0, errno};
  }
  ssize_t ignored = write(report_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

pid_t wait_for(pid_t pid, int* status) {
  pid_t r;
  do r = waitpid(pid, status, 0);
  while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

Report run(const Options& options, const std::vector<std::string>& command) {
  if (command.empty()) throw Error("no command to run");
  if (options.memory_bytes < kMinBudget)
    throw Error("memory budget " + format_size(options.memory_bytes) + " is too small (at least " +
                format_size(kMinBudget) + ")");
  if (options.drop_caches) drop_page_cache();
  for (const std::string& file : options.evict_files) evict_file(file);

  const CgroupParent parent =
      options.cgroup_parent.empty() ? default_cgroup_parent() : cgroup_parent_at(options.cgroup_parent);
  MemoryCgroup cgroup(parent, options.name, options.memory_bytes);
  Report report;
  report.cgroup = cgroup.path();
  report.version = cgroup.version();
  report.limit_bytes = cgroup.limit_bytes();

  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const std::string procs_file = cgroup.procs_file();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));

  // Forwarded signals stay blocked until the handlers know the child's pid.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwardedSignals) sigaddset(&forwarded, sig);
  pthread_sigmask(SIG_BLOCK, &forwarded, &old_mask);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) exec_in_cgroup(procs_file.c_str(), argv.data(), &old_mask, pipe_fds[1]);
  const int fork_errno = errno;
  close(pipe_fds[1]);
  if (pid < 0) {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    close(pipe_fds[0]);
    throw Error(std::string("cannot fork: ") + std::strerror(fork_errno));
  }
  g_command.store(pid);
  int status = 0;
  LaunchFailure failure = {};
  ssize_t n;
  {
    SignalForwarding forwarding(options.forward_signals);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    do n = read(pipe_fds[0], &failure, sizeof failure);  // EOF: exec succeeded
    while (n < 0 && errno == EINTR);
    close(pipe_fds[0]);
    wait_for(pid, &status);
    g_command.store(0);
  }
  if (n == static_cast<ssize_t>(sizeof failure)) {
    if (failure.joining_cgroup)
      throw LaunchError("cannot join cgroup " + cgroup.path() + ": " + std::strerror(failure.err), failure.err);
    throw LaunchError("cannot run '" + command[0] + "': " + std::strerror(failure.err), failure.err);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(status)) {
    report.signal = WTERMSIG(status);
    report.exit_status = 128 + report.signal;
  } else {
    report.exit_status = WEXITSTATUS(status);
  }
  report.peak_bytes = cgroup.peak_bytes();
  report.oom_kills = cgroup.oom_kills();
  report.limit_hits = cgroup.limit_hits();
  report.stragglers_killed = cgroup.remove();
  return report;
}

std::string describe(const Report& r) {
  std::string s = "peak ";
  s += r.peak_bytes ? format_size(*r.peak_bytes) : std::string("unknown");
  s += " of " + format_size(r.limit_bytes) + " budget";
  if (r.limit_hits) s += " (limit hit " + std::to_string(r.limit_hits) + " times)";
  s += r.oom_killed() ? ", OOM killer fired (" + std::to_string(r.oom_kills) + " killed)" : ", no OOM kill";
  s += ", exit status " + std::to_string(r.exit_status);
  if (r.signal) s += std::string(" (") + strsignal(r.signal) + ")";
  if (r.stragglers_killed) s += ", killed " + std::to_string(r.stragglers_killed) + " leftover processes";
  char time[32];
  std::snprintf(time, sizeof time, ", %.2f s", r.seconds);
  return s + time;
}

std::string to_json(const Report& r) {
  dimmap::json::Object j;
  j.add("exit_status", r.exit_status)
      .add("signal", r.signal)
      .add("limit_bytes", r.limit_bytes)
      .raw("peak_bytes", r.peak_bytes ? std::to_string(*r.peak_bytes) : "null")
      .add("oom_kills", r.oom_kills)
      .add("oom_killed", r.oom_killed())
      .add("limit_hits", r.limit_hits)
      .add("stragglers_killed", r.stragglers_killed)
      .add("seconds", r.seconds)
      .add("cgroup_version", static_cast<int>(r.version))
      .add("cgroup", r.cgroup);  // a path from the system: escaped
  return j.str();
}

}  // namespace budget
