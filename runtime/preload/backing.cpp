// backing.cpp - creating and removing the mappings behind big allocations.
#include "backing.hpp"

#include <fcntl.h>
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
    const int fd = make_unnamed_file(dir);
    if (fd < 0) {
      std::snprintf(err, err_len, "cannot create a file in '%s': %s", dir, std::strerror(-fd));
      return -fd;
    }
    if (int rc = reserve(fd, len); rc != 0) {
      close(fd);
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
    if (base == MAP_FAILED) return e ? e : ENOMEM;
  }
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  out->base = b;
  out->map_len = len;
  out->user = (b + align - 1) & ~static_cast<uintptr_t>(align - 1);
  out->usable = b + len - out->user;
  out->kind = kind;
  return 0;
}

int unmap_block(const Block& b, char* err, size_t err_len) {
  void* base = reinterpret_cast<void*>(b.base);
  switch (b.kind) {
    case BlockKind::dimmap:
      dimmap_discard(base, b.map_len);  // dead data: nothing to write back
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

void make_inherited_placeholder(Block& b) {
  if (b.kind != BlockKind::dimmap) return;
  b.kind = BlockKind::inherited_dimmap;
  mmap(reinterpret_cast<void*>(b.base), b.map_len, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
}

}  // namespace dimmap::preload
