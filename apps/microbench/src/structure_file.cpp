// structure_file.cpp - names of the structures, and opening a structure file safely.
#include "microbench/structure_file.hpp"

#include <cstring>
#include <string>

#include "header_check.hpp"

namespace microbench {

Structure parse_structure(std::string_view text) {
  if (text == "sorted-vector") return Structure::sorted_vector;
  if (text == "ordered-map") return Structure::ordered_map;
  if (text == "unordered-map") return Structure::unordered_map;
  throw dimmap::Error("unknown structure '" + std::string(text) +
                      "' (expected sorted-vector, ordered-map or unordered-map)");
}

const char* to_string(Structure s) {
  switch (s) {
    case Structure::sorted_vector: return "sorted-vector";
    case Structure::ordered_map: return "ordered-map";
    case Structure::unordered_map: return "unordered-map";
  }
  return "?";
}

StructureFile StructureFile::open(const dimmap::Placement& placement, const std::string& path) {
  StructureFile f(dimmap::Region::open(placement, path, dimmap::Access::read_only));
  const std::string where = "'" + path + "'";
  if (f.region_.size() < kHeaderBytes) throw dimmap::Error(where + " is too short to be a structure file");
  const FileHeader& h = f.header();
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    throw dimmap::Error(where + " is not a micro-benchmark structure file (bad magic)");
  if (h.version != kVersion)
    throw dimmap::Error(where + " has format version " + std::to_string(h.version) + ", expected " +
                        std::to_string(kVersion) + ": rebuild it");
  if (h.header_check != header_check(h)) throw dimmap::Error(where + " has a corrupt header");
  if (h.complete != 1) throw dimmap::Error(where + " is an unfinished build");
  if (h.file_bytes != f.region_.size())
    throw dimmap::Error(where + " is " + std::to_string(f.region_.size()) + " bytes, the header says " +
                        std::to_string(h.file_bytes) + " (truncated?)");
  if (h.structure < 1 || h.structure > 3) throw dimmap::Error(where + " holds an unknown structure");
  const uint64_t root_end =
      h.root_offset + (h.structure == static_cast<uint32_t>(Structure::sorted_vector) ? h.entries * sizeof(Entry) : 1);
  if (h.root_offset < kHeaderBytes || root_end > h.file_bytes || h.entries == 0)
    throw dimmap::Error(where + " has its structure outside the file");
  return f;
}

}  // namespace microbench
