// Fuzz target: the bwa index verifier that guards bwa-mmap's zero-copy index loader
// (check_index: .amb .ann .bwt .pac .sa headers and sizes; the input's five parts, in that
// order). Properties: a damaged index ends in dimmap::Error naming the file; an accepted one
// is self-consistent: file sizes are what the layout says, the .bwt holds the words its
// length needs, the suffix-array sampling is a power of two.
#include <bwammap/index_check.hpp>
#include <dimmap/placement.hpp>

#include <string>

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const auto parts = dimmap::fuzz::split_parts(data, size, 5);
  for (int i = 0; i < 5; ++i) dimmap::fuzz::write_scratch_file(std::string("ref") + bwammap::kIndexSuffixes[i], parts[i]);
  const std::string prefix = dimmap::fuzz::scratch_dir() + "/ref";
  bwammap::IndexLayout x;
  try {
    x = bwammap::check_index(prefix);
  } catch (const dimmap::Error& e) {
    if (std::string(e.what()).find(prefix) == std::string::npos) property_failed(std::string("error names no file: ") + e.what());
    return 0;
  }
  for (int i = 0; i < 5; ++i)
    if (x.bytes[i] != parts[i].size()) property_failed("recorded size of a file is wrong");
  if (x.l_pac <= 0 || x.seq_len != 2 * static_cast<uint64_t>(x.l_pac)) property_failed("l_pac and seq_len disagree");
  if (x.bytes[3] != bwammap::expected_pac_bytes(x.l_pac)) property_failed("accepted a .pac of the wrong size");
  if (x.bwt_words != bwammap::expected_bwt_words(x.seq_len)) property_failed("accepted a .bwt of the wrong size");
  if (x.sa_intv <= 0 || (x.sa_intv & (x.sa_intv - 1)) != 0) property_failed("accepted a bad SA interval");
  if (x.bytes[4] != bwammap::kSaHeaderBytes + 8 * (x.n_sa - 1)) property_failed("accepted a .sa of the wrong size");
  if (x.primary > x.seq_len) property_failed("accepted a primary index out of range");
  return 0;
}
