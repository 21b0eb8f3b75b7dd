// memory_limit.cpp - the process's memory limit (cgroup v1 or v2, else MemAvailable) and the
// buffer and placement-threshold defaults derived from it.
#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "engine.hpp"

namespace dimmap {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A cgroup limit file: a number of bytes, or "max" (v2: no limit) -> nullopt.
std::optional<uint64_t> read_limit(const std::string& path) {
  const std::optional<std::string> text = read_file(path);
  if (!text || text->rfind("max", 0) == 0) return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text->c_str(), &end, 10);
  if (end == text->c_str()) return std::nullopt;
  return v;
}

std::optional<uint64_t> meminfo_bytes(const std::string& meminfo, const std::string& key) {
  std::istringstream in(meminfo);
  std::string name, unit;
  uint64_t kib = 0;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == key + ":") return kib * 1024;
  }
  return std::nullopt;
}

struct CgroupMount {
  bool v2 = false;
  std::string root;         // the part of the hierarchy mounted there ("/" usually)
  std::string mount_point;
};

// mountinfo: id parent major:minor root mount-point options [optional...] - fstype source super
// Keeps cgroup2 mounts and the v1 mounts whose super options name the memory controller.
std::vector<CgroupMount> memory_mounts(const std::string& mountinfo) {
  std::vector<CgroupMount> mounts;
  std::istringstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> f;
    for (std::string w; words >> w;) f.push_back(w);
    size_t dash = 0;
    for (size_t i = 6; i < f.size() && !dash; ++i)
      if (f[i] == "-") dash = i;
    if (!dash || dash + 1 >= f.size()) continue;
    const std::string& type = f[dash + 1];
    bool memory_v1 = false;
    if (type == "cgroup" && dash + 3 < f.size()) {
      std::istringstream opts(f[dash + 3]);
      for (std::string o; std::getline(opts, o, ',');) memory_v1 |= o == "memory";
    }
    if (type == "cgroup2" || memory_v1) mounts.push_back({type == "cgroup2", f[3], f[4]});
  }
  return mounts;
}

// /proc/self/cgroup: "id:controllers:path"; the v2 line has no controllers.
std::optional<std::string> own_path(const std::string& proc_cgroup, bool v2) {
  std::istringstream in(proc_cgroup);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    if (v2 ? controllers.empty() : ("," + controllers + ",").find(",memory,") != std::string::npos)
      return line.substr(b + 1);
  }
  return std::nullopt;
}

// The smallest limit from the process's cgroup directory up to the mount point.
void walk_up(const std::string& root, const CgroupMount& m, const std::string& own, MemoryLimit& found) {
  std::string rel = own;
  if (m.root != "/") {  // a mount of part of the hierarchy: the path must lie inside it
    rel = own.rfind(m.root, 0) == 0 ? own.substr(m.root.size()) : "";
  }
  while (rel.size() > 1 && rel.back() == '/') rel.pop_back();
  if (rel == "/") rel.clear();
  const char* file = m.v2 ? "/memory.max" : "/memory.limit_in_bytes";
  for (;;) {
    const std::string dir = m.mount_point + rel;
    if (const std::optional<uint64_t> v = read_limit(root + dir + file); v && *v < found.bytes) {
      found.bytes = *v;
      found.source = std::string(m.v2 ? "cgroup v2 memory.max" : "cgroup v1 memory.limit_in_bytes") + " of " + dir;
      found.usage_file = root + dir + (m.v2 ? "/memory.current" : "/memory.usage_in_bytes");
      found.stat_file = root + dir + "/memory.stat";
      found.v2 = m.v2;
    }
    if (rel.empty()) break;
    rel.resize(rel.rfind('/'));
  }
}

MemoryLimit without_cgroup(uint64_t bytes, std::string source) {
  MemoryLimit limit;
  limit.bytes = bytes;
  limit.source = std::move(source);
  return limit;
}

uint64_t round_down_mib(uint64_t bytes) { return bytes >= 2 * kMiB ? bytes / kMiB * kMiB : bytes; }

}  // namespace

MemoryLimit memory_limit(const std::string& root) {
  MemoryLimit found;
  found.bytes = UINT64_MAX;
  const std::optional<std::string> proc_cgroup = read_file(root + "/proc/self/cgroup");
  const std::optional<std::string> mountinfo = read_file(root + "/proc/self/mountinfo");
  if (proc_cgroup && mountinfo)
    for (const CgroupMount& m : memory_mounts(*mountinfo))
      if (const std::optional<std::string> own = own_path(*proc_cgroup, m.v2)) walk_up(root, m, *own, found);

  const std::optional<std::string> meminfo = read_file(root + "/proc/meminfo");
  uint64_t total = meminfo ? meminfo_bytes(*meminfo, "MemTotal").value_or(0) : 0;  // 0: unknown
  if (total == 0 && root.empty())
    total = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // v1 writes "no limit" as a huge number; any limit at or above the machine's memory limits nothing.
  if (found.bytes != UINT64_MAX && (total == 0 || found.bytes < total)) return found;
  if (meminfo)
    if (const std::optional<uint64_t> avail = meminfo_bytes(*meminfo, "MemAvailable"))
      return without_cgroup(*avail, "MemAvailable in " + root + "/proc/meminfo");
  if (total) return without_cgroup(total, "physical memory");
  return without_cgroup(0, "unknown");
}

std::optional<uint64_t> cgroup_keyed_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const size_t eol = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(std::min(eol + 1, text.size()));
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') continue;
    const std::string_view number = line.substr(key.size() + 1);
    uint64_t value = 0;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (error != std::errc() || end != number.data() + number.size()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

uint64_t default_buffer_bytes(uint64_t limit_bytes, bool page_cache) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t smallest = DIMMAP_MIN_BUFFER_PAGES * page;
  const uint64_t share = page_cache ? limit_bytes - limit_bytes / 8 : limit_bytes / 2;
  return std::max(smallest, round_down_mib(std::min<uint64_t>(256 * kMiB, share)));
}

uint64_t default_min_alloc(uint64_t limit_bytes) {
  return std::clamp<uint64_t>(limit_bytes / 32 / kMiB * kMiB, kMiB, 64 * kMiB);
}

BufferChoice choose_buffer(std::string_view option_text, const MemoryLimit& limit, std::string_view option_name) {
  BufferChoice choice;
  const char* env = std::getenv("DIMMAP_BUFFER");
  if (!option_text.empty()) {
    choice.bytes = parse_size(option_text, option_name);
    choice.why = std::string(option_name);
  } else if (env && *env) {
    choice.bytes = parse_size(env, "DIMMAP_BUFFER");
    choice.why = "DIMMAP_BUFFER";
  } else {
    const bool page_cache = detail::environment_buffer_is_page_cache();
    choice.bytes = default_buffer_bytes(limit.bytes, page_cache);
    choice.why = std::string(page_cache ? "7/8 of the memory limit of " : "half the memory limit of ") +
                 format_size(limit.bytes) + " (" + limit.source + "), at most 256M";
    return choice;
  }
  if (limit.bytes && choice.bytes > limit.bytes)
    choice.warning = choice.why + "=" + format_size(choice.bytes) + " is more than the memory limit of " +
                     format_size(limit.bytes) + " (" + limit.source + "): the run may be killed for lack of memory";
  return choice;
}

}  // namespace dimmap
