// taxonomy.hpp - the NCBI taxonomy (nodes.dmp, names.dmp): parents, ranks, names, LCA.
//
// Taxids are NCBI's 32-bit numbers; internally each taxon also has a dense index so that
// per-read scoring can use flat arrays. The root is the taxon that is its own parent
// (taxid 1 in NCBI dumps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kmer {

class Taxonomy {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;  // "no such index"

  // Reads DIR/nodes.dmp and DIR/names.dmp. Throws kmer::Error naming file and line on a
  // malformed line, a duplicate taxid, a parent that does not exist, a cycle, or no root.
  static Taxonomy load_dir(const std::string& dir);
  static Taxonomy load(const std::string& nodes_path, const std::string& names_path);

  // Adds one taxon (used by the loaders and the DB decoder); call finalize() after the last.
  void add(uint32_t taxid, uint32_t parent_taxid, std::string rank, std::string name);
  // Resolves parents, checks for cycles, computes depths. `source` names the input in errors.
  void finalize(const std::string& source);

  size_t size() const { return taxid_.size(); }
  bool contains(uint32_t taxid) const { return index_.count(taxid) != 0; }
  uint32_t index_of(uint32_t taxid) const;  // kNone if unknown
  uint32_t taxid_at(uint32_t index) const { return taxid_[index]; }
  uint32_t parent_index(uint32_t index) const { return parent_[index]; }  // root: kNone
  uint32_t depth_at(uint32_t index) const { return depth_[index]; }
  const std::string& rank_at(uint32_t index) const { return rank_[index]; }
  const std::string& name_at(uint32_t index) const { return name_[index]; }
  uint32_t root_index() const { return root_; }
  uint32_t root_taxid() const { return taxid_[root_]; }

  // By taxid; all throw kmer::Error for an unknown taxid.
  uint32_t parent(uint32_t taxid) const;  // the root's parent is the root
  const std::string& rank(uint32_t taxid) const;
  const std::string& name(uint32_t taxid) const;
  uint32_t lca(uint32_t a, uint32_t b) const;
  bool is_ancestor(uint32_t ancestor, uint32_t taxid) const;  // a taxon is its own ancestor
  // The ancestor of taxid (or taxid itself) with this rank, 0 if the lineage has none.
  uint32_t ancestor_at_rank(uint32_t taxid, std::string_view rank) const;
  // Root first, taxid last.
  std::vector<uint32_t> lineage(uint32_t taxid) const;

  // Index-based LCA for hot loops.
  uint32_t lca_index(uint32_t a, uint32_t b) const;

 private:
  std::vector<uint32_t> taxid_, parent_taxid_, parent_, depth_;
  std::vector<std::string> rank_, name_;
  std::unordered_map<uint32_t, uint32_t> index_;
  uint32_t root_ = kNone;

  uint32_t checked_index(uint32_t taxid) const;
};

// Kraken-style one-letter rank code: root R, superkingdom/domain D, kingdom K, phylum P,
// class C, order O, family F, genus G, species S; "" for other ranks.
std::string_view rank_code(std::string_view rank);

}  // namespace kmer
