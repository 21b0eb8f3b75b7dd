// scratch_mounts.hpp - small file systems that fill up or fail, for fault-injection tests.
//
// All of them live in a private mount namespace (enter_private_mount_namespace), so they
// vanish with the test process even if it dies half-way. They need root (CI runs as root).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace dimmap::reliability {

// Gives this process its own mount namespace with private propagation: mounts made from now
// on are invisible to the rest of the machine and disappear when the process exits. Must be
// called while the process has a single thread. Returns 0 or an errno.
int enter_private_mount_namespace();

// A fresh empty directory (mkdtemp) under base; removed with its files by remove_tree().
std::string make_temp_dir(const std::string& base, const std::string& name);
void remove_tree(const std::string& dir);

// A tmpfs of `bytes` mounted on a fresh directory: writes beyond its size fail with ENOSPC.
class TmpfsMount {
 public:
  explicit TmpfsMount(uint64_t bytes);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// An ext4 file system of `bytes` in an image file on disk, mounted through a loop device
// (autoclear: the loop device goes away with the mount). O_DIRECT works on it, as on the
// real storage the engine is meant for.
class Ext4LoopMount {
 public:
  explicit Ext4LoopMount(uint64_t bytes);
  ~Ext4LoopMount();
  Ext4LoopMount(const Ext4LoopMount&) = delete;
  Ext4LoopMount& operator=(const Ext4LoopMount&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string image_, dir_;
};

// faultfs (faultfs.cpp) serving a fresh backing directory on disk at a fresh mount point.
class FaultFs {
 public:
  // page_cache: the kernel caches the files (faultfs --page-cache), so plain mmap works on them.
  explicit FaultFs(const std::string& server_binary, bool page_cache = false);
  ~FaultFs();
  FaultFs(const FaultFs&) = delete;
  FaultFs& operator=(const FaultFs&) = delete;

  // Where applications open files, and where the same bytes sit on the backing disk.
  std::string path(const std::string& name) const { return mount_ + "/" + name; }
  std::string backing_path(const std::string& name) const { return backing_ + "/" + name; }

  // Sends control lines (see faultfs.cpp), e.g. "read EIO file=data offset=4096 length=4096".
  void inject(const std::string& rules) const;
  void clear() const { inject("clear"); }
  // reads, writes, fsyncs, failed_reads, failed_writes, failed_fsyncs, hung.
  std::map<std::string, uint64_t> counters() const;
  // SIGKILL the server: the kernel aborts the connection, so requests it holds fail with
  // ECONNABORTED and later ones with ENOTCONN.
  void kill_server();

 private:
  std::string backing_, mount_;
  pid_t server_ = -1;
};

// Runs a command (argv[0] searched in PATH) and returns its exit status, -1 if it could not run.
int run_command(const char* const argv[]);

}  // namespace dimmap::reliability
