// verify.hpp - independent references for the two kernels.
//
// BruteForceTable: every canonical k-mer of the reference genomes with its taxa list, built
// the slow obvious way (std::map from the k-mer string, its reverse complement compared as
// text), with the same LCA reduction rule written out plainly. Lookups must equal it.
// reference_classify: the classification rule of classify.hpp evaluated from the table with
// explicit lineage walks, without the kernel's flat arrays.
#pragma once

#include <kmer/classify.hpp>
#include <kmer/genome_list.hpp>
#include <kmer/taxa_list.hpp>
#include <kmer/taxonomy.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kmer {

class BruteForceTable {
 public:
  BruteForceTable(const std::vector<GenomeEntry>& genomes, const Taxonomy& taxonomy, unsigned k,
                  unsigned max_taxa);
  // The canonical k-mer string -> taxa; nullptr if absent.
  const TaxonCounts* find(const std::string& kmer_text) const;
  const std::map<std::string, TaxonCounts>& table() const { return table_; }

 private:
  std::map<std::string, TaxonCounts> table_;
};

// Lists (sorted by taxid) for comparison with TaxaList.
TaxonCounts to_taxon_counts(const TaxaList& list);

Classification reference_classify(const std::string& read, const BruteForceTable& table,
                                  const Taxonomy& taxonomy, unsigned k, const ClassifyParams& params);

}  // namespace kmer
