// atomic_file.cpp - temporary names beside the final file, rename on commit, removal otherwise.
#include <dimmap/placement.hpp>
#include <dimmap/support/atomic_file.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace dimmap::support {
namespace {

[[noreturn]] void fail(const std::string& what, int err) { throw Error(what + ": " + std::strerror(err)); }

}  // namespace

std::string temporary_path(const std::string& final_path, std::string_view tag) {
  return final_path + "." + std::string(tag) + "." + std::to_string(::getpid());
}

PendingRename::PendingRename(std::string final_path, std::string temp_path)
    : final_(std::move(final_path)), temp_(temp_path.empty() ? temporary_path(final_) : std::move(temp_path)) {}

PendingRename::~PendingRename() { abort(); }

PendingRename::PendingRename(PendingRename&& other) noexcept
    : final_(std::move(other.final_)), temp_(std::move(other.temp_)), pending_(other.pending_) {
  other.pending_ = false;
}

PendingRename& PendingRename::operator=(PendingRename&& other) noexcept {
  if (this != &other) {
    abort();
    final_ = std::move(other.final_);
    temp_ = std::move(other.temp_);
    pending_ = other.pending_;
    other.pending_ = false;
  }
  return *this;
}

void PendingRename::abort() noexcept {
  if (pending_) ::unlink(temp_.c_str());
  pending_ = false;
}

void sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open '" + path + "' to sync it", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail("cannot sync '" + path + "'", err);
}

void PendingRename::commit(Durability durability) {
  if (!pending_) throw Error("internal error: '" + final_ + "' committed twice or after abort");
  try {
    if (durability == Durability::sync) sync_file(temp_);
  } catch (...) {
    abort();
    throw;
  }
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    const int err = errno;
    abort();
    fail("cannot rename '" + temp_ + "' to '" + final_ + "'", err);
  }
  pending_ = false;
}

AtomicFile::AtomicFile(std::string final_path, size_t buffer_bytes, std::string_view tag)
    : rename_(final_path, temporary_path(final_path, tag)), buffer_(std::max<size_t>(buffer_bytes, 1)) {
  // Read-write, so callers may map it shared; the mode is 0666 & ~umask, as for any new file.
  fd_ = ::open(rename_.temp_path().c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    rename_.abort();  // nothing was created
    fail("cannot create '" + rename_.temp_path() + "' (the temporary file of '" + rename_.final_path() + "')", err);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AtomicFile::flush() {
  size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write '" + temp_path() + "'", errno);
    done += static_cast<size_t>(n);
  }
  used_ = 0;
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  written_ += bytes;
  while (bytes > 0) {
    if (used_ == buffer_.size()) flush();
    const size_t n = std::min(bytes, buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, p, n);
    used_ += n, p += n, bytes -= n;
  }
}

void AtomicFile::commit(Durability durability) {
  if (fd_ < 0) throw Error("internal error: '" + path() + "' committed twice");
  flush();
  if (durability == Durability::sync && ::fsync(fd_) != 0) fail("cannot sync '" + temp_path() + "'", errno);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    const int err = errno;
    rename_.abort();
    fail("cannot close '" + temp_path() + "'", err);
  }
  rename_.commit(Durability::no_sync);  // already synced through the descriptor
}

void write_file_atomically(const std::string& path, std::string_view text, Durability durability) {
  AtomicFile out(path, std::max<size_t>(text.size(), 1));
  out.write_text(text);
  out.commit(durability);
}

}  // namespace dimmap::support
