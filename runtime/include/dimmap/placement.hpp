// placement.hpp - where an application's big data structures live.
//
// A Placement says who holds the bytes of a memory-mapped data structure:
//   memory  anonymous memory, or a file on tmpfs (--memory-dir, default /dev/shm)
//   mmap    a file on storage, cached by the Linux page cache
//   dimmap  a file on storage, cached by a DI-MMAP buffer (dimmap::Buffer)
// A Region is one mapped data structure on a placement. The same application code runs
// on every placement, so placements can be compared on equal memory budgets.
//
// Errors throw dimmap::Error whose message names the file and the problem.
#pragma once

#include <dimmap/dimmap.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dimmap {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Backend { memory, mmap, dimmap };

// "memory" (also "in-memory", "tmpfs"), "mmap", "dimmap"; throws Error otherwise.
Backend parse_backend(std::string_view text);
const char* to_string(Backend backend);

// Parses a size such as "256M" or "4G" (see dimmap_parse_size); throws Error naming `what`.
uint64_t parse_size(std::string_view text, std::string_view what = "size");
// 1536 -> "1.5K", 268435456 -> "256M".
std::string format_size(uint64_t bytes);

// The environment's configuration (DIMMAP_*) for a buffer of `bytes` and, if >= 0, that hot
// fraction; the variables these two replace are not read (a flag wins over its variable).
// Throws Error naming a bad variable or value.
dimmap_config config_for_buffer(uint64_t bytes, double hot_fraction = -1.0);

// One DI-MMAP page buffer: a fixed memory budget shared by the regions placed on it.
class Buffer {
 public:
  explicit Buffer(const dimmap_config& config);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // The environment's defaults (DIMMAP_*) with the size and, if >= 0, hot fraction given.
  static std::shared_ptr<Buffer> create(uint64_t bytes, double hot_fraction = -1.0);

  dimmap_instance* instance() const { return instance_; }
  const dimmap_config& config() const { return config_; }
  struct dimmap_stats stats() const;

 private:
  dimmap_config config_;
  dimmap_instance* instance_ = nullptr;
};

struct Placement {
  Backend backend = Backend::memory;
  // memory: tmpfs directory for copies and scratch files ("" = anonymous memory).
  // mmap, dimmap: storage directory for scratch files.
  std::string dir;
  std::shared_ptr<Buffer> buffer;  // dimmap only
  // mmap only: a helper thread calls MADV_DONTNEED on the region every N seconds, as the
  // papers did to stop Linux from hoarding mapped pages (0 = off).
  unsigned dontneed_interval_s = 0;
  // mmap only: MADV_RANDOM (no readahead) on the region.
  bool advise_random = false;

  static Placement memory(std::string tmpfs_dir = "/dev/shm");
  static Placement anonymous();
  static Placement mmap(std::string storage_dir);
  static Placement dimmap(std::string storage_dir, std::shared_ptr<Buffer> buffer);

  std::string describe() const;  // e.g. "dimmap(/data, buffer 256M)"
};

enum class Access { read_only, read_write };

// Read-ahead hint for byte ranges of any mapped memory: dimmap mappings start reading the
// missing pages (dimmap_prefetchv), other mappings get MADV_WILLNEED. Returns at once.
void prefetch(const struct iovec* ranges, size_t count);

class Region {
 public:
  Region();  // empty; defined out of line because DontneedHelper is incomplete here
  Region(Region&& other) noexcept;
  Region& operator=(Region&& other) noexcept;
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();  // close(); errors are logged, not thrown

  // An existing file. On memory placements the file is copied into RAM (read_only only:
  // changes to a copy could not reach the file). The file must not be empty.
  static Region open(const Placement& placement, const std::string& path, Access access);
  // A new zero-filled region of `bytes`: a file created in the placement's directory and
  // unlinked at once, so nothing is left behind (anonymous memory on memory("")).
  static Region scratch(const Placement& placement, size_t bytes, std::string_view name_hint);
  // A new file of `bytes` at `path` that is kept, mapped read-write. On memory placements
  // the file itself is mapped (the path decides where the bytes live).
  static Region create(const Placement& placement, const std::string& path, size_t bytes);

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  size_t size() const { return size_; }
  bool empty() const { return data_ == nullptr; }
  Backend backend() const { return backend_; }
  const std::string& path() const { return path_; }

  // Dirty data reaches the file and stable storage (no-op for memory and scratch).
  void sync();
  // sync() then unmap; throws Error if writeback fails (the region stays mapped then).
  void close();

 private:
  struct DontneedHelper;
  void* data_ = nullptr;
  size_t size_ = 0;
  Backend backend_ = Backend::memory;
  bool writable_file_ = false;  // sync/close must write back
  std::string path_;
  std::shared_ptr<Buffer> buffer_;  // keeps the buffer alive while mapped
  std::unique_ptr<DontneedHelper> helper_;

  void release() noexcept;
};

}  // namespace dimmap
