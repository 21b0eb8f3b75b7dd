// mapped_index.hpp - a bwa index loaded zero-copy: .bwt, .sa and .pac mapped, not read.
//
// bwa_idx_load() callocs a buffer per file and freads it (the whole index in RAM before the
// first read is aligned). MappedIndex instead maps each file through its placement (memory:
// a RAM copy; mmap: the file itself in the page cache; dimmap: the file through a DI-MMAP
// buffer) and points libbwa's bwt_t and pac at the mapped bytes, so pages are read when the
// aligner first touches them and can be evicted under memory pressure.
#pragma once

#include <bwa/bwa.h>
#include <bwammap/index_check.hpp>
#include <bwammap/index_placement.hpp>
#include <dimmap/placement.hpp>

#include <optional>
#include <string>

namespace bwammap {

class MappedIndex {
 public:
  // Checks the index files (check_index), maps them, reads .ann/.amb with libbwa.
  // Throws dimmap::Error.
  MappedIndex(const std::string& prefix, IndexPlacement& plan);
  ~MappedIndex();
  MappedIndex(const MappedIndex&) = delete;
  MappedIndex& operator=(const MappedIndex&) = delete;

  // What libbwa's mem functions take. Valid while this object lives.
  const bwaidx_t* idx() const { return &idx_; }
  bntseq_t* bns() const { return idx_.bns; }
  const IndexLayout& layout() const { return layout_; }
  const dimmap::Region& region(Structure s) const;

 private:
  IndexLayout layout_;
  // std::optional: Region's inline default constructor does not compile outside libdimmap.
  std::optional<dimmap::Region> bwt_file_, sa_file_, pac_file_;
  bwt_t bwt_{};
  bwaidx_t idx_{};
};

}  // namespace bwammap
