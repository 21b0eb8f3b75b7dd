// error.hpp - the one exception type of libkmer.
//
// Every error about bad input names the file (and line, when there is one) and the problem,
// so the CLI can print it as is and exit non-zero.
#pragma once

#include <dimmap/placement.hpp>

#include <string>

namespace kmer {

class Error : public dimmap::Error {
 public:
  using dimmap::Error::Error;
};

// "FILE:LINE: what" (or "FILE: what" when line is 0).
[[noreturn]] void fail_at(const std::string& file, uint64_t line, const std::string& what);

}  // namespace kmer
