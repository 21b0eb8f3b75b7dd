// output_file.hpp - a buffered file written under a temporary name and renamed into place
// by commit(), so an interrupted or failed run never leaves output that looks valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graph {

class OutputFile {
 public:
  explicit OutputFile(std::string path, size_t buffer_bytes = 4 << 20);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t bytes);
  template <typename T>
  void write_array(const T* items, size_t count) { write(items, count * sizeof(T)); }
  void write_text(const std::string& text) { write(text.data(), text.size()); }
  uint64_t bytes_written() const { return written_; }
  // Flushes, fsyncs and renames the temporary file to the final path.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_path_;
  int fd_ = -1;
  std::vector<char> buffer_;
  size_t used_ = 0;
  uint64_t written_ = 0;
  void flush();
};

// Writes one decimal per line (line i = values[i]); committed atomically.
void write_decimal_lines(const std::string& path, const int64_t* values, size_t count);

}  // namespace graph
