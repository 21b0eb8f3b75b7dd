// pattern.cpp - filling, creating and verifying LRIOT pattern files.
#include <dimmap/file_size.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/atomic_file.hpp>
#include <fcntl.h>
#include <lriot/pattern.hpp>
#include <lriot/sequence.hpp>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace lriot {
namespace {

constexpr size_t kChunk = 4u << 20;  // bytes per read or write when creating and verifying

[[noreturn]] void throw_errno(const std::string& what, int err) { throw dimmap::Error(what + ": " + std::strerror(err)); }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint64_t[], FreeDeleter>;

AlignedBuffer aligned_buffer(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kPageSize, bytes) != 0) throw dimmap::Error("out of memory for an I/O buffer");
  return AlignedBuffer(static_cast<uint64_t*>(p));
}

// Opens with O_DIRECT, or without it where the file system refuses direct I/O.
int open_maybe_direct(const std::string& path, int flags, mode_t mode, bool* direct) {
  int fd = open(path.c_str(), flags | O_DIRECT | O_CLOEXEC, mode);
  *direct = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = open(path.c_str(), flags | O_CLOEXEC, mode);
  return fd;
}

}  // namespace

void fill_page(uint64_t page, uint64_t* words) {
  words[0] = kIdentity ^ page;
  words[kCounterWord] = 0;
  for (size_t i = 2; i < kWordsPerPage; ++i) words[i] = mix64(page * kWordsPerPage + i);
}

bool check_page(uint64_t page, const uint64_t* words) {
  if (!check_identity(page, words)) return false;
  for (size_t i = 2; i < kWordsPerPage; ++i)
    if (words[i] != mix64(page * kWordsPerPage + i)) return false;
  return true;
}

void create_pattern_file(const std::string& path, uint64_t bytes, const Progress& progress) {
  if (bytes == 0 || bytes % kPageSize)
    throw dimmap::Error("cannot create '" + path + "': its size (" + std::to_string(bytes) +
                        " bytes) must be a positive multiple of 4 KiB");
  dimmap::support::PendingRename output(path);  // removed unless renamed into place
  const std::string& tmp = output.temp_path();
  bool direct = false;
  int fd = open_maybe_direct(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644, &direct);
  if (fd < 0) throw_errno("cannot create '" + tmp + "'", errno);
  try {
    AlignedBuffer buf = aligned_buffer(kChunk);
    for (uint64_t done = 0; done < bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, bytes - done));
      for (size_t off = 0; off < n; off += kPageSize)
        fill_page((done + off) / kPageSize, buf.get() + off / sizeof(uint64_t));
      for (size_t written = 0; written < n;) {
        ssize_t w = pwrite(fd, reinterpret_cast<char*>(buf.get()) + written, n - written,
                           static_cast<off_t>(done + written));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw_errno("cannot write '" + tmp + "'", w < 0 ? errno : ENOSPC);
        written += static_cast<size_t>(w);
      }
      done += n;
      if (progress) progress(done, bytes);
    }
    if (fsync(fd) != 0) throw_errno("cannot sync '" + tmp + "'", errno);
    if (!direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // leave the file cold
    if (close(fd) != 0) {
      fd = -1;
      throw_errno("cannot close '" + tmp + "'", errno);
    }
    fd = -1;
    output.commit();  // synced above through the descriptor
  } catch (...) {
    if (fd >= 0) close(fd);
    throw;
  }
}

FileCheck verify_pattern_file(const std::string& path) {
  bool direct = false;
  int fd = open_maybe_direct(path, O_RDONLY, 0, &direct);
  if (fd < 0) throw_errno("cannot open '" + path + "'", errno);
  FileCheck check;
  try {
    check.pages = dimmap::file_or_device_size(fd, path) / kPageSize;
  } catch (...) {
    close(fd);
    throw;
  }
  AlignedBuffer buf = aligned_buffer(kChunk);
  const uint64_t bytes = check.pages * kPageSize;
  for (uint64_t done = 0; done < bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, bytes - done));
    ssize_t r = pread(fd, buf.get(), n, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r != static_cast<ssize_t>(n)) {
      int err = r < 0 ? errno : EIO;
      close(fd);
      throw_errno("cannot read '" + path + "' at byte " + std::to_string(done), err);
    }
    for (size_t off = 0; off < n; off += kPageSize) {
      const uint64_t page = (done + off) / kPageSize;
      const uint64_t* words = buf.get() + off / sizeof(uint64_t);
      if (!check_page(page, words) && check.bad_pages++ == 0) check.first_bad_page = page;
      check.counter_sum += words[kCounterWord];
    }
    done += n;
  }
  if (!direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return check;
}

}  // namespace lriot
