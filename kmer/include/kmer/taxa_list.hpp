// taxa_list.hpp - a k-mer's taxa as (taxid, count) pairs, and the LCA reduction rule.
#pragma once

#include <kmer/taxonomy.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace kmer {

// (taxid, count), sorted by taxid, taxids unique; count = genomes of that taxon with the k-mer
// (saturating at 65535).
using TaxonCounts = std::vector<std::pair<uint32_t, uint32_t>>;

// While the list has more than max_taxa entries, every taxon at the greatest depth in the
// list is replaced by its parent (counts add up, duplicates merge): the list moves toward
// the LCA of its taxa one level at a time and ends with at most max_taxa entries (at worst
// the LCA alone). max_taxa = 0 means no limit.
TaxonCounts reduce_toward_lca(TaxonCounts taxa, const Taxonomy& taxonomy, unsigned max_taxa);

}  // namespace kmer
