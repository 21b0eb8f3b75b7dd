// cgroup.hpp - a memory cgroup that lives as long as one command runs.
//
// Memory budgets are how Linux mmap gets the same DRAM as a DI-MMAP buffer: the process runs
// in a memory cgroup whose limit covers its heap and the page cache it pulls in. Both cgroup
// versions are supported: v1 (memory.limit_in_bytes, memory.memsw.*, memory.max_usage_in_bytes,
// memory.oom_control) and v2 (memory.max, memory.swap.max, memory.peak, memory.events).
//
// New cgroups are made inside the caller's own memory cgroup, so whatever limits and
// accounting already apply to the caller keep applying to the command.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace budget {

enum class CgroupVersion { v1 = 1, v2 = 2 };

// One line of /proc/self/mountinfo that mounts a cgroup file system.
struct CgroupMount {
  CgroupVersion version = CgroupVersion::v1;
  std::string root;         // the part of the hierarchy that is mounted ("/" usually)
  std::string mount_point;  // where it is mounted
  std::vector<std::string> controllers;  // v1: from the super options ("memory", ...)
};

// The cgroup mounts listed in mountinfo text (v1 mounts of any controller, and cgroup2).
std::vector<CgroupMount> parse_cgroup_mounts(const std::string& mountinfo);

// /proc/self/cgroup text -> controller -> path. The v2 entry ("0::/path") has key "".
std::map<std::string, std::string> parse_proc_cgroup(const std::string& text);

// The directory of `path` (as /proc/self/cgroup names it) under a mount of that hierarchy,
// or "" if the mount does not contain it.
std::string cgroup_dir(const CgroupMount& mount, const std::string& path);

// An existing cgroup directory in which new memory cgroups can be made.
struct CgroupParent {
  CgroupVersion version = CgroupVersion::v1;
  std::string dir;
};

// The caller's own memory cgroup (v1 if the memory controller is mounted there, else v2
// with the memory controller enabled for children, falling back to the v2 root, which is
// exempt from the no-internal-processes rule). Throws dimmap::Error if there is none.
CgroupParent default_cgroup_parent();
// A given directory; its version is recognized by its control files.
CgroupParent cgroup_parent_at(const std::string& dir);

class MemoryCgroup {
 public:
  // Creates "<parent>/dimmap-budget.<name>.<pid>.<n>" limited to limit_bytes of memory, with
  // no swap beyond it. Empty cgroups left behind by dead dimmap-budget runs are removed first.
  MemoryCgroup(const CgroupParent& parent, const std::string& name, uint64_t limit_bytes);
  ~MemoryCgroup();  // remove(); failures are printed on stderr
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const std::string& path() const { return path_; }
  CgroupVersion version() const { return version_; }
  // The file a process joins through by writing its pid ("0" = the writer itself).
  std::string procs_file() const { return path_ + "/cgroup.procs"; }
  uint64_t limit_bytes() const;        // as the kernel rounded it
  std::optional<uint64_t> peak_bytes() const;  // nullopt on v2 kernels without memory.peak
  uint64_t oom_kills() const;          // processes the OOM killer killed in this cgroup
  uint64_t limit_hits() const;         // times usage hit the limit (reclaim or OOM)
  std::vector<pid_t> pids() const;

  // Kills whatever still runs in the cgroup, then removes it. Idempotent; returns how many
  // processes had to be killed. Throws dimmap::Error if the cgroup cannot be removed.
  size_t remove();

 private:
  std::string path_;
  CgroupVersion version_;
  bool removed_ = false;
};

// Reads a whole (small) file; throws dimmap::Error naming the file.
std::string read_text_file(const std::string& path);

}  // namespace budget
