// Taxonomy: parsing NCBI dumps, LCA, ranks, the LCA reduction rule, malformed dumps.
#include <kmer/error.hpp>
#include <kmer/taxa_list.hpp>
#include <kmer/taxonomy.hpp>

#include "test_util.hpp"

namespace {

using kmer_test::TempDir;

TEST(Taxonomy, LoadsLineagesAndRanks) {
  TempDir d;
  kmer_test::write_taxonomy(d, kmer_test::small_tree());
  const auto t = kmer::Taxonomy::load_dir(d.file("tax"));
  EXPECT_EQ(t.size(), 11u);
  EXPECT_EQ(t.root_taxid(), 1u);
  EXPECT_EQ(t.name(1001), "Alpha one A");  // scientific name, not the synonym
  EXPECT_EQ(t.rank(10), "genus");
  EXPECT_EQ(t.parent(1), 1u);
  EXPECT_EQ(t.lca(1001, 1002), 100u);
  EXPECT_EQ(t.lca(1001, 101), 10u);
  EXPECT_EQ(t.lca(1001, 200), 2u);
  EXPECT_EQ(t.lca(1001, 300), 1u);
  EXPECT_EQ(t.lca(100, 1002), 100u);
  EXPECT_TRUE(t.is_ancestor(10, 1002));
  EXPECT_FALSE(t.is_ancestor(20, 1002));
  EXPECT_EQ(t.ancestor_at_rank(1002, "genus"), 10u);
  EXPECT_EQ(t.ancestor_at_rank(1002, "species"), 100u);
  EXPECT_EQ(t.ancestor_at_rank(3, "genus"), 0u);
  EXPECT_EQ(t.lineage(1001), (std::vector<uint32_t>{1, 2, 10, 100, 1001}));
  EXPECT_THROW(t.lca(1, 999), kmer::Error);
  EXPECT_EQ(kmer::rank_code("genus"), "G");
  EXPECT_EQ(kmer::rank_code("no rank"), "");
}

TEST(Taxonomy, ReductionMovesDeepestTaxaUpUntilShortEnough) {
  TempDir d;
  kmer_test::write_taxonomy(d, kmer_test::small_tree());
  const auto t = kmer::Taxonomy::load_dir(d.file("tax"));
  const kmer::TaxonCounts in{{101, 1}, {200, 1}, {1001, 2}, {1002, 3}};
  // Short enough: unchanged.
  EXPECT_EQ(kmer::reduce_toward_lca(in, t, 4), in);
  EXPECT_EQ(kmer::reduce_toward_lca(in, t, 0), in);
  // Depth 4 (strains) merge into species 100 (2 + 3).
  EXPECT_EQ(kmer::reduce_toward_lca(in, t, 3), (kmer::TaxonCounts{{100, 5}, {101, 1}, {200, 1}}));
  // Then depth 3 (species) merge into genera: 10 gets 5 + 1, 20 gets 1.
  EXPECT_EQ(kmer::reduce_toward_lca(in, t, 2), (kmer::TaxonCounts{{10, 6}, {20, 1}}));
  // Then the genera merge into Bacteria, the LCA.
  EXPECT_EQ(kmer::reduce_toward_lca(in, t, 1), (kmer::TaxonCounts{{2, 7}}));
}

std::string load_error(const TempDir& d, const std::string& nodes, const std::string& names = "") {
  d.write("bad/nodes.dmp", nodes);
  d.write("bad/names.dmp", names);
  try {
    kmer::Taxonomy::load_dir(d.file("bad"));
  } catch (const kmer::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Taxonomy, MalformedDumpsFailWithFileAndLine) {
  TempDir d;
  ::mkdir(d.file("bad").c_str(), 0755);
  std::string e = load_error(d, "1\t|\t1\t|\tno rank\t|\n2\t|\tx\t|\tgenus\t|\n");
  EXPECT_NE(e.find("nodes.dmp:2"), std::string::npos) << e;
  e = load_error(d, "1\t|\t1\t|\tno rank\t|\n2\t|\n");
  EXPECT_NE(e.find("nodes.dmp:2: malformed"), std::string::npos) << e;
  e = load_error(d, "1\t|\t1\t|\tno rank\t|\n2\t|\t7\t|\tgenus\t|\n");
  EXPECT_NE(e.find("parent 7"), std::string::npos) << e;
  e = load_error(d, "1\t|\t1\t|\tno rank\t|\n2\t|\t3\t|\tgenus\t|\n3\t|\t2\t|\tgenus\t|\n");
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  e = load_error(d, "1\t|\t1\t|\tno rank\t|\n1\t|\t1\t|\tno rank\t|\n");
  EXPECT_NE(e.find("nodes.dmp:2: duplicate taxid 1"), std::string::npos) << e;
  e = load_error(d, "2\t|\t3\t|\tgenus\t|\n3\t|\t2\t|\tgenus\t|\n");
  EXPECT_NE(e.find("no root"), std::string::npos) << e;
  e = load_error(d, "1\t|\t1\t|\tno rank\t|\n", "1\t|\troot\n");
  EXPECT_NE(e.find("names.dmp:1: malformed"), std::string::npos) << e;
}

}  // namespace
