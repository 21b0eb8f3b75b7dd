// taxonomy_codec.hpp - the DB's taxonomy section: the lineages of the DB's taxa, so that
// classify needs only the DB file.
//
// Layout: uint64 taxa; taxa x {uint32 taxid, parent taxid, rank offset, name offset};
// then the string pool (NUL-terminated strings). The root is first.
#pragma once

#include <kmer/taxonomy.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kmer {

// The taxa and all their ancestors, encoded.
std::vector<uint8_t> encode_taxonomy(const Taxonomy& taxonomy, const std::vector<uint32_t>& taxids);
// Throws kmer::Error naming `source` if the bytes are malformed.
Taxonomy decode_taxonomy(const uint8_t* data, uint64_t bytes, const std::string& source);

}  // namespace kmer
