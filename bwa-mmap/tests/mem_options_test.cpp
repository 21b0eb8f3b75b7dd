// mem_options_test.cpp - bwa mem's option rules, checked against bwa mem's documented
// behaviour (its usage text and man page), not against our own code.
#include <bwammap/mem_options.hpp>
#include <dimmap/command_line.hpp>
#include <dimmap/placement.hpp>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace bwammap {
namespace {

MemOptions parse(std::initializer_list<std::string> args) {
  CLI::App app;
  app.set_help_flag("--help");
  MemCli cli;
  cli.add_to(app);
  std::vector<std::string> v(args);
  v.push_back("idx");
  v.push_back("r1.fq");
  std::vector<std::string> reversed(v.rbegin(), v.rend());
  app.parse(reversed);
  return cli.resolve();
}

TEST(MemOptions, DefaultsAreBwaMems) {
  MemOptions m = parse({});
  const mem_opt_t& o = *m.opt;
  EXPECT_EQ(o.min_seed_len, 19);
  EXPECT_EQ(o.w, 100);
  EXPECT_EQ(o.zdrop, 100);
  EXPECT_FLOAT_EQ(o.split_factor, 1.5f);
  EXPECT_EQ(o.max_occ, 500);
  EXPECT_EQ(o.a, 1);
  EXPECT_EQ(o.b, 4);
  EXPECT_EQ(o.o_del, 6);
  EXPECT_EQ(o.o_ins, 6);
  EXPECT_EQ(o.e_del, 1);
  EXPECT_EQ(o.e_ins, 1);
  EXPECT_EQ(o.pen_clip5, 5);
  EXPECT_EQ(o.pen_clip3, 5);
  EXPECT_EQ(o.pen_unpaired, 17);
  EXPECT_EQ(o.T, 30);
  EXPECT_EQ(o.max_XA_hits, 5);
  EXPECT_EQ(o.max_XA_hits_alt, 200);
  EXPECT_EQ(o.n_threads, 1);
  EXPECT_EQ(o.mat[0], 1);   // match
  EXPECT_EQ(o.mat[1], -4);  // mismatch
  EXPECT_EQ(m.fixed_chunk_size, -1);
  EXPECT_FALSE(m.fixed_insert_size);
  EXPECT_EQ(m.index_prefix, "idx");
  EXPECT_EQ(m.reads1, "r1.fq");
  EXPECT_TRUE(m.reads2.empty());
}

TEST(MemOptions, MatchScoreScalesTheOthersUnlessGiven) {
  MemOptions m = parse({"-A", "2"});
  const mem_opt_t& o = *m.opt;
  EXPECT_EQ(o.a, 2);
  EXPECT_EQ(o.b, 8);
  EXPECT_EQ(o.T, 60);
  EXPECT_EQ(o.o_del, 12);
  EXPECT_EQ(o.o_ins, 12);
  EXPECT_EQ(o.e_del, 2);
  EXPECT_EQ(o.zdrop, 200);
  EXPECT_EQ(o.pen_clip5, 10);
  EXPECT_EQ(o.pen_unpaired, 34);
  EXPECT_EQ(o.mat[0], 2);
  EXPECT_EQ(o.mat[1], -8);

  MemOptions n = parse({"-A2", "-B", "3", "-O", "5,7", "-L", "4"});
  EXPECT_EQ(n.opt->b, 3);
  EXPECT_EQ(n.opt->o_del, 5);
  EXPECT_EQ(n.opt->o_ins, 7);
  EXPECT_EQ(n.opt->e_del, 2);  // not given: scaled
  EXPECT_EQ(n.opt->pen_clip5, 4);
  EXPECT_EQ(n.opt->pen_clip3, 4);
}

TEST(MemOptions, ReadTypePresetsFillOnlyWhatIsNotGiven) {
  // pacbio: -k17 -W40 -r10 -A1 -B1 -O1 -E1 -L0
  MemOptions p = parse({"-x", "pacbio"});
  EXPECT_EQ(p.opt->min_seed_len, 17);
  EXPECT_EQ(p.opt->min_chain_weight, 40);
  EXPECT_FLOAT_EQ(p.opt->split_factor, 10.f);
  EXPECT_EQ(p.opt->b, 1);
  EXPECT_EQ(p.opt->o_del, 1);
  EXPECT_EQ(p.opt->e_ins, 1);
  EXPECT_EQ(p.opt->pen_clip5, 0);
  // ont2d: -k14 -W20 -r10 -A1 -B1 -O1 -E1 -L0, here with -k and -B overridden
  MemOptions o = parse({"-x", "ont2d", "-k", "16", "-B", "2"});
  EXPECT_EQ(o.opt->min_seed_len, 16);
  EXPECT_EQ(o.opt->min_chain_weight, 20);
  EXPECT_EQ(o.opt->b, 2);
  EXPECT_EQ(o.opt->pen_clip3, 0);
  // intractg: -B9 -O16 -L5
  MemOptions i = parse({"-x", "intractg"});
  EXPECT_EQ(i.opt->b, 9);
  EXPECT_EQ(i.opt->o_del, 16);
  EXPECT_EQ(i.opt->o_ins, 16);
  EXPECT_EQ(i.opt->pen_clip5, 5);
  EXPECT_EQ(i.opt->min_seed_len, 19);
}

TEST(MemOptions, PairsAndFlags) {
  MemOptions m = parse({"-h", "3", "-t", "2", "-p", "-a", "-M", "-Y", "-5", "-K", "100000", "-1", "-C", "-j"});
  EXPECT_EQ(m.opt->max_XA_hits, 3);
  EXPECT_EQ(m.opt->max_XA_hits_alt, 3);
  EXPECT_EQ(m.opt->n_threads, 2);
  const int want = MEM_F_PE | MEM_F_SMARTPE | MEM_F_ALL | MEM_F_NO_MULTI | MEM_F_SOFTCLIP | MEM_F_PRIMARY5 |
                   MEM_F_KEEP_SUPP_MAPQ;
  EXPECT_EQ(m.opt->flag & want, want);
  EXPECT_EQ(m.fixed_chunk_size, 100000);
  EXPECT_TRUE(m.no_mt_io);
  EXPECT_TRUE(m.copy_comment);
  EXPECT_TRUE(m.ignore_alt);
  EXPECT_EQ(parse({"-h", "3,7"}).opt->max_XA_hits_alt, 7);
  EXPECT_EQ(parse({"--threads", "3"}).opt->n_threads, 3);
}

TEST(MemOptions, InsertSizeDistribution) {
  // -I mean[,std[,max[,min]]]: std defaults to 10% of the mean, max/min to 4 std around it.
  MemOptions m = parse({"-I", "250"});
  ASSERT_TRUE(m.fixed_insert_size);
  EXPECT_EQ(m.pes[1].failed, 0);
  EXPECT_DOUBLE_EQ(m.pes[1].avg, 250);
  EXPECT_DOUBLE_EQ(m.pes[1].std, 25);
  EXPECT_EQ(m.pes[1].high, 350);
  EXPECT_EQ(m.pes[1].low, 150);
  EXPECT_EQ(m.pes[0].failed, 1);  // only FR orientation is set
  MemOptions n = parse({"-I", "300,20,500,80"});
  EXPECT_DOUBLE_EQ(n.pes[1].std, 20);
  EXPECT_EQ(n.pes[1].high, 500);
  EXPECT_EQ(n.pes[1].low, 80);
}

TEST(MemOptions, HeaderLinesThenReadGroup) {
  MemOptions m = parse({"-R", "@RG\\tID:grp\\tSM:s", "-H", "@CO\\thello"});
  EXPECT_EQ(m.header_lines, "@CO\thello\n@RG\tID:grp\tSM:s");
  testing::TempDir dir;
  testing::write_file(dir.file("hdr.txt"), "@CO\tone\n@CO\ttwo\n");
  EXPECT_EQ(parse({"-H", dir.file("hdr.txt")}).header_lines, "@CO\tone\n@CO\ttwo");
}

TEST(MemOptions, MalformedValuesAreErrors) {
  EXPECT_THROW(parse({"-O", "1,2,3"}), dimmap::cli::UsageError);
  EXPECT_THROW(parse({"-O", "six"}), dimmap::cli::UsageError);
  EXPECT_THROW(parse({"-I", "abc"}), dimmap::cli::UsageError);
  EXPECT_THROW(parse({"-R", "ID:x"}), dimmap::cli::UsageError);
  EXPECT_THROW(parse({"-R", "@RG\\tSM:x"}), dimmap::cli::UsageError);
  EXPECT_THROW(parse({"-H", "/nonexistent/header.txt"}), dimmap::Error);
  EXPECT_THROW(parse({"-x", "nanopore"}), CLI::ValidationError);
  EXPECT_THROW(parse({"-k", "x"}), CLI::ParseError);
  // bwa turns -t 0 or -t -3 into one thread; here they are refused like every tool's bad --threads.
  EXPECT_THROW(parse({"-t", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"-t", "-3"}), CLI::ValidationError);
}

}  // namespace
}  // namespace bwammap
