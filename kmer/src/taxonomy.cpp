// taxonomy.cpp - NCBI nodes.dmp / names.dmp parsing, lineages and LCA.
#include <kmer/error.hpp>
#include <kmer/taxonomy.hpp>

#include <charconv>
#include <fstream>

namespace kmer {

namespace {

// Splits an NCBI dump line "a\t|\tb\t|\t...\t|" into its trimmed fields.
std::vector<std::string_view> split_dmp(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t bar = line.find('|', start);
    std::string_view f = line.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    while (!f.empty() && (f.front() == '\t' || f.front() == ' ')) f.remove_prefix(1);
    while (!f.empty() && (f.back() == '\t' || f.back() == ' ' || f.back() == '\r')) f.remove_suffix(1);
    if (bar == std::string_view::npos) {
      if (!f.empty()) fields.push_back(f);  // trailing text after the last '|'
      break;
    }
    fields.push_back(f);
    start = bar + 1;
  }
  return fields;
}

bool parse_taxid(std::string_view text, uint32_t& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Taxonomy Taxonomy::load_dir(const std::string& dir) { return load(dir + "/nodes.dmp", dir + "/names.dmp"); }

// Calls f(fields, line number) for every non-empty line of an NCBI dump.
template <typename F>
void for_each_dmp_line(const std::string& path, F&& f) {
  std::ifstream in(path);
  if (!in) fail_at(path, 0, "cannot open");
  std::string line;
  uint64_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty()) f(split_dmp(line), no);
  }
}

Taxonomy Taxonomy::load(const std::string& nodes_path, const std::string& names_path) {
  std::unordered_map<uint32_t, std::string> names;
  for_each_dmp_line(names_path, [&](const std::vector<std::string_view>& f, uint64_t no) {
    uint32_t taxid = 0;
    if (f.size() < 4 || !parse_taxid(f[0], taxid))
      fail_at(names_path, no, "malformed names.dmp line (expected 'taxid | name | unique name | class |')");
    if (f[3] == "scientific name") names[taxid] = std::string(f[1]);
  });
  Taxonomy tax;
  for_each_dmp_line(nodes_path, [&](const std::vector<std::string_view>& f, uint64_t no) {
    uint32_t taxid = 0, parent = 0;
    if (f.size() < 3) fail_at(nodes_path, no, "malformed nodes.dmp line (expected 'taxid | parent | rank |')");
    if (!parse_taxid(f[0], taxid) || taxid == 0)
      fail_at(nodes_path, no, "taxid '" + std::string(f[0]) + "' is not a positive 32-bit number");
    if (!parse_taxid(f[1], parent) || parent == 0)
      fail_at(nodes_path, no, "parent taxid '" + std::string(f[1]) + "' is not a positive 32-bit number");
    if (f[2].empty()) fail_at(nodes_path, no, "empty rank");
    if (tax.contains(taxid)) fail_at(nodes_path, no, "duplicate taxid " + std::to_string(taxid));
    auto it = names.find(taxid);
    tax.add(taxid, parent, std::string(f[2]), it != names.end() ? it->second : "taxid " + std::to_string(taxid));
  });
  if (tax.size() == 0) fail_at(nodes_path, 0, "no taxa");
  tax.finalize(nodes_path);
  return tax;
}

void Taxonomy::add(uint32_t taxid, uint32_t parent_taxid, std::string rank, std::string name) {
  index_.emplace(taxid, static_cast<uint32_t>(taxid_.size()));
  taxid_.push_back(taxid);
  parent_taxid_.push_back(parent_taxid);
  rank_.push_back(std::move(rank));
  name_.push_back(std::move(name));
}

void Taxonomy::finalize(const std::string& source) {
  const size_t n = taxid_.size();
  parent_.assign(n, kNone);
  depth_.assign(n, kNone);
  root_ = kNone;
  for (size_t i = 0; i < n; ++i) {
    if (parent_taxid_[i] == taxid_[i]) {
      if (root_ != kNone)
        fail_at(source, 0, "two roots (taxids " + std::to_string(taxid_[root_]) + " and " +
                               std::to_string(taxid_[i]) + " are their own parents)");
      root_ = static_cast<uint32_t>(i);
      continue;
    }
    auto it = index_.find(parent_taxid_[i]);
    if (it == index_.end())
      fail_at(source, 0, "taxid " + std::to_string(taxid_[i]) + " has parent " + std::to_string(parent_taxid_[i]) +
                             ", which is not in the taxonomy");
    parent_[i] = it->second;
  }
  if (root_ == kNone) fail_at(source, 0, "no root (no taxid is its own parent)");
  depth_[root_] = 0;
  std::vector<uint32_t> path;
  for (size_t i = 0; i < n; ++i) {
    path.clear();
    uint32_t j = static_cast<uint32_t>(i);
    while (depth_[j] == kNone) {
      path.push_back(j);
      if (path.size() > n)
        fail_at(source, 0, "the parents of taxid " + std::to_string(taxid_[i]) + " form a cycle");
      j = parent_[j];
    }
    uint32_t d = depth_[j];
    for (auto it = path.rbegin(); it != path.rend(); ++it) depth_[*it] = ++d;
  }
}

uint32_t Taxonomy::index_of(uint32_t taxid) const {
  auto it = index_.find(taxid);
  return it == index_.end() ? kNone : it->second;
}

uint32_t Taxonomy::checked_index(uint32_t taxid) const {
  const uint32_t i = index_of(taxid);
  if (i == kNone) throw Error("taxid " + std::to_string(taxid) + " is not in the taxonomy");
  return i;
}

uint32_t Taxonomy::parent(uint32_t taxid) const {
  const uint32_t i = checked_index(taxid);
  return parent_[i] == kNone ? taxid : taxid_[parent_[i]];
}
const std::string& Taxonomy::rank(uint32_t taxid) const { return rank_[checked_index(taxid)]; }
const std::string& Taxonomy::name(uint32_t taxid) const { return name_[checked_index(taxid)]; }

uint32_t Taxonomy::lca_index(uint32_t a, uint32_t b) const {
  while (depth_[a] > depth_[b]) a = parent_[a];
  while (depth_[b] > depth_[a]) b = parent_[b];
  while (a != b) {
    a = parent_[a];
    b = parent_[b];
  }
  return a;
}

uint32_t Taxonomy::lca(uint32_t a, uint32_t b) const { return taxid_[lca_index(checked_index(a), checked_index(b))]; }

bool Taxonomy::is_ancestor(uint32_t ancestor, uint32_t taxid) const {
  const uint32_t a = checked_index(ancestor);
  uint32_t t = checked_index(taxid);
  while (depth_[t] > depth_[a]) t = parent_[t];
  return t == a;
}

uint32_t Taxonomy::ancestor_at_rank(uint32_t taxid, std::string_view rank) const {
  for (uint32_t i = checked_index(taxid); i != kNone; i = parent_[i])
    if (rank_[i] == rank) return taxid_[i];
  return 0;
}

std::vector<uint32_t> Taxonomy::lineage(uint32_t taxid) const {
  std::vector<uint32_t> out;
  for (uint32_t i = checked_index(taxid); i != kNone; i = parent_[i]) out.push_back(taxid_[i]);
  return {out.rbegin(), out.rend()};
}

std::string_view rank_code(std::string_view rank) {
  if (rank == "superkingdom" || rank == "domain") return "D";
  if (rank == "kingdom") return "K";
  if (rank == "phylum") return "P";
  if (rank == "class") return "C";
  if (rank == "order") return "O";
  if (rank == "family") return "F";
  if (rank == "genus") return "G";
  if (rank == "species") return "S";
  return "";
}

}  // namespace kmer
