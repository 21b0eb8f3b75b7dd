// atomic_file.hpp - outputs that never exist half-written under their final name.
//
// An output is written under a temporary name in the same directory as its final name (so the
// rename cannot cross file systems) and renamed into place by commit(). A destructor that runs
// before commit() removes the temporary file, so an error or an exception leaves neither a
// partial output nor a stray temporary. Errors throw dimmap::Error naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dimmap::support {

// "dir/name" -> "dir/name.<tag>.<pid>": beside the final file, recognizably temporary.
std::string temporary_path(const std::string& final_path, std::string_view tag = "tmp");

// Whether commit() makes the temporary file durable before renaming it.
enum class Durability { sync, no_sync };

// A temporary path that something else writes (a library given a file name, an ofstream, a
// mapping), renamed to the final path by commit() and removed otherwise.
class PendingRename {
 public:
  explicit PendingRename(std::string final_path, std::string temp_path = "");
  ~PendingRename();  // removes the temporary file unless committed or released
  PendingRename(PendingRename&& other) noexcept;
  PendingRename& operator=(PendingRename&& other) noexcept;
  PendingRename(const PendingRename&) = delete;
  PendingRename& operator=(const PendingRename&) = delete;

  const std::string& temp_path() const { return temp_; }
  const std::string& final_path() const { return final_; }
  bool pending() const { return pending_; }

  // Optionally fsyncs the temporary file, then renames it to the final path. On failure the
  // temporary file is removed and dimmap::Error names both paths.
  void commit(Durability durability = Durability::no_sync);
  // Removes the temporary file now.
  void abort() noexcept;

 private:
  std::string final_, temp_;
  bool pending_ = true;
};

// fsyncs the file at `path` (opened read-only); throws dimmap::Error naming it.
void sync_file(const std::string& path);

// A buffered output file: write() appends, commit() flushes, fsyncs, closes and renames.
class AtomicFile {
 public:
  explicit AtomicFile(std::string final_path, size_t buffer_bytes = 4 << 20, std::string_view tag = "tmp");
  ~AtomicFile();  // closes and removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  template <typename T>
  void write_array(const T* items, size_t count) { write(items, count * sizeof(T)); }
  void write_text(std::string_view text) { write(text.data(), text.size()); }
  uint64_t bytes_written() const { return written_; }
  const std::string& path() const { return rename_.final_path(); }
  const std::string& temp_path() const { return rename_.temp_path(); }
  // The open descriptor of the temporary file (for pwrite, ftruncate, mmap); flush() first
  // if write() was used too.
  int fd() const { return fd_; }
  void flush();
  // Flushes, fsyncs (unless no_sync), closes and renames to the final path.
  void commit(Durability durability = Durability::sync);

 private:
  PendingRename rename_;
  int fd_ = -1;
  std::vector<char> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;
};

// Writes `text` to `path` through a temporary file (fsynced with Durability::sync).
void write_file_atomically(const std::string& path, std::string_view text,
                           Durability durability = Durability::sync);

}  // namespace dimmap::support
