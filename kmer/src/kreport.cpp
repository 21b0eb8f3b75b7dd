// kreport.cpp - Kraken-style report.
#include <kmer/kreport.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kmer {

void write_kreport(std::ostream& out, const Taxonomy& tax, const std::unordered_map<uint32_t, uint64_t>& assigned) {
  const size_t n = tax.size();
  std::vector<uint64_t> direct(n, 0), clade(n, 0);
  uint64_t unclassified = 0, total = 0;
  for (const auto& [taxid, reads] : assigned) {
    total += reads;
    const uint32_t i = taxid ? tax.index_of(taxid) : Taxonomy::kNone;
    if (i == Taxonomy::kNone) {
      unclassified += reads;
      continue;
    }
    direct[i] += reads;
    for (uint32_t a = i; a != Taxonomy::kNone; a = tax.parent_index(a)) clade[a] += reads;
  }
  std::vector<std::vector<uint32_t>> children(n);
  for (uint32_t i = 0; i < n; ++i)
    if (clade[i] > 0 && tax.parent_index(i) != Taxonomy::kNone) children[tax.parent_index(i)].push_back(i);
  for (auto& c : children)
    std::sort(c.begin(), c.end(), [&](uint32_t a, uint32_t b) {
      return clade[a] != clade[b] ? clade[a] > clade[b] : tax.taxid_at(a) < tax.taxid_at(b);
    });
  auto line = [&](uint64_t in_clade, uint64_t here, const std::string& code, uint32_t taxid, unsigned depth,
                  const std::string& name) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%6.2f", total ? 100.0 * double(in_clade) / double(total) : 0.0);
    out << pct << '\t' << in_clade << '\t' << here << '\t' << code << '\t' << taxid << '\t'
        << std::string(2 * depth, ' ') << name << '\n';
  };
  if (unclassified > 0 || total == 0) line(unclassified, unclassified, "U", 0, 0, "unclassified");
  if (total == unclassified) return;
  // Depth-first; the rank code of an unranked taxon is its ranked ancestor's plus distance.
  struct Item {
    uint32_t index;
    unsigned depth;
    std::string base_code;
    unsigned distance;
  };
  std::vector<Item> stack{{tax.root_index(), 0, "R", 0}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    std::string code = it.index == tax.root_index() ? "R" : std::string(rank_code(tax.rank_at(it.index)));
    std::string base = it.base_code;
    unsigned distance = 0;
    if (code.empty()) {
      distance = it.distance + 1;
      code = base + std::to_string(distance);
    } else {
      base = code;
    }
    line(clade[it.index], direct[it.index], code, tax.taxid_at(it.index), it.depth, tax.name_at(it.index));
    const auto& c = children[it.index];
    for (auto ch = c.rbegin(); ch != c.rend(); ++ch) stack.push_back({*ch, it.depth + 1, base, distance});
  }
}

}  // namespace kmer
