// backing.cpp - creating and removing the mappings behind big allocations.
#include "backing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dimmap::preload {
namespace {

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Reserves the file's blocks now. Filesystems without fallocate get a sparse file.
int reserve(int fd, size_t len) {
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(len));
  if (rc == EOPNOTSUPP || rc == EINVAL) rc = ftruncate(fd, static_cast<off_t>(len)) == 0 ? 0 : errno;
  return rc;
}

constexpr const char kNamePrefix[] = ".dimmap-run-";

// A new file DIR/.dimmap-run-PID-XXXXXX; its base name goes to name.
int make_named_file(const char* dir, char* name, size_t name_len) {
  char path[4200];
  if (std::snprintf(path, sizeof path, "%s/%s%d-XXXXXX", dir, kNamePrefix, static_cast<int>(getpid())) >=
      static_cast<int>(sizeof path))
    return -ENAMETOOLONG;
  const int fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0) return -errno;
  std::snprintf(name, name_len, "%s", std::strrchr(path, '/') + 1);
  return fd;
}

void unlink_named(const char* dir, const char* name) {
  char path[4200];
  std::snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
}

}  // namespace

int make_unnamed_file(const char* dir) {
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -errno;
  char name[4200];
  if (std::snprintf(name, sizeof name, "%s/dimmap-run-XXXXXX", dir) >= static_cast<int>(sizeof name))
    return -ENAMETOOLONG;
  fd = mkostemp(name, O_CLOEXEC);
  if (fd < 0) return -errno;
  unlink(name);
  return fd;
}

int map_block(BlockKind kind, const char* dir, dimmap_instance* inst, size_t size, size_t align, Block* out,
              char* err, size_t err_len) {
  const size_t page = page_size();
  if (align < page) align = page;
  const size_t rounded = (size + page - 1) / page * page;
  const size_t len = rounded + (align - page);  // room to align the user address
  if (rounded < size || len < rounded) {
    std::snprintf(err, err_len, "%zu bytes is more than the address space", size);
    return ENOMEM;
  }
  void* base = MAP_FAILED;
  if (kind == BlockKind::anonymous) {
    base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
      const int e = errno;
      std::snprintf(err, err_len, "cannot map %zu bytes of anonymous memory: %s", len, std::strerror(e));
      return e;
    }
  } else {
    char name[sizeof out->name] = "";
    const int fd = kind == BlockKind::dimmap ? make_named_file(dir, name, sizeof name) : make_unnamed_file(dir);
    if (fd < 0) {
      std::snprintf(err, err_len, "cannot create a file in '%s': %s", dir, std::strerror(-fd));
      return -fd;
    }
    if (int rc = reserve(fd, len); rc != 0) {
      close(fd);
      if (name[0]) unlink_named(dir, name);
      std::snprintf(err, err_len, "cannot reserve %zu bytes in '%s': %s", len, dir, std::strerror(rc));
      return rc;
    }
    int e = 0;
    if (kind == BlockKind::dimmap) {
      base = dimmap_instance_mmap(inst, nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      e = errno;
      if (base == MAP_FAILED)
        std::snprintf(err, err_len, "cannot map %zu bytes in '%s' with dimmap: %s", len, dir, dimmap_last_error());
    } else {
      base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
      e = errno;
      if (base == MAP_FAILED)
        std::snprintf(err, err_len, "cannot map %zu bytes of a file in '%s': %s", len, dir, std::strerror(e));
    }
    close(fd);  // the mapping keeps the file alive; it disappears with the mapping
    if (base == MAP_FAILED) {
      if (name[0]) unlink_named(dir, name);
      return e ? e : ENOMEM;
    }
    std::memcpy(out->name, name, sizeof name);
  }
  if (kind == BlockKind::anonymous) out->name[0] = '\0';
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  out->base = b;
  out->map_len = len;
  out->user = (b + align - 1) & ~static_cast<uintptr_t>(align - 1);
  out->usable = b + len - out->user;
  out->kind = kind;
  return 0;
}

void unlink_block_file(const Block& b, const char* dir) {
  if (b.kind == BlockKind::dimmap && b.name[0]) unlink_named(dir, b.name);
}

int unmap_block(const Block& b, const char* dir, char* err, size_t err_len) {
  void* base = reinterpret_cast<void*>(b.base);
  switch (b.kind) {
    case BlockKind::dimmap:
      unlink_block_file(b, dir);  // unlinked: the engine skips writing back what nobody will read
      if (dimmap_munmap(base, b.map_len) != 0) {
        const int e = errno;
        std::snprintf(err, err_len, "cannot unmap a dimmap block at %p: %s", base, dimmap_last_error());
        return e;
      }
      return 0;
    case BlockKind::anonymous:
    case BlockKind::file:
    case BlockKind::inherited_dimmap:
      if (munmap(base, b.map_len) != 0) {
        const int e = errno;
        std::snprintf(err, err_len, "cannot unmap the block at %p: %s", base, std::strerror(e));
        return e;
      }
      return 0;
  }
  return 0;
}

}  // namespace dimmap::preload

namespace dimmap::preload {

void make_inherited_placeholder(Block& b) {
  if (b.kind != BlockKind::dimmap) return;
  b.kind = BlockKind::inherited_dimmap;
  b.name[0] = '\0';  // the parent's file: not ours to unlink
  mmap(reinterpret_cast<void*>(b.base), b.map_len, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
}

int sweep_orphaned_files(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return 0;
  int removed = 0;
  const size_t prefix = sizeof kNamePrefix - 1;
  while (struct dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, kNamePrefix, prefix) != 0) continue;
    const long pid = std::strtol(e->d_name + prefix, nullptr, 10);
    if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) removed++;
  }
  closedir(d);
  return removed;
}

}  // namespace dimmap::preload
