// kreport.hpp - Kraken-style report of read counts over the taxonomy.
//
// One line per taxon with reads in its clade, depth-first from the root, children by clade
// count (largest first): percent of all reads in the clade, reads in the clade, reads
// assigned directly, rank code (R, D, K, P, C, O, F, G, S; an unranked taxon gets its
// nearest ranked ancestor's code plus the distance, e.g. S1 for a strain), taxid, and the
// name indented two spaces per level. The first line counts the unclassified reads.
#pragma once

#include <kmer/taxonomy.hpp>

#include <cstdint>
#include <ostream>
#include <unordered_map>

namespace kmer {

// assigned: reads per taxid (taxid 0 = unclassified).
void write_kreport(std::ostream& out, const Taxonomy& taxonomy,
                   const std::unordered_map<uint32_t, uint64_t>& assigned);

}  // namespace kmer
