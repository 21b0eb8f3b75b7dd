// edge_io.hpp - edge lists on disk: Graph500 binary (int64 pairs), text "u v" lines, HDF5.
#pragma once

#include <graph/types.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace graph {

enum class EdgeFormat { bin, text, hdf5 };

EdgeFormat parse_edge_format(const std::string& text);  // bin|binary, text|txt, hdf5|h5
// From the extension: .h5/.hdf5 -> hdf5, .txt/.el/.tsv/.edges -> text, anything else -> bin.
EdgeFormat guess_edge_format(const std::string& path);
bool hdf5_available();  // built with HDF5 support

// Reads edges in order. Throws GraphError naming the file (and line) on malformed input:
// odd-length binary files, non-numeric or negative text, missing columns.
class EdgeReader {
 public:
  virtual ~EdgeReader() = default;
  // Fills up to max edges; returns how many (0 at the end).
  virtual size_t read(Edge* out, size_t max) = 0;
  // Number of edges if known up front (binary, HDF5), else 0.
  virtual uint64_t size_hint() const { return 0; }
};

std::unique_ptr<EdgeReader> open_edge_reader(const std::string& path, EdgeFormat format);

// Writes edges; the file appears under its final name only after commit().
class EdgeWriter {
 public:
  virtual ~EdgeWriter() = default;
  virtual void write(const Edge* edges, size_t count) = 0;
  virtual void commit() = 0;
};

// HDF5 files hold one int64 dataset "/edges" of shape [M, 2].
std::unique_ptr<EdgeWriter> create_edge_writer(const std::string& path, EdgeFormat format);

namespace detail {
std::unique_ptr<EdgeReader> open_hdf5_edge_reader(const std::string& path);
std::unique_ptr<EdgeWriter> create_hdf5_edge_writer(const std::string& path);
}  // namespace detail

}  // namespace graph
