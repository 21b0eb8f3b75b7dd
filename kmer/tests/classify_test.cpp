// The classification kernel against its plain reference, on reads from the small reference
// (exact, mutated, chimeric, random, with N); and the Kraken-style report.
#include <kmer/classify.hpp>
#include <kmer/database.hpp>
#include <kmer/error.hpp>
#include <kmer/kreport.hpp>
#include <kmer/verify.hpp>

#include <sstream>

#include "db_fixture.hpp"

namespace {

using kmer::IndexKind;

class KernelEqualsReference : public ::testing::TestWithParam<std::tuple<IndexKind, unsigned>> {};

TEST_P(KernelEqualsReference, OnManyReads) {
  const auto [kind, max_taxa] = GetParam();
  kmer_test::SmallReference ref;
  auto o = ref.options(18, kind, "db");
  o.max_taxa = max_taxa;
  kmer::build_database(o);
  const auto tax = kmer::Taxonomy::load_dir(o.taxonomy_dir);
  const kmer::BruteForceTable table(kmer::read_genome_list(ref.list, tax), tax, 18, max_taxa);
  const kmer::Database db = kmer::Database::open(o.out);
  const kmer::TaxonIndex index(db.taxonomy());
  std::mt19937_64 rng(3);
  std::vector<std::string> reads;
  for (int i = 0; i < 600; ++i) {
    const auto& g = ref.genomes[rng() % ref.genomes.size()].first;
    const size_t len = 40 + rng() % 120, pos = rng() % (g.size() - len);
    std::string r = kmer_test::mutate(rng, g.substr(pos, len), (i % 3) * 0.02);
    if (i % 7 == 0) r[len / 2] = 'N';
    if (i % 11 == 0) r = r.substr(0, len / 2) + ref.genomes[4].first.substr(100, len / 2);  // chimera
    reads.push_back(r);
  }
  for (int i = 0; i < 50; ++i) reads.push_back(kmer_test::random_dna(rng, 100));
  reads.push_back("ACGT");             // too short for k = 18
  reads.push_back(std::string(50, 'N'));
  std::map<kmer::MatchType, int> seen;
  for (const kmer::ClassifyParams params : {kmer::ClassifyParams{}, kmer::ClassifyParams{0.3, 3, 0.0},
                                            kmer::ClassifyParams{0.0, 1, 0.5}}) {
    kmer::ReadClassifier kernel(db, index, params);
    for (const auto& r : reads) {
      const kmer::Classification got = kernel.classify(r);
      const kmer::Classification want = kmer::reference_classify(r, table, tax, 18, params);
      ASSERT_EQ(got.taxid, want.taxid) << r;
      ASSERT_EQ(got.type, want.type) << r;
      ASSERT_EQ(got.kmers, want.kmers) << r;
      ASSERT_EQ(got.hits, want.hits) << r;
      ASSERT_DOUBLE_EQ(got.score, want.score) << r;
      ++seen[got.type];
    }
  }
  // The reads exercise every outcome.
  for (auto t : {kmer::MatchType::direct, kmer::MatchType::multi, kmer::MatchType::no_hits,
                 kmer::MatchType::too_short})
    EXPECT_GT(seen[t], 0) << kmer::to_string(t);
}

INSTANTIATE_TEST_SUITE_P(Indexes, KernelEqualsReference,
                         ::testing::Combine(::testing::Values(IndexKind::two_level, IndexKind::gnu_hash),
                                            ::testing::Values(32u, 1u)),
                         [](const ::testing::TestParamInfo<std::tuple<IndexKind, unsigned>>& info) {
                           return std::string(std::get<0>(info.param) == IndexKind::two_level ? "TwoLevel"
                                                                                              : "GnuHash") +
                                  "_maxtaxa" + std::to_string(std::get<1>(info.param));
                         });

TEST(Classify, ExactReadsGoToTheirGenomeOrItsSpecies) {
  kmer_test::SmallReference ref;
  auto o = ref.options(18, IndexKind::two_level, "db");
  kmer::build_database(o);
  const kmer::Database db = kmer::Database::open(o.out);
  const kmer::TaxonIndex index(db.taxonomy());
  kmer::ReadClassifier kernel(db, index, {});
  // Genome 4 (taxid 200) and the virus (300) have no close relative: exact reads hit them.
  EXPECT_EQ(kernel.classify(ref.genomes[4].first.substr(1000, 100)).taxid, 200u);
  const auto v = kernel.classify(ref.genomes[6].first.substr(100, 150));
  EXPECT_EQ(v.taxid, 300u);
  EXPECT_EQ(v.type, kmer::MatchType::direct);
  EXPECT_DOUBLE_EQ(v.score, 1.0);
  // Strains 1001/1002 and the species genome share most k-mers: reads land in genus 10's
  // subtree, never outside it.
  for (int i = 0; i < 20; ++i) {
    const uint32_t t = kernel.classify(ref.genomes[0].first.substr(200 * i, 150)).taxid;
    EXPECT_TRUE(db.taxonomy().is_ancestor(10, t)) << t;
  }
}

// Sorted batches (any size, any threads, both indexes, lowercase and N, empty and short
// reads, repeated reads) give exactly the per-read kernel's results.
TEST(ClassifySortedBatch, EqualsPerReadKernelForAnyLookupBatch) {
  for (const IndexKind kind : {IndexKind::two_level, IndexKind::gnu_hash}) {
    kmer_test::SmallReference ref;
    auto o = ref.options(18, kind, "db");
    kmer::build_database(o);
    const kmer::Database db = kmer::Database::open(o.out);
    const kmer::TaxonIndex index(db.taxonomy());
    std::mt19937_64 rng(5);
    std::vector<std::string> reads;
    for (int i = 0; i < 400; ++i) {
      const auto& g = ref.genomes[rng() % ref.genomes.size()].first;
      const size_t len = rng() % 200, pos = rng() % (g.size() - len);
      std::string r = kmer_test::mutate(rng, g.substr(pos, len), (i % 4) * 0.02);
      if (i % 9 == 0 && len > 0) r[len / 3] = 'N';
      if (i % 13 == 0) r = reads.empty() ? r : reads.back();  // equal k-mers across reads
      reads.push_back(r);
    }
    reads.push_back("");
    reads.push_back(ref.genomes[0].first.substr(0, 3000));  // longer than the small batches
    for (int i = 0; i < 30; ++i) reads.push_back(kmer_test::random_dna(rng, 120));
    std::vector<std::string_view> views(reads.begin(), reads.end());
    const kmer::ClassifyParams params;
    kmer::ReadClassifier kernel(db, index, params);
    std::vector<kmer::Classification> want;
    for (const auto& r : reads) want.push_back(kernel.classify(r));
    // With read-ahead hints (first-level pages while sorting, buckets ahead while looking up)
    // or without: the same results.
    for (const unsigned threads : {1u, 2u, 3u}) {
      for (const uint64_t lookup_batch : {uint64_t{1}, uint64_t{100}, uint64_t{5000}, uint64_t{1} << 30}) {
        const uint64_t readahead = threads == 2 ? 0 : uint64_t{1} << 20;
        kmer::SortedBatchClassifier sorted(db, index, params, threads, lookup_batch, readahead);
        std::vector<kmer::Classification> got;
        sorted.classify(views.data(), views.size(), got);
        if (lookup_batch == 1) {
          EXPECT_GE(sorted.sorted_batches(), 300u);
        }
        if (lookup_batch == uint64_t{1} << 30) {
          EXPECT_EQ(sorted.sorted_batches(), 1u);
        }
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(got[i].taxid, want[i].taxid)
              << i << " threads " << threads << " batch " << lookup_batch << " read-ahead " << readahead;
          ASSERT_EQ(got[i].type, want[i].type) << i;
          ASSERT_EQ(got[i].kmers, want[i].kmers) << i;
          ASSERT_EQ(got[i].hits, want[i].hits) << i;
          ASSERT_EQ(got[i].score, want[i].score) << i;
        }
        sorted.classify(views.data(), 0, got);  // an empty batch
        EXPECT_TRUE(got.empty());
      }
    }
  }
}

TEST(ClassifySortedBatch, RejectsABadLookupBatch) {
  kmer_test::SmallReference ref;
  auto o = ref.options(18, IndexKind::two_level, "db");
  kmer::build_database(o);
  const kmer::Database db = kmer::Database::open(o.out);
  const kmer::TaxonIndex index(db.taxonomy());
  EXPECT_THROW(kmer::SortedBatchClassifier(db, index, {}, 1, 0), kmer::Error);
  EXPECT_THROW(kmer::SortedBatchClassifier(db, index, {}, 1, kmer::SortedBatchClassifier::kMaxLookupBatch + 1),
               kmer::Error);
}

TEST(Kreport, CountsCladesAndRankCodes) {
  kmer_test::TempDir d;
  kmer_test::write_taxonomy(d, kmer_test::small_tree());
  const auto tax = kmer::Taxonomy::load_dir(d.file("tax"));
  std::ostringstream out;
  kmer::write_kreport(out, tax, {{0, 2}, {1001, 3}, {100, 1}, {200, 4}});
  EXPECT_EQ(out.str(),
            " 20.00\t2\t2\tU\t0\tunclassified\n"
            " 80.00\t8\t0\tR\t1\troot\n"
            " 80.00\t8\t0\tD\t2\t  Bacteria\n"
            " 40.00\t4\t0\tG\t10\t    Alpha\n"
            " 40.00\t4\t1\tS\t100\t      Alpha one\n"
            " 30.00\t3\t3\tS1\t1001\t        Alpha one A\n"
            " 40.00\t4\t0\tG\t20\t    Beta\n"
            " 40.00\t4\t4\tS\t200\t      Beta one\n");
}

}  // namespace
