// uffd_sys.hpp - thin wrappers over userfaultfd and the memory-management calls the engine
// uses, with run-time feature detection (Debian's 6.1 headers lack newer constants; the
// running kernel is usually newer).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dimmap::detail {

struct UffdFeatures {
  bool wp_shmem = false;     // write-protect on shmem (5.19+)
  bool poison = false;       // UFFDIO_POISON (6.6+): SIGBUS for failed fills
  bool thread_id = false;    // faulting thread id in messages
  bool kernel_faults = true; // false when only user-mode faults are delivered
};

// Opens a userfaultfd (O_NONBLOCK, O_CLOEXEC) and negotiates the features the engine needs:
// /dev/userfaultfd first, then the userfaultfd syscall, then the syscall restricted to
// user-mode faults (works without privileges). Returns the fd or -errno (fail() set).
// sigbus: faults raise SIGBUS in the faulting thread instead of queueing a message
// (UFFD_FEATURE_SIGBUS, for in-thread fault service).
int uffd_open(UffdFeatures* features, bool sigbus = false);

// A userfaultfd whose only use is to switch off the kernel's fault-around on file mappings:
// a mapping registered with it for write-protect faults (uffd_register_wp_only) gets no
// fault-around, and with UFFD_FEATURE_WP_ASYNC a write-protect fault would be resolved by the
// kernel itself, so no message is ever queued. Nothing is ever write-protected through it.
// Returns the fd, or -errno where the kernel lacks it (6.7+) or userfaultfd is refused; it
// sets no error (the caller goes on with fault-around).
int uffd_open_wp_async();
// Registers [addr, addr+len) for write-protect faults only. The mapping must allow writing
// (VM_MAYWRITE: shared on a writable file, or private): EPERM otherwise.
int uffd_register_wp_only(int uffd, void* addr, size_t len);

// Registers [addr, addr+len) for missing faults (a page the memfd lacks), and write-protect
// faults if wp. Pages the memfd holds are mapped by the kernel's shmem fault path.
int uffd_register(int uffd, void* addr, size_t len, bool wp);
int uffd_unregister(int uffd, void* addr, size_t len);

int uffd_wake(int uffd, void* addr, size_t len);
// Sets (wp) or clears write protection; clearing also wakes waiting threads unless !wake. On shmem,
// setting it on an empty page-table entry leaves a marker there, so the page is mapped
// write-protected when the kernel maps it later; clearing removes the marker.
int uffd_writeprotect(int uffd, void* addr, size_t len, bool wp, bool wake = true);
// Installs a poison marker so accesses raise SIGBUS (and wakes waiters).
int uffd_poison(int uffd, void* addr, size_t len);

// Which pages of the process's own address space have a page-table entry now, from
// /proc/self/pagemap (one read per run of pages; works on every kernel the engine supports).
class PageTable {
 public:
  PageTable() = default;
  ~PageTable();
  PageTable(const PageTable&) = delete;
  PageTable& operator=(const PageTable&) = delete;
  int open();  // 0 or -errno (fail() set)
  // present[i] = page i of [addr, addr + npages pages) is mapped. Returns 0 or -errno.
  int present(const void* addr, size_t npages, std::vector<bool>* present);

 private:
  int fd_ = -1;
  std::vector<uint64_t> entries_;
};

// Applies one madvise advice to many ranges with one process_madvise call (one TLB flush
// on kernels that batch it), falling back to one madvise per range on older kernels.
// MADV_DONTNEED drops page-table entries (the bulk unmap); MADV_REMOVE frees shmem pages.
class MadviseBatch {
 public:
  explicit MadviseBatch(int advice);
  ~MadviseBatch();
  MadviseBatch(const MadviseBatch&) = delete;
  MadviseBatch& operator=(const MadviseBatch&) = delete;
  // Adjacent ranges merge into one: one page-table walk, and for the dirty entries
  // userfaultfd installs one TLB flush per range instead of one per page.
  void add(void* addr, size_t len) {
    if (!iov_.empty() && static_cast<char*>(iov_.back().iov_base) + iov_.back().iov_len == addr)
      iov_.back().iov_len += len;
    else
      iov_.push_back({addr, len});
  }
  size_t size() const { return iov_.size(); }
  // Returns the number of calls made.
  int flush();

 private:
  std::vector<struct iovec> iov_;
  int advice_;
  int pidfd_ = -1;
  bool batched_ = true;  // process_madvise accepts this advice
};

}  // namespace dimmap::detail
