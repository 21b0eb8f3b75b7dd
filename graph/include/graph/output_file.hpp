// output_file.hpp - graph outputs, written under a temporary name and renamed into place by
// commit(), so an interrupted or failed run never leaves output that looks valid.
#pragma once

#include <dimmap/support/atomic_file.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace graph {

// Buffered writes, fsync and rename on commit(), removal otherwise (errors: dimmap::Error).
using OutputFile = dimmap::support::AtomicFile;

// Writes one decimal per line (line i = values[i]); committed atomically.
void write_decimal_lines(const std::string& path, const int64_t* values, size_t count);

}  // namespace graph
