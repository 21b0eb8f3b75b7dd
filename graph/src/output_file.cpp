// output_file.cpp - temporary-name-then-rename output files.
#include <graph/output_file.hpp>
#include <graph/types.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace graph {

OutputFile::OutputFile(std::string path, size_t buffer_bytes)
    : path_(std::move(path)), buffer_(buffer_bytes) {
  tmp_path_ = path_ + ".tmp-" + std::to_string(::getpid());
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw GraphError("cannot create '" + tmp_path_ + "': " + std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void OutputFile::flush() {
  size_t done = 0;
  while (done < used_) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw GraphError("cannot write '" + tmp_path_ + "': " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  used_ = 0;
}

void OutputFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  written_ += bytes;
  while (bytes > 0) {
    if (used_ == buffer_.size()) flush();
    const size_t n = std::min(bytes, buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, p, n);
    used_ += n, p += n, bytes -= n;
  }
}

void OutputFile::commit() {
  flush();
  if (::fsync(fd_) != 0) throw GraphError("cannot sync '" + tmp_path_ + "': " + std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(tmp_path_.c_str());
    throw GraphError("cannot close '" + tmp_path_ + "': " + std::strerror(errno));
  }
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_path_.c_str());
    throw GraphError("cannot rename '" + tmp_path_ + "' to '" + path_ + "': " + std::strerror(err));
  }
}

void write_decimal_lines(const std::string& path, const int64_t* values, size_t count) {
  OutputFile out(path);
  char line[32];
  for (size_t i = 0; i < count; ++i) {
    auto [end, ec] = std::to_chars(line, line + sizeof(line) - 1, values[i]);
    *end++ = '\n';
    out.write(line, static_cast<size_t>(end - line));
  }
  out.commit();
}

}  // namespace graph
