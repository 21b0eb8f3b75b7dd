// launcher.cpp - dimmap-run's checks, environment, and child process.
#include "launcher.hpp"

#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/placement_plan.hpp>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "backing.hpp"

#ifndef DIMMAP_PRELOAD_INSTALL_REL
#define DIMMAP_PRELOAD_INSTALL_REL "../lib"
#endif

namespace dimmap::preload {
namespace {

constexpr long kTmpfsMagic = 0x01021994;
constexpr long kRamfsMagic = static_cast<long>(0x858458f6);
constexpr uint64_t kHugePage = 2ull << 20;

void warn(const std::string& msg) { std::fprintf(stderr, "dimmap-run: warning: %s\n", msg.c_str()); }

uint64_t parse_size_flag(const std::string& text, const char* flag) {
  try {
    return dimmap::parse_size(text, flag);
  } catch (const dimmap::Error& e) {
    throw LaunchError(e.what());
  }
}

uint64_t physical_memory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t meminfo_kib(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  uint64_t kib = 0;
  std::string unit;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == std::string(key) + ":") return kib;
  }
  return 0;
}

// Directory checks shared by the file placements. Returns the absolute path.
std::string check_directory(const std::string& dir, uint64_t min_alloc, bool need_tmpfs) {
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) throw LaunchError("--dir='" + dir + "': " + std::strerror(errno));
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) throw LaunchError("--dir='" + dir + "' is not a directory");
  struct statvfs vfs;
  if (statvfs(real, &vfs) != 0) throw LaunchError("--dir='" + dir + "': " + std::strerror(errno));
  if (vfs.f_flag & ST_RDONLY) throw LaunchError("--dir='" + dir + "' is on a read-only filesystem");
  if (need_tmpfs) {
    struct statfs fs;
    if (statfs(real, &fs) != 0 || (fs.f_type != kTmpfsMagic && fs.f_type != kRamfsMagic))
      throw LaunchError("--dir='" + dir + "' is not on tmpfs: --placement=memory keeps its files in RAM "
                        "(use a tmpfs such as /dev/shm, or no --dir for anonymous memory)");
  }
  const int fd = make_unnamed_file(real);
  if (fd < 0) throw LaunchError("--dir='" + dir + "': cannot create files there: " + std::strerror(-fd));
  close(fd);
  const uint64_t avail = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (avail < min_alloc)
    throw LaunchError("--dir='" + dir + "' has " + dimmap::format_size(avail) + " free, less than one allocation of " +
                      "--min-alloc=" + dimmap::format_size(min_alloc));
  return real;
}

// Lets the hugetlb pool grow by the arena's pages for the run (surplus pages: allocated
// from free memory when the arena maps them, returned when it unmaps), and takes the
// allowance back afterwards. A failure only warns: the arena falls back to THP.
class HugePageAllowance {
 public:
  explicit HugePageAllowance(uint64_t pages) {
    const long now = read();
    if (now < 0 || !write(now + static_cast<long>(pages))) {
      warn("cannot raise " + std::string(kPath) + " (" + std::strerror(errno) +
           "; needs root): the arena uses hugetlb pages only if the pool has them");
      return;
    }
    pages_ = static_cast<long>(pages);
  }
  ~HugePageAllowance() {
    if (!pages_) return;
    const long now = read();  // others may have changed it meanwhile: take back only ours
    if (now >= 0) write(now > pages_ ? now - pages_ : 0);
  }
  HugePageAllowance(const HugePageAllowance&) = delete;
  HugePageAllowance& operator=(const HugePageAllowance&) = delete;

 private:
  static constexpr const char* kPath = "/proc/sys/vm/nr_overcommit_hugepages";
  static long read() {
    std::ifstream in(kPath);
    long v = -1;
    in >> v;
    return in ? v : -1;
  }
  static bool write(long v) {
    std::ofstream out(kPath);
    out << v << '\n';
    out.flush();
    return static_cast<bool>(out);
  }
  long pages_ = 0;
};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

double seconds(const struct timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

}  // namespace

// A --files directory as the kernel will name the files in it (/proc/self/fd): absolute,
// symlinks resolved.
std::string resolve_files_dir(const std::string& dir) {
  char real[PATH_MAX];
  if (dir.empty()) throw LaunchError("--files needs a directory");
  if (!realpath(dir.c_str(), real)) throw LaunchError("--files='" + dir + "': " + std::strerror(errno));
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) throw LaunchError("--files='" + dir + "' is not a directory");
  if (std::strchr(real, ':'))
    throw LaunchError("--files='" + dir + "': a directory whose path has ':' cannot be passed on (" + real + ")");
  return real;
}

// The heap's placement: hpmmap, or the runtime's vocabulary (flag, else DIMMAP_PLACEMENT;
// in-memory = memory, full- or semi-external = --backend).
PlacementKind placement_kind(const LaunchOptions& opt, bool files) {
  if (opt.placement == "hpmmap") return PlacementKind::hpmmap;
  const char* env = std::getenv("DIMMAP_PLACEMENT");
  if (opt.placement.empty() && !(env && *env)) return files ? PlacementKind::none : PlacementKind::mmap;
  dimmap::PlacementPlan heap({{"heap"}}, dimmap::Preset::full_external);
  heap.settings().placement = opt.placement;
  heap.settings().backend = opt.backend;
  heap.settings().buffer = opt.buffer;  // checked here only so that a flag hides its variable
  if (opt.hot_fraction >= 0) heap.settings().hot_fraction = std::to_string(opt.hot_fraction);
  try {
    heap.validate();
  } catch (const dimmap::Error& e) {
    throw LaunchError(e.what());
  }
  if (heap.preset() == dimmap::Preset::in_memory) return PlacementKind::memory;
  return heap.backend() == dimmap::Backend::dimmap ? PlacementKind::dimmap : PlacementKind::mmap;
}

LaunchPlan plan_launch(const LaunchOptions& opt) {
  LaunchPlan plan;
  for (const std::string& dir : opt.files) plan.files.push_back(resolve_files_dir(dir));
  const bool files = !plan.files.empty();
  plan.placement = placement_kind(opt, files);
  plan.hot_fraction = opt.hot_fraction;
  if (opt.command.empty()) throw LaunchError("no command given (usage: dimmap-run [options] -- CMD ARGS...)");
  plan.command = opt.command;
  plan.stats = opt.stats;

  // Unset sizes follow the memory this process may use (see memory_limit.hpp).
  const dimmap::MemoryLimit limit = dimmap::memory_limit();
  if (opt.min_alloc.empty()) {
    plan.min_alloc = dimmap::default_min_alloc(limit.bytes);
    std::fprintf(stderr, "dimmap-run: --min-alloc=%s: 1/32 of the memory limit of %s (%s), between 1M and 64M\n",
                 dimmap::format_size(plan.min_alloc).c_str(), dimmap::format_size(limit.bytes).c_str(),
                 limit.source.c_str());
  } else {
    plan.min_alloc = parse_size_flag(opt.min_alloc, "--min-alloc");
  }
  if (plan.min_alloc == 0) throw LaunchError("--min-alloc must be above 0");
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const bool file_placement = plan.placement != PlacementKind::hpmmap;
  if (file_placement && plan.min_alloc < page)
    throw LaunchError("--min-alloc=" + opt.min_alloc + " is below the page size (" + std::to_string(page) +
                      "): every allocation that big gets a mapping of its own");

  plan.buffer_given = !opt.buffer.empty();
  dimmap::BufferChoice buffer;
  try {
    buffer = dimmap::choose_buffer(opt.buffer, limit);
  } catch (const dimmap::Error& e) {
    throw LaunchError(e.what());
  }
  plan.buffer_bytes = buffer.bytes;
  const bool uses_dimmap = plan.placement == PlacementKind::dimmap || files;
  if (uses_dimmap || plan.placement == PlacementKind::hpmmap) {
    if (!buffer.warning.empty()) warn(buffer.warning);
    if (!plan.buffer_given)
      std::fprintf(stderr, "dimmap-run: buffer %s: %s\n", dimmap::format_size(plan.buffer_bytes).c_str(),
                   buffer.why.c_str());
    const uint64_t ram = physical_memory();
    if (plan.buffer_bytes > ram)
      throw LaunchError("--buffer=" + dimmap::format_size(plan.buffer_bytes) + " is more than this machine's memory (" +
                        dimmap::format_size(ram) + ")");
  }
  if (uses_dimmap) {
    try {
      dimmap::config_for_buffer(plan.buffer_bytes, plan.hot_fraction);
    } catch (const dimmap::Error& e) {
      throw LaunchError(std::string("--buffer: ") + e.what());
    }
  }
  if (plan.placement == PlacementKind::hpmmap) {
    const uint64_t avail = meminfo_kib("MemAvailable") * 1024;
    if (avail && plan.buffer_bytes > avail)
      warn("the " + dimmap::format_size(plan.buffer_bytes) + " arena is more than the available memory (" +
           dimmap::format_size(avail) + "): reserving it may fail or push other programs out");
  } else if (plan.buffer_given && !uses_dimmap) {
    warn(std::string("--buffer has no effect with --placement=") + placement_name(plan.placement));
  }

  if (dimmap_hpmmap_parse_pages(opt.huge_pages.c_str(), &plan.huge_pages) < 0)
    throw LaunchError("--huge-pages='" + opt.huge_pages + "' is not auto, hugetlb, thp or small");
  plan.reserve_huge_pages = opt.reserve_huge_pages;
  if (plan.placement != PlacementKind::hpmmap && (opt.reserve_huge_pages || opt.huge_pages != "auto"))
    warn("--huge-pages and --reserve-huge-pages only apply to --placement=hpmmap");

  switch (plan.placement) {
    case PlacementKind::mmap:
    case PlacementKind::dimmap:
      plan.dir = check_directory(opt.dir.empty() ? "." : opt.dir, plan.min_alloc, false);
      break;
    case PlacementKind::memory:
      if (!opt.dir.empty()) plan.dir = check_directory(opt.dir, plan.min_alloc, true);
      break;
    case PlacementKind::hpmmap:
      if (!opt.dir.empty()) warn("--dir has no effect with --placement=hpmmap (the arena is memory)");
      break;
    case PlacementKind::none:
      if (!opt.dir.empty()) warn("--dir has no effect without --placement (big allocations stay on the heap)");
      break;
  }
  return plan;
}

std::string find_preload_library() {
  if (const char* env = std::getenv("DIMMAP_PRELOAD_LIB"); env && *env) {
    if (access(env, R_OK) != 0)
      throw LaunchError(std::string("DIMMAP_PRELOAD_LIB='") + env + "': " + std::strerror(errno));
    return env;
  }
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw LaunchError("cannot find my own executable in /proc/self/exe");
  exe[n] = '\0';
  std::string dir(exe);
  dir.resize(dir.rfind('/'));
  for (const std::string& candidate :
       {dir + "/libdimmap-preload.so", dir + "/" DIMMAP_PRELOAD_INSTALL_REL "/libdimmap-preload.so"}) {
    if (access(candidate.c_str(), R_OK) == 0) {
      char real[PATH_MAX];
      return realpath(candidate.c_str(), real) ? std::string(real) : candidate;
    }
  }
  throw LaunchError("libdimmap-preload.so is neither next to " + std::string(exe) + " nor in " + dir +
                    "/" DIMMAP_PRELOAD_INSTALL_REL " (set DIMMAP_PRELOAD_LIB)");
}

void apply_environment(const LaunchPlan& plan, const std::string& preload_library) {
  std::string preload = preload_library;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  if (plan.placement == PlacementKind::none) {
    unsetenv(kEnvPlacement);  // heap allocations stay where they are
  } else {
    setenv(kEnvPlacement, placement_name(plan.placement), 1);
  }
  std::string files;
  for (const std::string& dir : plan.files) files += (files.empty() ? "" : ":") + dir;
  if (files.empty()) {
    unsetenv(kEnvFiles);
  } else {
    setenv(kEnvFiles, files.c_str(), 1);
  }
  setenv(kEnvDir, plan.dir.c_str(), 1);
  setenv(kEnvMinAlloc, std::to_string(plan.min_alloc).c_str(), 1);
  setenv(kEnvStats, plan.stats ? "1" : "0", 1);
  if (plan.placement == PlacementKind::dimmap || !plan.files.empty())
    setenv("DIMMAP_BUFFER", std::to_string(plan.buffer_bytes).c_str(), 1);
  if (plan.hot_fraction >= 0) setenv("DIMMAP_HOT_FRACTION", std::to_string(plan.hot_fraction).c_str(), 1);
  if (plan.placement == PlacementKind::hpmmap) {
    setenv(kEnvArena, std::to_string(plan.buffer_bytes).c_str(), 1);
    setenv(kEnvHugePages, dimmap_hpmmap_pages_name(plan.huge_pages), 1);
  }
}

int run_command(const LaunchPlan& plan) {
  std::unique_ptr<HugePageAllowance> allowance;
  if (plan.placement == PlacementKind::hpmmap && plan.reserve_huge_pages &&
      (plan.huge_pages == DIMMAP_HPMMAP_AUTO || plan.huge_pages == DIMMAP_HPMMAP_HUGETLB))
    allowance = std::make_unique<HugePageAllowance>((plan.buffer_bytes + kHugePage - 1) / kHugePage);

  std::vector<char*> argv;
  for (const std::string& a : plan.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  struct sigaction fwd {}, ign {}, old_int {}, old_quit {};
  fwd.sa_handler = forward_signal;
  sigemptyset(&fwd.sa_mask);
  ign.sa_handler = SIG_IGN;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw LaunchError(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The leader: this process reserves its arena at start, also after exec (same pid).
    setenv(kEnvLeader, std::to_string(getpid()).c_str(), 1);
    execvp(argv[0], argv.data());
    const int e = errno;
    std::fprintf(stderr, "dimmap-run: cannot run '%s': %s\n", argv[0], std::strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  g_child = pid;
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(sig, &fwd, nullptr);
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);

  int status = 0;
  struct rusage ru {};
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) throw LaunchError(std::string("waiting for the command failed: ") + std::strerror(errno));
  }
  g_child = 0;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (WIFSIGNALED(status))
    std::fprintf(stderr, "dimmap-run: '%s' was killed by signal %d (%s)%s\n", argv[0], WTERMSIG(status),
                 strsignal(WTERMSIG(status)), WTERMSIG(status) == SIGKILL ? ", perhaps by the OOM killer" : "");
  if (plan.stats) {
    const double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    std::fprintf(stderr,
                 "dimmap-run: stats exit=%d wall_s=%.6f user_s=%.6f sys_s=%.6f maxrss_kib=%ld minflt=%ld majflt=%ld\n",
                 code, wall, seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt);
  }
  return code;
}

}  // namespace dimmap::preload
