// Fuzz target: kmer's NCBI taxonomy loader (nodes.dmp and names.dmp, split by the part
// separator). Properties: malformed dumps end in kmer::Error; a loaded taxonomy is a tree:
// every lineage runs from the root to the taxon with depths 0, 1, 2, ..., and the LCA of two
// taxa is an ancestor of both.
#include <kmer/error.hpp>
#include <kmer/taxonomy.hpp>

#include <string>

#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const auto parts = dimmap::fuzz::split_parts(data, size, 2);
  const std::string nodes = dimmap::fuzz::write_scratch_file("nodes.dmp", parts[0]);
  const std::string names = dimmap::fuzz::write_scratch_file("names.dmp", parts[1]);
  kmer::Taxonomy tax;
  try {
    tax = kmer::Taxonomy::load(nodes, names);
  } catch (const dimmap::Error&) {
    return 0;
  }
  const size_t n = tax.size();
  if (n == 0) property_failed("an empty taxonomy was accepted");
  const uint32_t root = tax.root_taxid();
  for (uint32_t i = 0; i < n && i < 256; ++i) {
    const uint32_t taxid = tax.taxid_at(i);
    const auto lineage = tax.lineage(taxid);
    if (lineage.empty() || lineage.front() != root || lineage.back() != taxid)
      property_failed("lineage of " + std::to_string(taxid) + " does not run from the root to it");
    if (lineage.size() != tax.depth_at(i) + 1) property_failed("depth disagrees with the lineage");
    for (size_t d = 1; d < lineage.size(); ++d)
      if (tax.parent(lineage[d]) != lineage[d - 1]) property_failed("lineage skips a parent");
    const uint32_t other = tax.taxid_at(static_cast<uint32_t>((i * 7 + 3) % n));
    const uint32_t lca = tax.lca(taxid, other);
    if (!tax.is_ancestor(lca, taxid) || !tax.is_ancestor(lca, other))
      property_failed("lca(" + std::to_string(taxid) + ", " + std::to_string(other) + ") is not an ancestor of both");
    if (tax.lca_index(i, tax.index_of(other)) != tax.index_of(lca)) property_failed("lca and lca_index disagree");
  }
  return 0;
}
