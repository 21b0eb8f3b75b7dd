// The sorted batches' read-ahead hints on dimmap: a cold DB on the pagecache engine (the
// kernel's page cache, mapped with MADV_RANDOM: a page nobody requested is read by a
// synchronous 4 KiB fault) is classified with almost no major faults, its first-level pages
// included.
#include <kmer/classify.hpp>
#include <kmer/database.hpp>
#include <kmer/db_builder.hpp>

#include <dimmap/placement.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

using kmer_test::TempDir;

long major_faults() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_majflt;
}

TEST(ReadAhead, ColdDbOnThePagecacheEngineIsReadWithoutSynchronousFaults) {
  TempDir dir;
  kmer_test::write_taxonomy(dir, kmer_test::small_tree());
  std::mt19937_64 rng(7);
  const std::string genome = kmer_test::random_dna(rng, 3000000);
  kmer::BuildOptions o;
  o.k = 18;
  o.index = kmer::IndexKind::two_level;
  o.taxonomy_dir = dir.file("tax");
  o.genome_list = dir.write("genomes.tsv", dir.write("g.fa", kmer_test::fasta("g", genome)) + "\t1001\n");
  o.out = dir.file("db");
  o.progress = false;
  o.threads = 2;
  kmer::build_database(o);
  const int fd = ::open(o.out.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // cold
  ::close(fd);

  dimmap_config cfg = dimmap::config_for_buffer(uint64_t{64} << 20);
  cfg.engine = DIMMAP_ENGINE_PAGECACHE;
  auto buffer = std::make_shared<dimmap::Buffer>(cfg);
  const kmer::Database db = kmer::Database::open(o.out, dimmap::Placement::dimmap(dir.path(), buffer));
  const long first_level_pages = static_cast<long>((uint64_t{8} << db.header().prefix_bits) / 4096);
  ASSERT_GE(first_level_pages, 64) << "the DB should have a first level of many pages";
  const kmer::TaxonIndex index(db.taxonomy());

  std::vector<std::string> reads;
  for (int i = 0; i < 40000; ++i) reads.push_back(genome.substr(rng() % (genome.size() - 100), 100));
  std::vector<std::string_view> views(reads.begin(), reads.end());
  kmer::SortedBatchClassifier sorted(db, index, {}, 2, uint64_t{1} << 30, uint64_t{1} << 20);
  std::vector<kmer::Classification> got;
  const long before = major_faults();
  sorted.classify(views.data(), views.size(), got);
  const long faults = major_faults() - before;
  ASSERT_EQ(got.size(), reads.size());
  for (const auto& c : got) ASSERT_EQ(c.taxid, 1001u);
  // 3.3M k-mers touch every first-level page: unrequested, each would be one major fault.
  EXPECT_LT(faults, first_level_pages / 8) << "of " << first_level_pages << " first-level pages";
}

}  // namespace
