// lookup_verify.cpp - the brute-force reference for k-mer lookups: k-mers as strings in a
// std::map, canonical form by comparing the text with its reverse complement.
#include <kmer/sequence_reader.hpp>
#include <kmer/verify.hpp>

#include <algorithm>
#include <set>

namespace kmer {

namespace {
std::string reverse_complement_text(const std::string& s) {
  std::string rc(s.rbegin(), s.rend());
  for (char& c : rc) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
  return rc;
}
bool acgt_only(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 'A' || c == 'C' || c == 'G' || c == 'T'; });
}
}  // namespace

BruteForceTable::BruteForceTable(const std::vector<GenomeEntry>& genomes, const Taxonomy& taxonomy, unsigned k,
                                 unsigned max_taxa) {
  std::map<std::string, std::set<size_t>> where;  // canonical k-mer -> genomes holding it
  for (size_t g = 0; g < genomes.size(); ++g) {
    SequenceReader reader(genomes[g].path);
    SequenceRecord rec;
    while (reader.next(rec)) {
      std::string seq = rec.sequence;
      for (char& c : seq) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      for (size_t i = 0; i + k <= seq.size(); ++i) {
        const std::string fwd = seq.substr(i, k);
        if (!acgt_only(fwd)) continue;
        const std::string rc = reverse_complement_text(fwd);
        where[std::min(fwd, rc)].insert(g);
      }
    }
  }
  for (const auto& [kmer, gs] : where) {
    std::map<uint32_t, uint32_t> per_taxon;
    for (size_t g : gs) ++per_taxon[genomes[g].taxid];
    TaxonCounts taxa(per_taxon.begin(), per_taxon.end());
    table_.emplace(kmer, reduce_toward_lca(std::move(taxa), taxonomy, max_taxa));
  }
}

const TaxonCounts* BruteForceTable::find(const std::string& kmer_text) const {
  const std::string rc = reverse_complement_text(kmer_text);
  auto it = table_.find(std::min(kmer_text, rc));
  return it == table_.end() ? nullptr : &it->second;
}

TaxonCounts to_taxon_counts(const TaxaList& list) {
  TaxonCounts out;
  for (uint32_t i = 0; i < list.size(); ++i) out.emplace_back(list.taxid(i), list.count(i));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kmer
