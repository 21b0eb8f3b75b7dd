// kmer build + lookups against the brute-force table, for both indexes and several k;
// identical output under any memory budget; bad DB files and bad genome lists.
#include <kmer/database.hpp>
#include <kmer/db_builder.hpp>
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>
#include <kmer/verify.hpp>

#include <dirent.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../src/db_writer.hpp"
#include "db_fixture.hpp"

namespace {

using kmer::IndexKind;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

using kmer::CompactEntries;

struct Case {
  unsigned k;
  IndexKind kind;
  unsigned max_taxa;
  CompactEntries compact = CompactEntries::automatic;
};

class LookupEqualsBruteForce : public ::testing::TestWithParam<Case> {};

TEST_P(LookupEqualsBruteForce, EveryKmerAndAbsentOnes) {
  const Case c = GetParam();
  kmer_test::SmallReference ref;
  auto o = ref.options(c.k, c.kind, "db");
  o.max_taxa = c.max_taxa;
  o.compact = c.compact;
  const auto stats = kmer::build_database(o);
  const auto tax = kmer::Taxonomy::load_dir(o.taxonomy_dir);
  const kmer::BruteForceTable table(kmer::read_genome_list(ref.list, tax), tax, c.k, c.max_taxa);
  const kmer::Database db = kmer::Database::open(o.out);
  ASSERT_EQ(db.k(), c.k);
  ASSERT_EQ(db.kind(), c.kind);
  if (c.kind == IndexKind::two_level && c.compact != CompactEntries::automatic) {
    ASSERT_EQ(db.header().entry_bytes == sizeof(kmer::TwoLevelEntry16), c.compact == CompactEntries::always);
  }
  EXPECT_EQ(stats.kmers, table.table().size());
  EXPECT_EQ(db.header().kmer_count, table.table().size());
  for (const auto& [text, taxa] : table.table()) {
    const uint64_t code = kmer::encode_kmer(text, c.k);
    ASSERT_EQ(kmer::canonical(code, c.k), code) << text;
    const kmer::TaxaList got = db.lookup(code);
    ASSERT_FALSE(got.empty()) << text;
    ASSERT_EQ(kmer::to_taxon_counts(got), taxa) << text;
    // Inline exactly for single-taxon, single-genome k-mers of the two-level index.
    EXPECT_EQ(got.is_inline(), c.kind == IndexKind::two_level && taxa.size() == 1 && taxa[0].second == 1);
  }
  // Every DB k-mer is in the table (for_each walks the whole index).
  size_t walked = 0;
  db.for_each([&](uint64_t kmer, const kmer::TaxaList& list) {
    ++walked;
    const auto* t = table.find(kmer::decode_kmer(kmer, c.k));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(kmer::to_taxon_counts(list), *t);
  });
  EXPECT_EQ(walked, table.table().size());
  // Absent k-mers miss.
  std::mt19937_64 rng(7);
  size_t absent = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string s = kmer_test::random_dna(rng, c.k);
    const uint64_t code = kmer::canonical(kmer::encode_kmer(s, c.k), c.k);
    const bool in_table = table.find(s) != nullptr;
    EXPECT_EQ(!db.lookup(code).empty(), in_table) << s;
    absent += !in_table;
  }
  if (c.k >= 18) {
    EXPECT_GT(absent, 19000u);
  }
  db.verify();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* const kCompact[] = {"", "_compact", "_wide"};
  return std::string(info.param.kind == IndexKind::two_level ? "TwoLevel" : "GnuHash") + "_k" +
         std::to_string(info.param.k) + "_maxtaxa" + std::to_string(info.param.max_taxa) +
         kCompact[static_cast<int>(info.param.compact)];
}

INSTANTIATE_TEST_SUITE_P(Indexes, LookupEqualsBruteForce,
                         ::testing::Values(Case{18, IndexKind::two_level, 32}, Case{18, IndexKind::gnu_hash, 32},
                                           Case{18, IndexKind::two_level, 2}, Case{18, IndexKind::gnu_hash, 1},
                                           Case{5, IndexKind::two_level, 3}, Case{5, IndexKind::gnu_hash, 0},
                                           Case{31, IndexKind::two_level, 32}, Case{32, IndexKind::gnu_hash, 32},
                                           Case{32, IndexKind::two_level, 0},
                                           Case{18, IndexKind::two_level, 32, CompactEntries::always},
                                           Case{18, IndexKind::two_level, 1, CompactEntries::always},
                                           Case{12, IndexKind::two_level, 0, CompactEntries::always},
                                           Case{5, IndexKind::two_level, 3, CompactEntries::never}),
                         case_name);

TEST(TwoLevelShape, CompactEntriesWhenTheyPayAndFit) {
  using kmer::choose_two_level_shape;
  auto shape = [](uint64_t kmers, unsigned k, uint64_t values, CompactEntries c = CompactEntries::automatic) {
    const kmer::TwoLevelShape s = choose_two_level_shape(kmers, k, values, c);
    return std::make_pair(s.prefix_bits, s.entry_bytes);
  };
  // 32M 18-mers: ~64 per list wants 19 prefix bits; 16-bit suffixes need 20: compact.
  EXPECT_EQ(shape(32u << 20, 18, 1000), std::make_pair(20u, 4u));
  // Too many distinct values for 16-bit codes: 8-byte entries.
  EXPECT_EQ(shape(32u << 20, 18, 70000), std::make_pair(19u, 8u));
  // A small DB would need a first level 2^14 times its usual size: not worth it unless asked.
  EXPECT_EQ(shape(1000, 18, 10), std::make_pair(4u, 8u));
  EXPECT_EQ(shape(1000, 18, 10, CompactEntries::always), std::make_pair(20u, 4u));
  EXPECT_EQ(shape(1000, 18, 10, CompactEntries::never), std::make_pair(4u, 8u));
  // Short k-mers: suffixes fit in 16 bits at the usual first level.
  EXPECT_EQ(shape(1000, 5, 10), std::make_pair(4u, 4u));
  // More k-mers than 2^16 per prefix: still 4 bytes, with the usual (bigger) first level.
  EXPECT_EQ(shape(uint64_t{1} << 32, 18, 10), std::make_pair(26u, 4u));
  // Impossible on request: clear errors.
  EXPECT_THROW(choose_two_level_shape(1000, 32, 10, CompactEntries::always), kmer::Error);
  EXPECT_THROW(choose_two_level_shape(32u << 20, 18, 70000, CompactEntries::always), kmer::Error);
}

// Genomes shorter than k: a DB without k-mers, with compact or 8-byte entries, still opens,
// verifies and misses every lookup.
// A genome list whose genomes are all shorter than k builds nothing: refused, naming the
// list and k, with no database left behind (whatever the entry size).
TEST(Build, GenomesWithoutKmersAreRefused) {
  kmer_test::SmallReference ref;
  ref.dir.write("short.fa", kmer_test::fasta("short", "ACGTACGTAC"));
  const std::string list = ref.dir.write("short.tsv", "short.fa\t1001\n");
  for (const CompactEntries compact : {CompactEntries::always, CompactEntries::never}) {
    auto o = ref.options(18, IndexKind::two_level, compact == CompactEntries::always ? "compact.db" : "wide.db");
    o.genome_list = list;
    o.compact = compact;
    try {
      kmer::build_database(o);
      ADD_FAILURE() << "a genome list without 18-mers was accepted";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("short.tsv"), std::string::npos) << what;
      EXPECT_NE(what.find("no 18-mers"), std::string::npos) << what;
    }
    EXPECT_FALSE(std::filesystem::exists(o.out)) << o.out;
  }
}

TEST(Build, ReductionHappensAndShortListsStay) {
  kmer_test::SmallReference ref;
  auto o = ref.options(18, IndexKind::two_level, "db");
  o.max_taxa = 1;
  const auto s1 = kmer::build_database(o);
  EXPECT_GT(s1.reduced_lists, 0u);
  const kmer::Database db = kmer::Database::open(o.out);
  db.for_each([&](uint64_t, const kmer::TaxaList& l) { EXPECT_EQ(l.size(), 1u); });
}

TEST(Build, SameBytesUnderAnyMemoryBudgetAndThreadCount) {
  kmer_test::SmallReference ref;
  for (IndexKind kind : {IndexKind::two_level, IndexKind::gnu_hash}) {
    auto big = ref.options(18, kind, "big");
    auto small = ref.options(18, kind, "small");
    small.memory_bytes = 4096;  // forces partitions to split again and again
    small.threads = 1;
    kmer::build_database(big);
    const auto s = kmer::build_database(small);
    EXPECT_GT(s.partitions, 256u);
    EXPECT_EQ(slurp(big.out), slurp(small.out));
  }
}

TEST(Build, TwoLevelListsStayInsideOnePage) {
  kmer_test::SmallReference ref;
  auto o = ref.options(18, IndexKind::two_level, "db");
  kmer::build_database(o);
  const kmer::Database db = kmer::Database::open(o.out);
  const auto& h = db.header();
  const auto* first = reinterpret_cast<const uint64_t*>(
      static_cast<const uint8_t*>(db.region().data()) + h.sections[kmer::kSectionFirstLevel].offset);
  const uint64_t per_page = kmer::kDbPage / h.entry_bytes;
  EXPECT_EQ(h.sections[kmer::kSectionSecondLevel].offset % kmer::kDbPage, 0u);
  for (uint64_t p = 0; p < (uint64_t{1} << h.prefix_bits); ++p) {
    const uint64_t start = first[p] & ((uint64_t{1} << kmer::kFirstLevelStartBits) - 1);
    const uint64_t n = first[p] >> kmer::kFirstLevelStartBits;
    if (n == 0 || n > per_page) continue;
    EXPECT_EQ(start / per_page, (start + n - 1) / per_page) << "prefix " << p;
  }
}

std::string open_error(const std::string& path) {
  try {
    kmer::Database::open(path);
  } catch (const kmer::Error& e) {
    return e.what();
  }
  return "";
}

void patch(const std::string& path, size_t offset, const void* bytes, size_t n) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

TEST(BadDb, TruncatedWrongMagicCorruptAndOtherVersion) {
  kmer_test::SmallReference ref;
  auto o = ref.options(18, IndexKind::two_level, "db");
  kmer::build_database(o);
  const std::string good = slurp(o.out);
  auto copy = [&](const std::string& name, size_t bytes) {
    std::ofstream(ref.dir.file(name), std::ios::binary) << good.substr(0, bytes);
    return ref.dir.file(name);
  };
  std::string e = open_error(copy("trunc", good.size() - 4096));
  EXPECT_NE(e.find("trunc"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  e = open_error(copy("tiny", 100));
  EXPECT_NE(e.find("too short"), std::string::npos) << e;
  const std::string magic = copy("magic", good.size());
  patch(magic, 0, "XXXX", 4);
  EXPECT_NE(open_error(magic).find("wrong magic"), std::string::npos);
  const std::string corrupt = copy("corrupt", good.size());
  patch(corrupt, 40, "\x7f", 1);  // inside the counts: header CRC catches it
  EXPECT_NE(open_error(corrupt).find("CRC"), std::string::npos);
  // Another version with a valid header CRC.
  const std::string version = copy("version", good.size());
  kmer::DbHeader h;
  std::memcpy(&h, good.data(), sizeof h);
  h.version = 99;
  h.header_crc32 = kmer::header_crc(h);
  patch(version, 0, &h, sizeof h);
  e = open_error(version);
  EXPECT_NE(e.find("version 99"), std::string::npos) << e;
  // A flipped bit in the index: opening is cheap and succeeds, verify() finds it.
  const std::string flipped = copy("flipped", good.size());
  std::memcpy(&h, good.data(), sizeof h);
  patch(flipped, h.sections[kmer::kSectionSecondLevel].offset + 8, "\x01\x02", 2);
  const kmer::Database db = kmer::Database::open(flipped);
  try {
    db.verify();
    ADD_FAILURE() << "verify() missed a corrupt section";
  } catch (const kmer::Error& err) {
    EXPECT_NE(std::string(err.what()).find("second-level"), std::string::npos) << err.what();
  }
}

std::string build_error(const kmer_test::SmallReference& ref, const std::string& list_text) {
  auto o = ref.options(18, IndexKind::two_level, "never.db");
  o.genome_list = ref.dir.write("bad.tsv", list_text);
  try {
    kmer::build_database(o);
  } catch (const kmer::Error& e) {
    EXPECT_FALSE(std::ifstream(o.out).good()) << "a DB was written despite the error";
    return e.what();
  }
  return "";
}

size_t entries_in(const std::string& dir) {
  size_t n = 0;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.' || std::string(e->d_name).rfind(".kmer", 0) == 0;
  closedir(d);
  return n;
}

TEST(BadGenomeList, MissingFileUnknownTaxidMalformed) {
  kmer_test::SmallReference ref;
  const size_t before = entries_in(ref.dir.path());
  std::string e = build_error(ref, "g1.fa\t1002\nnope.fa\t100\n");
  EXPECT_NE(e.find("bad.tsv:2"), std::string::npos) << e;
  EXPECT_NE(e.find("nope.fa"), std::string::npos) << e;
  e = build_error(ref, "g1.fa\t1002\ng2.fa\t555\n");
  EXPECT_NE(e.find("bad.tsv:2: taxid 555 is not in the taxonomy"), std::string::npos) << e;
  e = build_error(ref, "g1.fa 1002\n");
  EXPECT_NE(e.find("bad.tsv:1"), std::string::npos) << e;
  e = build_error(ref, "g1.fa\tabc\n");
  EXPECT_NE(e.find("bad.tsv:1: taxid 'abc'"), std::string::npos) << e;
  // A genome that is not FASTA fails while scanning, naming the genome file.
  ref.dir.write("notfasta.fa", "hello\n");
  e = build_error(ref, "notfasta.fa\t100\n");
  EXPECT_NE(e.find("notfasta.fa:1"), std::string::npos) << e;
  // Nothing left behind but the inputs written by the test.
  EXPECT_EQ(entries_in(ref.dir.path()), before + 2);  // bad.tsv, notfasta.fa
}

}  // namespace
