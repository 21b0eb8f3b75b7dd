// header_check.hpp - the checksum that tells a structure file's header from random bytes.
#pragma once

#include "microbench/keys.hpp"
#include "microbench/structure_file.hpp"

namespace microbench {

inline uint64_t header_check(const FileHeader& h) {
  uint64_t x = mix64(h.version) ^ mix64(h.structure + 11) ^ mix64(h.entries + 13) ^ mix64(h.seed + 17);
  return x ^ mix64(h.file_bytes + 19) ^ mix64(h.root_offset + 23) ^ mix64(h.complete + 29);
}

}  // namespace microbench
