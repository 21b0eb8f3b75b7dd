// fuzz_input.hpp - turning a fuzzer's byte string into the files and strings parsers read.
//
// Most parsers here read files, so a target writes its input to files in a scratch directory
// on tmpfs (one per process, removed at exit) and hands the parser the paths. Inputs that
// make several files (a taxonomy's nodes.dmp and names.dmp, a CSR directory, a bwa index)
// are split at kPartSeparator; missing parts are empty files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dimmap::fuzz {

inline constexpr std::string_view kPartSeparator = "\n--next-file--\n";

// Splits data at kPartSeparator into exactly `parts` pieces (the last keeps any remainder).
std::vector<std::string_view> split_parts(const uint8_t* data, size_t size, size_t parts);

// Splits data into lines ('\n'); at most max_lines (the last keeps the remainder).
std::vector<std::string> split_lines(const uint8_t* data, size_t size, size_t max_lines);

// Sets the environment variables names[0..count) from the input's lines, one per variable
// (up to a NUL); a line "-" or a missing line leaves the variable unset. Returns the lines.
std::vector<std::string> set_environment(const uint8_t* data, size_t size, const char* const* names, size_t count);

// This process's scratch directory (created on first use under /dev/shm, removed at exit).
const std::string& scratch_dir();

// Writes bytes to scratch_dir()/name (replacing it) and returns the path. Aborts on failure:
// a fuzzer that cannot write its inputs must not report "no crash".
std::string write_scratch_file(const std::string& name, std::string_view bytes);

// Aborts with a message: a broken property is a finding, like a crash.
[[noreturn]] void property_failed(const std::string& what);

}  // namespace dimmap::fuzz

// Implemented by each target (the libFuzzer entry point).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
