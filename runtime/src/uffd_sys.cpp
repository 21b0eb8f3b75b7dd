// uffd_sys.cpp - userfaultfd setup and ioctls, process_madvise batching.
#include "uffd_sys.hpp"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "log.hpp"

// Newer than Debian's 6.1 headers; values from the upstream uapi.
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
#endif
#ifndef UFFDIO_POISON
struct uffdio_poison {
  struct uffdio_range range;
  __u64 mode;
  __s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, 0x08, struct uffdio_poison)
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

namespace dimmap::detail {
namespace {

int ioctl_errno(int fd, unsigned long req, void* arg) { return ioctl(fd, req, arg) == 0 ? 0 : -errno; }

// One fresh userfaultfd; *kernel_faults tells whether kernel-mode faults are delivered.
int new_uffd(bool* kernel_faults) {
  *kernel_faults = true;
  int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
  if (dev >= 0) {
    int fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    close(dev);
    if (fd >= 0) return fd;
  }
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd >= 0) return fd;
  fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (fd >= 0) {
    *kernel_faults = false;
    return fd;
  }
  return -errno;
}

}  // namespace

int uffd_open(UffdFeatures* f, bool sigbus) {
  bool kernel_faults = true;
  int probe = new_uffd(&kernel_faults);
  if (probe < 0)
    return fail(-probe,
                "cannot create a userfaultfd (%s): /dev/userfaultfd is missing or not accessible and the "
                "userfaultfd syscall is refused (vm.unprivileged_userfaultfd=0, or blocked by a seccomp policy)",
                std::strerror(-probe));
  struct uffdio_api api = {};
  api.api = UFFD_API;
  int rc = ioctl_errno(probe, UFFDIO_API, &api);
  close(probe);
  if (rc < 0) return fail(-rc, "userfaultfd API handshake failed: %s", std::strerror(-rc));
  const uint64_t have = api.features;
  if (!(have & UFFD_FEATURE_MISSING_SHMEM))
    return fail(ENOTSUP, "this kernel's userfaultfd lacks missing faults on shmem (needs Linux 4.11+)");

  if (sigbus && !(have & UFFD_FEATURE_SIGBUS))
    return fail(ENOTSUP, "this kernel's userfaultfd cannot raise SIGBUS for faults (in-thread fault service)");
  uint64_t want = UFFD_FEATURE_MISSING_SHMEM | (sigbus ? uint64_t{UFFD_FEATURE_SIGBUS} : 0);
  for (uint64_t opt : {uint64_t{UFFD_FEATURE_WP_HUGETLBFS_SHMEM}, uint64_t{UFFD_FEATURE_POISON},
                       uint64_t{UFFD_FEATURE_THREAD_ID}})
    if (have & opt) want |= opt;

  int fd = new_uffd(&kernel_faults);
  if (fd < 0) return fail(-fd, "cannot create a userfaultfd: %s", std::strerror(-fd));
  api = {};
  api.api = UFFD_API;
  api.features = want;
  if ((rc = ioctl_errno(fd, UFFDIO_API, &api)) < 0) {
    close(fd);
    return fail(-rc, "userfaultfd feature negotiation failed: %s", std::strerror(-rc));
  }
  f->wp_shmem = want & UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
  f->poison = want & UFFD_FEATURE_POISON;
  f->thread_id = want & UFFD_FEATURE_THREAD_ID;
  f->kernel_faults = kernel_faults;
  if (!kernel_faults)
    log(LogLevel::warn,
        "userfaultfd is limited to user-mode faults here: system calls that read or write dimmap memory "
        "directly (e.g. write(fd, mapped, n)) fail with EFAULT on non-resident pages");
  return fd;
}

int uffd_register(int uffd, void* addr, size_t len, bool wp) {
  struct uffdio_register reg = {};
  reg.range.start = reinterpret_cast<uintptr_t>(addr);
  reg.range.len = len;
  reg.mode = UFFDIO_REGISTER_MODE_MISSING | (wp ? UFFDIO_REGISTER_MODE_WP : 0);
  return ioctl_errno(uffd, UFFDIO_REGISTER, &reg);
}

int uffd_open_wp_async() {
  bool kernel_faults = true;
  const int fd = new_uffd(&kernel_faults);
  if (fd < 0) return fd;
  struct uffdio_api api = {};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_WP_ASYNC;
  if (const int rc = ioctl_errno(fd, UFFDIO_API, &api); rc < 0) {
    close(fd);
    return rc;
  }
  return fd;
}

int uffd_register_wp_only(int uffd, void* addr, size_t len) {
  struct uffdio_register reg = {};
  reg.range.start = reinterpret_cast<uintptr_t>(addr);
  reg.range.len = len;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  return ioctl_errno(uffd, UFFDIO_REGISTER, &reg);
}

int uffd_unregister(int uffd, void* addr, size_t len) {
  struct uffdio_range range = {reinterpret_cast<uintptr_t>(addr), len};
  return ioctl_errno(uffd, UFFDIO_UNREGISTER, &range);
}

int uffd_wake(int uffd, void* addr, size_t len) {
  struct uffdio_range range = {reinterpret_cast<uintptr_t>(addr), len};
  return ioctl_errno(uffd, UFFDIO_WAKE, &range);
}

int uffd_writeprotect(int uffd, void* addr, size_t len, bool wp, bool wake) {
  struct uffdio_writeprotect w = {};
  w.range.start = reinterpret_cast<uintptr_t>(addr);
  w.range.len = len;
  w.mode = (wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0) | (wake ? 0 : UFFDIO_WRITEPROTECT_MODE_DONTWAKE);
  for (;;) {
    int rc = ioctl_errno(uffd, UFFDIO_WRITEPROTECT, &w);
    if (rc != -EAGAIN) return rc;
  }
}

int uffd_poison(int uffd, void* addr, size_t len) {
  struct uffdio_poison p = {};
  p.range.start = reinterpret_cast<uintptr_t>(addr);
  p.range.len = len;
  return ioctl_errno(uffd, UFFDIO_POISON, &p);
}

PageTable::~PageTable() {
  if (fd_ >= 0) close(fd_);
}

int PageTable::open() {
  fd_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return fail(errno, "cannot open /proc/self/pagemap: %s", std::strerror(errno));
  return 0;
}

int PageTable::present(const void* addr, size_t npages, std::vector<bool>* out) {
  constexpr uint64_t kPresent = 1ull << 63;  // see Documentation/admin-guide/mm/pagemap.rst
  const size_t page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  entries_.resize(npages);
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(addr) / page_size * sizeof(uint64_t));
  const ssize_t n = pread(fd_, entries_.data(), npages * sizeof(uint64_t), at);
  if (n != static_cast<ssize_t>(npages * sizeof(uint64_t))) return n < 0 ? -errno : -EIO;
  out->resize(npages);
  for (size_t i = 0; i < npages; ++i) (*out)[i] = entries_[i] & kPresent;
  return 0;
}

MadviseBatch::MadviseBatch(int advice) : advice_(advice) {
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd_ < 0) batched_ = false;
}

MadviseBatch::~MadviseBatch() {
  if (pidfd_ >= 0) close(pidfd_);
}

int MadviseBatch::flush() {
  int calls = 0;
  size_t done = 0;
  while (batched_ && done < iov_.size()) {
    const size_t n = std::min<size_t>(iov_.size() - done, IOV_MAX);
    long rc = syscall(SYS_process_madvise, pidfd_, &iov_[done], n, advice_, 0);
    ++calls;
    if (rc < 0) {
      // Older kernels accept only a few advices here: fall back to madvise for good.
      log(LogLevel::info, "process_madvise(advice %d) unavailable (%s): one madvise per page", advice_,
          std::strerror(errno));
      batched_ = false;
      break;
    }
    done += n;
  }
  for (; done < iov_.size(); ++done, ++calls) madvise(iov_[done].iov_base, iov_[done].iov_len, advice_);
  iov_.clear();
  return calls;
}

}  // namespace dimmap::detail
