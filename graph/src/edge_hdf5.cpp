// edge_hdf5.cpp - edge lists as an HDF5 int64 dataset "/edges" of shape [M, 2].
#include <graph/edge_io.hpp>

#ifdef GRAPH_HAVE_HDF5
#include <dimmap/placement.hpp>
#include <dimmap/support/atomic_file.hpp>
#include <hdf5.h>
#endif

namespace graph {

#ifndef GRAPH_HAVE_HDF5
bool hdf5_available() { return false; }
namespace detail {
std::unique_ptr<EdgeReader> open_hdf5_edge_reader(const std::string& path) {
  throw GraphError("'" + path + "': this build has no HDF5 support (install libhdf5-dev and rebuild)");
}
std::unique_ptr<EdgeWriter> create_hdf5_edge_writer(const std::string& path) {
  throw GraphError("'" + path + "': this build has no HDF5 support (install libhdf5-dev and rebuild)");
}
}  // namespace detail
#else
bool hdf5_available() { return true; }

namespace {

// Closes an HDF5 handle with the right function when it goes out of scope.
struct Handle {
  hid_t id = -1;
  herr_t (*closer)(hid_t) = nullptr;
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), closer(c) {}
  ~Handle() {
    if (id >= 0) closer(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

void quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

class Hdf5Reader : public EdgeReader {
 public:
  explicit Hdf5Reader(const std::string& path) : path_(path) {
    quiet_hdf5();
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_ < 0) throw GraphError("cannot open '" + path + "' as an HDF5 file");
    dset_ = H5Dopen2(file_, "/edges", H5P_DEFAULT);
    if (dset_ < 0) {
      H5Fclose(file_);
      throw GraphError("'" + path + "' has no dataset '/edges'");
    }
    Handle space(H5Dget_space(dset_), H5Sclose);
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space.id) != 2 || H5Sget_simple_extent_dims(space.id, dims, nullptr) < 0 ||
        dims[1] != 2) {
      close();
      throw GraphError("'" + path + "': dataset '/edges' must have shape [M, 2]");
    }
    total_ = dims[0];
  }
  ~Hdf5Reader() override { close(); }

  size_t read(Edge* out, size_t max) override {
    const hsize_t n = std::min<hsize_t>(max, total_ - next_);
    if (n == 0) return 0;
    Handle space(H5Dget_space(dset_), H5Sclose);
    hsize_t start[2] = {next_, 0}, count[2] = {n, 2};
    H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr);
    Handle mem(H5Screate_simple(2, count, nullptr), H5Sclose);
    if (H5Dread(dset_, H5T_NATIVE_INT64, mem.id, space.id, H5P_DEFAULT, out) < 0)
      throw GraphError("cannot read edges " + std::to_string(next_) + ".. from '" + path_ + "'");
    for (hsize_t i = 0; i < n; ++i)
      if (out[i].u < 0 || out[i].v < 0)
        throw GraphError("'" + path_ + "': edge " + std::to_string(next_ + i) + " has a negative vertex id");
    next_ += n;
    return static_cast<size_t>(n);
  }
  uint64_t size_hint() const override { return total_; }

 private:
  std::string path_;
  hid_t file_ = -1, dset_ = -1;
  hsize_t total_ = 0, next_ = 0;
  void close() {
    if (dset_ >= 0) H5Dclose(dset_);
    if (file_ >= 0) H5Fclose(file_);
    dset_ = file_ = -1;
  }
};

class Hdf5Writer : public EdgeWriter {
 public:
  explicit Hdf5Writer(const std::string& path) : output_(path), tmp_(output_.temp_path()) {
    quiet_hdf5();
    file_ = H5Fcreate(tmp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0) throw GraphError("cannot create HDF5 file '" + tmp_ + "'");
    hsize_t dims[2] = {0, 2}, maxdims[2] = {H5S_UNLIMITED, 2}, chunk[2] = {1 << 16, 2};
    Handle space(H5Screate_simple(2, dims, maxdims), H5Sclose);
    Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(props.id, 2, chunk);
    dset_ = H5Dcreate2(file_, "/edges", H5T_STD_I64LE, space.id, H5P_DEFAULT, props.id, H5P_DEFAULT);
    if (dset_ < 0) {
      abort_file();
      throw GraphError("cannot create dataset '/edges' in '" + tmp_ + "'");
    }
  }
  ~Hdf5Writer() override {
    if (file_ >= 0) abort_file();
  }

  void write(const Edge* edges, size_t count) override {
    if (count == 0) return;
    hsize_t size[2] = {rows_ + count, 2};
    if (H5Dset_extent(dset_, size) < 0) throw GraphError("cannot extend '/edges' in '" + tmp_ + "'");
    Handle space(H5Dget_space(dset_), H5Sclose);
    hsize_t start[2] = {rows_, 0}, n[2] = {count, 2};
    H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, n, nullptr);
    Handle mem(H5Screate_simple(2, n, nullptr), H5Sclose);
    if (H5Dwrite(dset_, H5T_NATIVE_INT64, mem.id, space.id, H5P_DEFAULT, edges) < 0)
      throw GraphError("cannot write edges to '" + tmp_ + "' (disk full?)");
    rows_ += count;
  }

  void commit() override {
    H5Dclose(dset_);
    dset_ = -1;
    const herr_t rc = H5Fclose(file_);
    file_ = -1;
    if (rc < 0) {
      output_.abort();
      throw GraphError("cannot finish HDF5 file '" + output_.final_path() + "'");
    }
    try {
      output_.commit();
    } catch (const dimmap::Error& e) {
      throw GraphError(std::string("cannot finish HDF5 file: ") + e.what());
    }
  }

 private:
  dimmap::support::PendingRename output_;  // HDF5 writes the temporary file by name
  const std::string tmp_;
  hid_t file_ = -1, dset_ = -1;
  hsize_t rows_ = 0;
  void abort_file() {
    if (dset_ >= 0) H5Dclose(dset_);
    if (file_ >= 0) H5Fclose(file_);
    dset_ = file_ = -1;
    output_.abort();
  }
};

}  // namespace

namespace detail {
std::unique_ptr<EdgeReader> open_hdf5_edge_reader(const std::string& path) {
  return std::make_unique<Hdf5Reader>(path);
}
std::unique_ptr<EdgeWriter> create_hdf5_edge_writer(const std::string& path) {
  return std::make_unique<Hdf5Writer>(path);
}
}  // namespace detail
#endif

}  // namespace graph
