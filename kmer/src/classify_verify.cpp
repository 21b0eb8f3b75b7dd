// classify_verify.cpp - the classification rule of classify.hpp evaluated the plain way:
// string k-mers looked up in the brute-force table, votes in std::maps, explicit lineages.
#include <kmer/verify.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace kmer {

Classification reference_classify(const std::string& read, const BruteForceTable& table, const Taxonomy& taxonomy,
                                  unsigned k, const ClassifyParams& params) {
  std::string seq = read;
  for (char& c : seq) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::map<uint32_t, uint32_t> support;
  std::set<uint32_t> direct;
  Classification c;
  for (size_t i = 0; i + k <= seq.size(); ++i) {
    const std::string w = seq.substr(i, k);
    if (w.find_first_not_of("ACGT") != std::string::npos) continue;
    ++c.kmers;
    const TaxonCounts* taxa = table.find(w);
    if (!taxa) continue;
    ++c.hits;
    std::set<uint32_t> voted;  // each k-mer votes once per taxon
    for (const auto& [t, n] : *taxa) {
      direct.insert(t);
      for (uint32_t a : taxonomy.lineage(t)) voted.insert(a);
    }
    for (uint32_t a : voted) ++support[a];
  }
  if (c.kmers == 0) {
    c.type = MatchType::too_short;
    return c;
  }
  if (c.hits == 0) {
    c.type = MatchType::no_hits;
    return c;
  }
  const uint32_t need = std::max<uint32_t>(params.min_hits, static_cast<uint32_t>(std::ceil(params.min_support * c.kmers)));
  uint32_t node = taxonomy.root_taxid();
  if (support[node] < need) {
    c.type = MatchType::low_score;
    return c;
  }
  bool competing = false;
  for (;;) {
    std::vector<std::pair<uint32_t, uint32_t>> children;  // (support, taxid)
    for (const auto& [t, s] : support)
      if (t != node && taxonomy.parent(t) == node && s > 0) children.emplace_back(s, t);
    if (children.empty()) break;
    std::sort(children.begin(), children.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (children[0].first < need) break;
    if (children.size() > 1 && children[1].first >= (1.0 - params.margin) * children[0].first) {
      competing = true;
      break;
    }
    node = children[0].second;
  }
  c.taxid = node;
  c.score = double(support[node]) / c.kmers;
  c.type = (!competing && direct.count(node)) ? MatchType::direct : MatchType::multi;
  return c;
}

}  // namespace kmer
