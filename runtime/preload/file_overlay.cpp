// file_overlay.cpp - the interposed mapping calls behind dimmap-run --files (see
// file_overlay.hpp for which mappings are taken over and why).
//
// The kernel is reached with raw system calls, not through glibc's mmap & co. (which these
// functions replace), so nothing here needs dlsym. Calls made while t_depth > 0 are the
// preload's or libdimmap's own (the buffer's page store, its unmaps) and pass straight through.
#include <dimmap/dimmap.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "file_overlay.hpp"
#include "preload_state.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace dimmap::preload {
namespace {

void* sys_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}
int sys_munmap(void* addr, size_t len) { return static_cast<int>(syscall(SYS_munmap, addr, len)); }
int sys_msync(void* addr, size_t len, int flags) { return static_cast<int>(syscall(SYS_msync, addr, len, flags)); }
int sys_mprotect(void* addr, size_t len, int prot) { return static_cast<int>(syscall(SYS_mprotect, addr, len, prot)); }
void* sys_mremap(void* old, size_t old_len, size_t new_len, int flags, void* new_addr) {
  return reinterpret_cast<void*>(syscall(SYS_mremap, old, old_len, new_len, flags, new_addr));
}

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
size_t round_up(size_t n) { return (n + page_size() - 1) / page_size() * page_size(); }

// The file behind fd as the kernel names it: absolute, symlinks resolved.
bool fd_path(int fd, char* out, size_t out_len) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, out, out_len - 1);
  if (n <= 0) return false;
  out[n] = '\0';
  return out[0] == '/';
}

// Why Linux keeps a mapping of a file under DIR, or nullptr if the buffer can take it.
const char* reason_to_leave(int prot, int flags, int fd, const struct stat& st, off_t off) {
  if (in_forked_child()) return "mapped in a forked child, which has no DI-MMAP fault server";
  if (prot & PROT_WRITE)
    return "writable mapping: the overlay maps read-only files, so the program's writes stay coherent with Linux";
  if (prot & PROT_EXEC) return "executable mapping";
  if (!(prot & PROT_READ)) return "mapping without PROT_READ";
  const int type = flags & MAP_TYPE;
  if (type != MAP_SHARED && type != MAP_PRIVATE) return "mapping type other than MAP_SHARED or MAP_PRIVATE";
  if (flags & MAP_HUGETLB) return "MAP_HUGETLB mapping";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  const int acc = fcntl(fd, F_GETFL);
  if (acc < 0 || (acc & O_ACCMODE) != O_RDONLY)
    return "file opened for writing: its write()/pwrite() would not reach a buffered copy";
  if (static_cast<uint64_t>(off) >= static_cast<uint64_t>(st.st_size)) return "mapping starts past the end of the file";
  return nullptr;
}

bool insert(const OverlayMapping& m) {
  OverlayTable& t = overlay_table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (OverlayMapping& s : t.slots) {
    if (!s.used) {
      s = m;
      s.used = true;
      t.live.fetch_add(1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

// Undoes a taken-over mapping (table locked by the caller). Returns 0 or -1 with errno.
int unmap_locked(OverlayTable& t, OverlayMapping& m) {
  if (!m.linux_only && dimmap_munmap(reinterpret_cast<void*>(m.base), m.dimmap_length) != 0) {
    const int e = errno;
    report("munmap of '%s' at %#lx: %s", m.path, static_cast<unsigned long>(m.base), dimmap_last_error());
    errno = e;
    return -1;
  }
  if (m.length > m.dimmap_length)
    sys_munmap(reinterpret_cast<void*>(m.base + m.dimmap_length), m.length - m.dimmap_length);
  m.used = false;
  t.live.fetch_sub(1, std::memory_order_release);
  return 0;
}

// Maps a file under DIR through the buffer, or with Linux when it cannot (said once per
// mapping). Runs under a Guard.
void* overlay_map(void* addr, size_t len, int prot, int flags, int fd, off_t off, const char* path) {
  OverlayTable& t = overlay_table();
  struct stat st;
  const char* why = fstat(fd, &st) != 0 ? "cannot stat the file" : reason_to_leave(prot, flags, fd, st, off);
  dimmap_instance* inst = nullptr;
  if (!why && (off % static_cast<off_t>(page_size())) == 0 && len > 0 && !(inst = get_dimmap()))
    why = "no DI-MMAP buffer";
  if (!why && t.live.load() >= OverlayTable::kCapacity) why = "too many mappings taken over at once";
  if (why || (off % static_cast<off_t>(page_size())) != 0 || len == 0) {
    void* p = sys_mmap(addr, len, prot, flags, fd, off);
    if (why && p != MAP_FAILED) {
      t.left_to_linux.fetch_add(1, std::memory_order_relaxed);
      report("'%s' left to Linux: %s", path, why);
    }
    return p;
  }
  const size_t length = round_up(len);
  const size_t in_file = round_up(static_cast<size_t>(st.st_size - off));
  const size_t head = in_file < length ? in_file : length;
  const int fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
  void* base = addr;
  int map_flags = (flags & MAP_TYPE) | fixed;
  if (head < length) {
    // Longer than the file: Linux maps the whole range (its tail raises SIGBUS as usual),
    // then the buffer replaces the part inside the file.
    base = sys_mmap(addr, len, prot, flags, fd, off);
    if (base == MAP_FAILED) return base;
    map_flags = (flags & MAP_TYPE) | MAP_FIXED;
  }
  void* p = dimmap_instance_mmap(inst, base, head, prot, map_flags, fd, off);
  if (p == MAP_FAILED) {
    const int e = errno;
    t.left_to_linux.fetch_add(1, std::memory_order_relaxed);
    report("'%s' left to Linux: %s", path, dimmap_last_error());
    if (head < length) return base;  // the Linux mapping of the whole range is still there
    void* q = sys_mmap(addr, len, prot, flags, fd, off);
    if (q == MAP_FAILED) errno = e;
    return q;
  }
  OverlayMapping m;
  m.base = reinterpret_cast<uintptr_t>(p);
  m.length = length;
  m.dimmap_length = head;
  m.prot = prot;
  m.flags = flags & ~(MAP_FIXED | MAP_FIXED_NOREPLACE | MAP_POPULATE);
  m.offset = off;
  std::snprintf(m.path, sizeof m.path, "%s", path);
  if (!insert(m)) {  // another thread filled the table meanwhile: give the range to Linux
    dimmap_munmap(p, head);
    t.left_to_linux.fetch_add(1, std::memory_order_relaxed);
    report("'%s' left to Linux: too many mappings taken over at once", path);
    return sys_mmap(p, len, prot, (flags & ~MAP_FIXED_NOREPLACE) | MAP_FIXED, fd, off);
  }
  t.mapped.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void* mmap_impl(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  ensure_init();
  if (fd < 0 || (flags & MAP_ANONYMOUS) || t_depth > 0 || !config().files[0])
    return sys_mmap(addr, len, prot, flags, fd, off);
  Guard guard;
  char path[PATH_MAX];
  if (!fd_path(fd, path, sizeof path) || !path_under_dirs(path, config().files))
    return sys_mmap(addr, len, prot, flags, fd, off);
  return overlay_map(addr, len, prot, flags, fd, off, path);
}

bool overlaps(const OverlayMapping& m, uintptr_t start, uintptr_t end) {
  return m.base < end && start < m.base + m.length;
}

bool overlay_idle() { return t_depth > 0 || overlay_table().live.load(std::memory_order_acquire) == 0; }

}  // namespace

void OverlayTable::remap_with_linux_locked() {
  for (OverlayMapping& m : slots) {
    if (!m.used || m.linux_only) continue;
    m.linux_only = true;
    const int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, m.path, O_RDONLY | O_CLOEXEC));
    if (fd < 0) continue;  // the range stays empty: touching it faults
    sys_mmap(reinterpret_cast<void*>(m.base), m.dimmap_length, m.prot, (m.flags & MAP_TYPE) | MAP_FIXED, fd, m.offset);
    close(fd);
  }
}

}  // namespace dimmap::preload

using namespace dimmap::preload;  // NOLINT: the C entry points below

EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  return mmap_impl(addr, len, prot, flags, fd, off);
}

EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  return mmap_impl(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void* addr, size_t len) noexcept {
  if (overlay_idle()) return sys_munmap(addr, len);
  Guard guard;
  OverlayTable& t = overlay_table();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = start + round_up(len);
  {
    std::lock_guard<std::mutex> lock(t.mu);
    for (OverlayMapping& m : t.slots) {
      if (m.used && overlaps(m, start, end) && (m.base < start || m.base + m.length > end)) {
        report("munmap(%p, %zu) would unmap part of '%s' (mapped at %#lx, %zu bytes): only whole mappings of "
               "--files are unmapped", addr, len, m.path, static_cast<unsigned long>(m.base), m.length);
        errno = EINVAL;
        return -1;
      }
    }
    for (OverlayMapping& m : t.slots)
      if (m.used && overlaps(m, start, end) && unmap_locked(t, m) != 0) return -1;
  }
  return sys_munmap(addr, len);  // whatever else lies in the range
}

EXPORT int msync(void* addr, size_t len, int flags) {  // not noexcept: glibc declares msync without __THROW (a cancellation point)
  if (overlay_idle()) return sys_msync(addr, len, flags);
  Guard guard;
  OverlayTable& t = overlay_table();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = start + len;
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    for (OverlayMapping& m : t.slots) {
      if (!m.used || m.linux_only || !overlaps(m, start, end)) continue;
      const uintptr_t lo = start > m.base ? start : m.base;
      const uintptr_t head_end = m.base + m.dimmap_length;
      const uintptr_t hi = end < head_end ? end : head_end;
      if (lo < hi && dimmap_msync(reinterpret_cast<void*>(lo), hi - lo, flags) != 0) {
        report("msync of '%s': %s", m.path, dimmap_last_error());
        rc = -1;
      }
    }
  }
  const int e = errno;
  if (sys_msync(addr, len, flags) != 0) return -1;
  if (rc) errno = e;
  return rc;
}

EXPORT int mprotect(void* addr, size_t len, int prot) noexcept {
  if (overlay_idle() || !(prot & (PROT_WRITE | PROT_EXEC))) return sys_mprotect(addr, len, prot);
  Guard guard;
  OverlayTable& t = overlay_table();
  const uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  std::lock_guard<std::mutex> lock(t.mu);
  for (const OverlayMapping& m : t.slots) {
    if (m.used && !m.linux_only && overlaps(m, start, start + len)) {
      report("mprotect(%p, %zu, %#x): '%s' is mapped read-only through the DI-MMAP buffer", addr, len, prot, m.path);
      errno = EACCES;
      return -1;
    }
  }
  return sys_mprotect(addr, len, prot);
}

EXPORT void* mremap(void* old, size_t old_len, size_t new_len, int flags, ...) noexcept {
  void* new_addr = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_addr = va_arg(ap, void*);
    va_end(ap);
  }
  if (overlay_idle()) return sys_mremap(old, old_len, new_len, flags, new_addr);
  Guard guard;
  OverlayTable& t = overlay_table();
  const uintptr_t start = reinterpret_cast<uintptr_t>(old);
  OverlayMapping m;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    OverlayMapping* hit = nullptr;
    for (OverlayMapping& s : t.slots)
      if (s.used && overlaps(s, start, start + (old_len ? old_len : 1))) hit = &s;
    if (!hit || hit->linux_only) return sys_mremap(old, old_len, new_len, flags, new_addr);
    m = *hit;
  }
  if (m.base != start || round_up(old_len) != m.length || !(flags & MREMAP_MAYMOVE) || (flags & ~MREMAP_MAYMOVE)) {
    report("mremap(%p, %zu, %zu, %#x) of '%s': a mapping of --files moves whole and only with MREMAP_MAYMOVE alone",
           old, old_len, new_len, flags, m.path);
    errno = (m.base != start || round_up(old_len) != m.length) ? EINVAL : ENOMEM;
    return MAP_FAILED;
  }
  if (round_up(new_len) == m.length) return old;
  // Read-only, so moving is mapping the file anew and dropping the old range.
  const int fd = open(m.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MAP_FAILED;
  void* p = overlay_map(nullptr, new_len, m.prot, m.flags, fd, m.offset, m.path);
  const int e = errno;
  close(fd);
  if (p == MAP_FAILED) {
    errno = e;
    return MAP_FAILED;
  }
  std::lock_guard<std::mutex> lock(t.mu);
  for (OverlayMapping& s : t.slots)
    if (s.used && s.base == m.base) unmap_locked(t, s);
  return p;
}
