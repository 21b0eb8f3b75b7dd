// cgroup.cpp - finding, creating, reading and removing memory cgroups (v1 and v2).
#include <budget/cgroup.hpp>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <thread>

namespace budget {
namespace {

using dimmap::Error;

[[noreturn]] void throw_errno(const std::string& what, int err) { throw Error(what + ": " + std::strerror(err)); }

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

bool is_dir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Writes value to a control file; returns 0 or an errno (cgroup files report errors on write).
int try_write(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, value.data(), value.size());
  int err = n < 0 ? errno : (static_cast<size_t>(n) == value.size() ? 0 : EIO);
  close(fd);
  return err;
}

void write_control(const std::string& path, const std::string& value) {
  if (int err = try_write(path, value)) throw_errno("cannot write '" + value + "' to " + path, err);
}

uint64_t read_number(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.rfind("max", 0) == 0) return UINT64_MAX;  // v2 "no limit"
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno || end == text.c_str()) throw Error(path + " does not hold a number: '" + text + "'");
  return v;
}

// mountinfo escapes blanks and backslashes in paths as octal (\040).
std::string unescape_mount_path(const std::string& s) {
  std::string out;
  auto is_octal = [](char c) { return c >= '0' && c <= '7'; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && is_octal(s[i + 1]) && is_octal(s[i + 2]) && is_octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool contains_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

// v2: the memory controller must be enabled in dir's subtree_control for children to have it.
bool enable_memory_for_children(const std::string& dir) {
  const std::string control = dir + "/cgroup.subtree_control";
  if (contains_word(read_text_file(control), "memory")) return true;
  return try_write(control, "+memory") == 0;
}

// Cgroups named dimmap-budget.<name>.<pid>.<n> whose creator is gone and that are empty were
// left by a run that was killed before it could clean up (SIGKILL): remove them.
void remove_stale_cgroups(const std::string& parent) {
  DIR* d = opendir(parent.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("dimmap-budget.", 0) != 0) continue;
    std::vector<std::string> parts = split(name, '.');
    if (parts.size() < 4) continue;
    pid_t creator = static_cast<pid_t>(std::atol(parts[parts.size() - 2].c_str()));
    if (creator <= 0 || kill(creator, 0) == 0 || errno != ESRCH) continue;
    rmdir((parent + "/" + name).c_str());  // fails harmlessly if processes still run there
  }
  closedir(d);
}

void check_name(const std::string& name) {
  if (name.empty()) throw Error("the cgroup name must not be empty");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
      throw Error("cgroup name '" + name + "' may only contain letters, digits, '-' and '_'");
}

}  // namespace

std::string read_text_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("cannot read " + path, errno);
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      throw_errno("cannot read " + path, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

std::vector<CgroupMount> parse_cgroup_mounts(const std::string& mountinfo) {
  std::vector<CgroupMount> mounts;
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string w;
    while (fields >> w) f.push_back(w);
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i)
      if (f[i] == "-") {
        dash = i;
        break;
      }
    if (dash == 0 || dash + 1 >= f.size()) continue;
    const std::string& fstype = f[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m;
    m.version = fstype == "cgroup2" ? CgroupVersion::v2 : CgroupVersion::v1;
    m.root = unescape_mount_path(f[3]);
    m.mount_point = unescape_mount_path(f[4]);
    if (m.version == CgroupVersion::v1 && dash + 3 < f.size())
      for (const std::string& opt : split(f[dash + 3], ','))
        if (opt != "rw" && opt != "ro" && opt.find('=') == std::string::npos) m.controllers.push_back(opt);
    mounts.push_back(m);
  }
  return mounts;
}

std::map<std::string, std::string> parse_proc_cgroup(const std::string& text) {
  std::map<std::string, std::string> paths;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // hierarchy-id:controller,list:path (the path may itself contain ':')
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      paths[""] = path;
      continue;
    }
    for (const std::string& c : split(controllers, ',')) paths[c] = path;
  }
  return paths;
}

std::string cgroup_dir(const CgroupMount& mount, const std::string& path) {
  if (mount.root == "/") return path == "/" ? mount.mount_point : mount.mount_point + path;
  if (path == mount.root) return mount.mount_point;
  if (path.rfind(mount.root + "/", 0) == 0) return mount.mount_point + path.substr(mount.root.size());
  return "";
}

CgroupParent default_cgroup_parent() {
  std::vector<CgroupMount> mounts = parse_cgroup_mounts(read_text_file("/proc/self/mountinfo"));
  std::map<std::string, std::string> own = parse_proc_cgroup(read_text_file("/proc/self/cgroup"));
  for (const CgroupMount& m : mounts) {
    if (m.version != CgroupVersion::v1) continue;
    bool has_memory = false;
    for (const std::string& c : m.controllers) has_memory |= c == "memory";
    if (!has_memory || !own.count("memory")) continue;
    std::string dir = cgroup_dir(m, own["memory"]);
    if (!dir.empty() && is_dir(dir)) return {CgroupVersion::v1, dir};
  }
  for (const CgroupMount& m : mounts) {
    if (m.version != CgroupVersion::v2) continue;
    if (!contains_word(read_text_file(m.mount_point + "/cgroup.controllers"), "memory")) continue;
    std::string dir = own.count("") ? cgroup_dir(m, own[""]) : "";
    if (!dir.empty() && is_dir(dir) && enable_memory_for_children(dir)) return {CgroupVersion::v2, dir};
    if (enable_memory_for_children(m.mount_point)) return {CgroupVersion::v2, m.mount_point};
    throw Error("cannot enable the memory controller for child cgroups of " + m.mount_point);
  }
  throw Error("no memory cgroup controller is mounted (looked for cgroup v1 'memory' and cgroup v2 in "
              "/proc/self/mountinfo)");
}

CgroupParent cgroup_parent_at(const std::string& dir) {
  if (!is_dir(dir)) throw Error("cgroup directory " + dir + " does not exist");
  if (exists(dir + "/memory.limit_in_bytes")) return {CgroupVersion::v1, dir};
  if (exists(dir + "/cgroup.controllers")) {
    if (!enable_memory_for_children(dir))
      throw Error("cannot enable the memory controller for child cgroups of " + dir);
    return {CgroupVersion::v2, dir};
  }
  throw Error(dir + " is not a memory cgroup (no memory.limit_in_bytes or cgroup.controllers)");
}

MemoryCgroup::MemoryCgroup(const CgroupParent& parent, const std::string& name, uint64_t limit_bytes)
    : version_(parent.version) {
  check_name(name);
  if (limit_bytes == 0) throw Error("a memory budget must be larger than 0 bytes");
  remove_stale_cgroups(parent.dir);
  static std::atomic<unsigned> serial{0};
  for (;;) {
    path_ = parent.dir + "/dimmap-budget." + name + "." + std::to_string(getpid()) + "." +
            std::to_string(serial.fetch_add(1));
    if (mkdir(path_.c_str(), 0755) == 0) break;
    if (errno != EEXIST) throw_errno("cannot create cgroup " + path_, errno);
  }
  try {
    const std::string limit = std::to_string(limit_bytes);
    if (version_ == CgroupVersion::v1) {
      write_control(path_ + "/memory.limit_in_bytes", limit);
      // Without swap accounting limits, a budget could spill to swap instead of failing.
      if (exists(path_ + "/memory.memsw.limit_in_bytes")) write_control(path_ + "/memory.memsw.limit_in_bytes", limit);
      // Children inherit oom_kill_disable; a budget must kill, never hang, when it is exceeded.
      try_write(path_ + "/memory.oom_control", "0");
    } else {
      write_control(path_ + "/memory.max", limit);
      if (exists(path_ + "/memory.swap.max")) write_control(path_ + "/memory.swap.max", "0");
    }
  } catch (...) {
    rmdir(path_.c_str());
    removed_ = true;
    throw;
  }
}

MemoryCgroup::~MemoryCgroup() {
  try {
    remove();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dimmap-budget: %s\n", e.what());
  }
}

uint64_t MemoryCgroup::limit_bytes() const {
  return read_number(path_ + (version_ == CgroupVersion::v1 ? "/memory.limit_in_bytes" : "/memory.max"));
}

std::optional<uint64_t> MemoryCgroup::peak_bytes() const {
  if (version_ == CgroupVersion::v1) return read_number(path_ + "/memory.max_usage_in_bytes");
  if (exists(path_ + "/memory.peak")) return read_number(path_ + "/memory.peak");
  return std::nullopt;
}

uint64_t MemoryCgroup::oom_kills() const {
  const std::string file = path_ + (version_ == CgroupVersion::v1 ? "/memory.oom_control" : "/memory.events");
  return dimmap::cgroup_keyed_value(read_text_file(file), "oom_kill").value_or(0);
}

uint64_t MemoryCgroup::limit_hits() const {
  if (version_ == CgroupVersion::v1) return read_number(path_ + "/memory.failcnt");
  return dimmap::cgroup_keyed_value(read_text_file(path_ + "/memory.events"), "max").value_or(0);
}

std::vector<pid_t> MemoryCgroup::pids() const {
  std::vector<pid_t> out;
  std::istringstream in(read_text_file(procs_file()));
  long pid;
  while (in >> pid) out.push_back(static_cast<pid_t>(pid));
  return out;
}

size_t MemoryCgroup::remove() {
  if (removed_) return 0;
  using Clock = std::chrono::steady_clock;
  std::set<pid_t> killed;
  const auto kill_deadline = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    std::vector<pid_t> left = pids();
    if (left.empty()) break;
    if (Clock::now() > kill_deadline)
      throw Error("cannot empty cgroup " + path_ + ": " + std::to_string(left.size()) + " processes survive SIGKILL");
    if (version_ == CgroupVersion::v2 && try_write(path_ + "/cgroup.kill", "1") == 0) {
      killed.insert(left.begin(), left.end());
    } else {
      for (pid_t pid : left)
        if (kill(pid, SIGKILL) == 0) killed.insert(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The kernel may report EBUSY for a moment after the last task left.
  const auto rmdir_deadline = Clock::now() + std::chrono::seconds(5);
  while (rmdir(path_.c_str()) != 0) {
    if (errno == ENOENT) break;
    if (errno != EBUSY || Clock::now() > rmdir_deadline) throw_errno("cannot remove cgroup " + path_, errno);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  removed_ = true;
  return killed.size();
}

}  // namespace budget
