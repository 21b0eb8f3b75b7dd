// scratch_mounts.cpp - see scratch_mounts.hpp.
#include "scratch_mounts.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace dimmap::reliability {
namespace {

constexpr long kFuseSuperMagic = 0x65735546;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

bool wait_exit(pid_t pid, double seconds, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

int enter_private_mount_namespace() {
  if (unshare(CLONE_NEWNS) != 0) return errno;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  return 0;
}

std::string make_temp_dir(const std::string& base, const std::string& name) {
  std::string templ = base + "/" + name + "-XXXXXX";
  if (!mkdtemp(templ.data())) fail("cannot create a directory in " + base);
  return templ;
}

void remove_tree(const std::string& dir) {
  if (dir.empty()) return;
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int run_command(const char* const argv[]) {
  pid_t pid;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- tmpfs ----

TmpfsMount::TmpfsMount(uint64_t bytes) {
  dir_ = make_temp_dir("/tmp", "dimmap-tmpfs");
  const std::string opts = "size=" + std::to_string(bytes) + ",mode=0700";
  if (mount("dimmap-test", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    rmdir(dir_.c_str());
    fail("cannot mount a tmpfs of " + std::to_string(bytes) + " bytes");
  }
}

TmpfsMount::~TmpfsMount() {
  umount2(dir_.c_str(), MNT_DETACH);
  rmdir(dir_.c_str());
}

// ---- ext4 on a loop device ----

Ext4LoopMount::Ext4LoopMount(uint64_t bytes) {
  const std::string base = make_temp_dir("/var/tmp", "dimmap-ext4");
  image_ = base + "/image";
  dir_ = base + "/mnt";
  if (mkdir(dir_.c_str(), 0700) != 0) fail("cannot create " + dir_);
  const int fd = open(image_.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) fail("cannot create " + image_);
  close(fd);
  // No journal and no reserved blocks: every block the size promises can be filled.
  const char* mkfs[] = {"mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-m", "0", image_.c_str(), nullptr};
  const char* mnt[] = {"mount", "-o", "loop", "-t", "ext4", image_.c_str(), dir_.c_str(), nullptr};
  if (run_command(mkfs) != 0 || run_command(mnt) != 0) {
    remove_tree(base);
    throw std::runtime_error("cannot make and loop-mount an ext4 image in " + base);
  }
}

Ext4LoopMount::~Ext4LoopMount() {
  umount2(dir_.c_str(), MNT_DETACH);  // the loop device was set up with autoclear
  remove_tree(dir_.substr(0, dir_.rfind('/')));
}

// ---- faultfs ----

FaultFs::FaultFs(const std::string& server_binary, bool page_cache) {
  backing_ = make_temp_dir("/var/tmp", "dimmap-faultfs-backing");
  mount_ = make_temp_dir("/tmp", "dimmap-faultfs");
  server_ = fork();
  if (server_ < 0) fail("fork");
  if (server_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
    if (page_cache)
      execl(server_binary.c_str(), "faultfs", "--page-cache", backing_.c_str(), mount_.c_str(), static_cast<char*>(nullptr));
    else
      execl(server_binary.c_str(), "faultfs", backing_.c_str(), mount_.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot run %s: %s\n", server_binary.c_str(), std::strerror(errno));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    struct statfs st;
    if (statfs(mount_.c_str(), &st) == 0 && st.f_type == kFuseSuperMagic) break;
    int status;
    if (waitpid(server_, &status, WNOHANG) == server_) {
      server_ = -1;
      throw std::runtime_error("faultfs exited before mounting " + mount_);
    }
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("faultfs did not mount " + mount_);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

FaultFs::~FaultFs() {
  umount2(mount_.c_str(), MNT_DETACH);  // the server's loop ends when its mount goes
  if (server_ > 0) {
    int status;
    if (!wait_exit(server_, 5, &status)) {
      kill(server_, SIGKILL);
      waitpid(server_, &status, 0);
    }
  }
  rmdir(mount_.c_str());
  remove_tree(backing_);
}

void FaultFs::inject(const std::string& rules) const {
  const std::string control = mount_ + "/.faultfs";
  const int fd = open(control.c_str(), O_WRONLY);
  if (fd < 0) fail("cannot open " + control);
  const std::string text = rules + "\n";
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = errno;
  close(fd);
  errno = err;
  if (n != static_cast<ssize_t>(text.size())) fail("faultfs refused '" + rules + "'");
}

std::map<std::string, uint64_t> FaultFs::counters() const {
  std::ifstream in(mount_ + "/.faultfs");
  std::map<std::string, uint64_t> out;
  for (std::string kv; in >> kv;) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = std::stoull(kv.substr(eq + 1));
  }
  return out;
}

void FaultFs::kill_server() {
  if (server_ <= 0) return;
  kill(server_, SIGKILL);
  int status;
  waitpid(server_, &status, 0);
  server_ = -1;
}

}  // namespace dimmap::reliability
