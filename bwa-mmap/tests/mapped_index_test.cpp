// mapped_index_test.cpp - the zero-copy loader gives libbwa the same index as libbwa's own
// loader (bwa_idx_load), on every placement, including every suffix-array lookup.
#include <bwammap/mapped_index.hpp>
#include <gtest/gtest.h>

#include <bwa/bwa.h>

#include <cstring>
#include <memory>

#include "test_util.hpp"

extern "C" bwtint_t __wrap_bwt_sa(const bwt_t* bwt, bwtint_t k);  // what libbwa's mem code calls

namespace bwammap {
namespace {

using testing::TempDir;

// One index for all tests: 300k bases in three contigs (with a run of N). Its .bwt, .sa and
// .pac (about 420 KiB) do not fit the 256 KiB DI-MMAP buffer, so the dimmap case evicts and
// re-reads pages.
class MappedIndexTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    std::string fasta = testing::random_fasta({150000, 100000, 50000}, 5);
    fasta.replace(fasta.find('\n', 50000) + 1, 60, std::string(60, 'N'));
    testing::write_file(dir_->file("ref.fa"), fasta);
    ASSERT_EQ(testing::run("bwa index -p " + dir_->file("ref") + " " + dir_->file("ref.fa") + " 2>/dev/null"), 0)
        << "the bwa binary (Debian package bwa) is needed";
    bwa_verbose = 1;
    reference_ = bwa_idx_load(dir_->file("ref").c_str(), BWA_IDX_ALL);
  }
  static void TearDownTestSuite() {
    bwa_idx_destroy(reference_);
    delete dir_;
  }

  std::unique_ptr<MappedIndex> load(const std::vector<std::string>& flags) {
    CLI::App app;
    plan_.add_to(app);
    std::vector<std::string> args(flags.rbegin(), flags.rend());  // CLI11 parses a reversed vector
    app.parse(args);
    return std::make_unique<MappedIndex>(dir_->file("ref"), plan_);
  }

  static TempDir* dir_;
  static bwaidx_t* reference_;
  IndexPlacement plan_;
};

TempDir* MappedIndexTest::dir_ = nullptr;
bwaidx_t* MappedIndexTest::reference_ = nullptr;

TEST_P(MappedIndexTest, SameIndexAsBwaIdxLoad) {
  ASSERT_NE(reference_, nullptr);
  std::vector<std::string> flags = {"--placement=" + GetParam(), "--memory-dir", "", "--buffer=256K"};
  auto index = load(flags);
  const bwt_t* a = index->idx()->bwt;
  const bwt_t* b = reference_->bwt;
  EXPECT_EQ(a->primary, b->primary);
  EXPECT_EQ(std::memcmp(a->L2, b->L2, sizeof a->L2), 0);
  EXPECT_EQ(a->seq_len, b->seq_len);
  ASSERT_EQ(a->bwt_size, b->bwt_size);
  EXPECT_EQ(std::memcmp(a->bwt, b->bwt, b->bwt_size * 4), 0);
  EXPECT_EQ(std::memcmp(a->cnt_table, b->cnt_table, sizeof a->cnt_table), 0);
  EXPECT_EQ(a->sa_intv, b->sa_intv);
  ASSERT_EQ(a->n_sa, b->n_sa);
  EXPECT_EQ(std::memcmp(a->sa + 1, b->sa + 1, (b->n_sa - 1) * sizeof(bwtint_t)), 0);

  const bntseq_t* bns = index->idx()->bns;
  ASSERT_EQ(bns->l_pac, reference_->bns->l_pac);
  ASSERT_EQ(bns->n_seqs, reference_->bns->n_seqs);
  EXPECT_EQ(bns->n_holes, reference_->bns->n_holes);
  EXPECT_GT(bns->n_holes, 0);
  for (int i = 0; i < bns->n_seqs; ++i) EXPECT_STREQ(bns->anns[i].name, reference_->bns->anns[i].name);
  EXPECT_EQ(std::memcmp(index->idx()->pac, reference_->pac, bns->l_pac / 4 + 1), 0);

  // Suffix-array values as mem sees them, including the walks that end on row 0 (text
  // positions near the start), where the mapped sa[0] differs from bwa's -1. Every row on
  // the in-memory placements; on the small DI-MMAP buffer, where each walk faults, those
  // rows plus every 257th.
  const bool every_row = GetParam() != "dimmap";
  uint64_t mismatches = 0, checked = 0, near_start = 0;
  for (bwtint_t k = 1; k <= b->seq_len; ++k) {
    const bwtint_t want = bwt_sa(b, k);
    if (!every_row && want >= 64 && k % 257 != 0) continue;
    ++checked;
    near_start += want < 64;
    if (__wrap_bwt_sa(a, k) != want) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u) << "of " << checked;
  EXPECT_EQ(near_start, 64u);
  EXPECT_EQ(__wrap_bwt_sa(a, b->primary), 0u);  // the row of the whole text is position 0
}

INSTANTIATE_TEST_SUITE_P(Placements, MappedIndexTest, ::testing::Values("memory", "mmap", "dimmap", "semi-external"));

TEST_P(MappedIndexTest, RegionsFollowThePlacement) {
  // --placement=mmap is full-external on mmap: a --backend=dimmap beside it would be refused.
  std::vector<std::string> flags = {"--placement=" + GetParam(), "--memory-dir", "", "--buffer=256K"};
  if (GetParam() != "mmap") flags.push_back("--backend=dimmap");
  auto index = load(flags);
  const dimmap::Backend want_storage = GetParam() == "mmap" ? dimmap::Backend::mmap : dimmap::Backend::dimmap;
  const bool memory = GetParam() == "memory";
  EXPECT_EQ(index->region(Structure::bwt).backend(), memory ? dimmap::Backend::memory : want_storage);
  EXPECT_EQ(index->region(Structure::sa).backend(), memory ? dimmap::Backend::memory : want_storage);
  const bool pac_in_memory = memory || GetParam() == "semi-external";
  EXPECT_EQ(index->region(Structure::pac).backend(), pac_in_memory ? dimmap::Backend::memory : want_storage);
}

TEST(MappedIndexErrors, NamesTheBrokenFile) {
  TempDir dir;
  IndexPlacement plan;
  CLI::App app;
  plan.add_to(app);
  app.parse(std::vector<std::string>{});
  try {
    MappedIndex index(dir.file("nothing"), plan);
    FAIL() << "loaded a missing index";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing.amb"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bwammap
