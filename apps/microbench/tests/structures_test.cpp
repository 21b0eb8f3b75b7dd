// The micro-benchmark structures on every placement: built into real files, mapped back
// read-only (at another address), queried by several threads, and compared answer by answer
// with std:: containers; damaged files are refused or caught.
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

#include "microbench/keys.hpp"
#include "microbench/lookup.hpp"
#include "microbench/random_access.hpp"
#include "microbench/structure_file.hpp"

namespace {

using microbench::Structure;

using dimmap::testing::TempDir;

dimmap::Placement placement_named(const std::string& name, const std::string& dir, uint64_t buffer) {
  if (name == "memory") return dimmap::Placement::memory("/dev/shm");
  if (name == "mmap") return dimmap::Placement::mmap(dir);
  return dimmap::Placement::dimmap(dir, dimmap::Buffer::create(buffer));
}

std::string build(const TempDir& dir, Structure s, uint64_t bytes, uint64_t seed = 3) {
  microbench::BuildOptions opt;
  opt.structure = s;
  opt.bytes = bytes;
  opt.seed = seed;
  opt.path = dir.path() + "/" + microbench::to_string(s) + ".bin";
  opt.placement = dimmap::Placement::mmap(dir.path());
  const microbench::BuildReport r = microbench::build_structure_file(opt);
  EXPECT_GT(r.entries, 1000u);
  EXPECT_EQ(r.bytes, bytes);
  return opt.path;
}

class EveryStructureAndPlacement : public testing::TestWithParam<std::tuple<Structure, std::string>> {};

TEST_P(EveryStructureAndPlacement, AnswersMatchAStdContainerWithAnyThreadCount) {
  const auto [structure, placement] = GetParam();
  TempDir dir;
  const std::string path = build(dir, structure, 4 << 20);
  // A buffer three quarters of the file: the dimmap runs evict and re-read as they go.
  const microbench::StructureFile f =
      microbench::StructureFile::open(placement_named(placement, dir.path(), 3 << 20), path);
  EXPECT_EQ(f.structure(), structure);

  const microbench::VerifyResult v = microbench::verify_against_std(f, 4000, 11);
  EXPECT_EQ(v.checked, 4000u);
  EXPECT_EQ(v.mismatches, 0u) << v.first_mismatch;

  microbench::LookupResult first;
  for (unsigned threads : {1u, 3u, 8u}) {
    const microbench::LookupResult r = microbench::run_lookups(f, {6000, threads, 11});
    EXPECT_EQ(r.queries, 6000u);
    EXPECT_EQ(r.wrong, 0u) << threads << " threads";
    EXPECT_GT(r.found, 2500u);  // about half the queries hit
    EXPECT_LT(r.found, 3500u);
    EXPECT_GT(r.seconds, 0);
    if (threads == 1) first = r;
    EXPECT_EQ(r.found, first.found) << "the answers must not depend on the thread count";
    EXPECT_EQ(r.checksum, first.checksum);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, EveryStructureAndPlacement,
    testing::Combine(testing::Values(Structure::sorted_vector, Structure::ordered_map, Structure::unordered_map),
                     testing::Values("memory", "mmap", "dimmap")),
    [](const testing::TestParamInfo<std::tuple<Structure, std::string>>& i) {
      std::string s = microbench::to_string(std::get<0>(i.param));
      for (char& c : s)
        if (c == '-') c = '_';
      return s + "_" + std::get<1>(i.param);
    });

TEST(StructureFile, TheSameSeedGivesTheSameAnswersOnEveryPlacement) {
  TempDir dir;
  const std::string path = build(dir, Structure::unordered_map, 2 << 20);
  uint64_t checksum = 0;
  for (const char* p : {"memory", "mmap", "dimmap"}) {
    const auto f = microbench::StructureFile::open(placement_named(p, dir.path(), 1 << 20), path);
    const auto r = microbench::run_lookups(f, {10000, 2, 5});
    if (checksum == 0) checksum = r.checksum;
    EXPECT_EQ(r.checksum, checksum) << p;
  }
}

TEST(StructureFile, ATimeLimitStopsTheRunEarlyWithCorrectAnswers) {
  TempDir dir;
  const std::string path = build(dir, Structure::ordered_map, 2 << 20);
  const auto f = microbench::StructureFile::open(dimmap::Placement::mmap(dir.path()), path);
  const uint64_t asked = 1ull << 40;  // far more than 0.2 s allow
  const microbench::LookupResult r = microbench::run_lookups(f, {asked, 4, 3, 0.2});
  EXPECT_GT(r.queries, 0u);
  EXPECT_LT(r.queries, asked);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_LT(r.seconds, 10.0);
}

TEST(StructureFile, AChangedValueIsCaughtByTheKernelAndTheVerifier) {
  TempDir dir;
  const std::string path = build(dir, Structure::sorted_vector, 1 << 20);
  uint64_t entries = 0;
  {
    const auto f = microbench::StructureFile::open(dimmap::Placement::mmap(dir.path()), path);
    entries = f.entries();
  }
  // Overwrite the value of every 16th entry (a sorted vector is a plain array after the header).
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    for (uint64_t i = 0; i < entries; i += 16) {
      io.seekp(static_cast<std::streamoff>(microbench::kHeaderBytes + i * sizeof(microbench::Entry) + 8));
      const uint64_t junk = 12345;
      io.write(reinterpret_cast<const char*>(&junk), sizeof junk);
    }
  }
  const auto f = microbench::StructureFile::open(dimmap::Placement::mmap(dir.path()), path);
  EXPECT_GT(microbench::run_lookups(f, {20000, 2, 1}).wrong, 0u);
  const microbench::VerifyResult v = microbench::verify_against_std(f, 20000, 1);
  EXPECT_GT(v.mismatches, 0u);
  EXPECT_NE(v.first_mismatch.find("file says 12345"), std::string::npos) << v.first_mismatch;
}

void expect_open_fails(const std::string& path, const std::string& message) {
  try {
    microbench::StructureFile::open(dimmap::Placement::mmap("."), path);
    ADD_FAILURE() << "opened " << path;
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << "the message names the file: " << e.what();
  }
}

TEST(StructureFile, DamagedFilesAreRefusedByName) {
  TempDir dir;
  const std::string good = build(dir, Structure::sorted_vector, 1 << 20);
  auto damaged = [&](const std::string& name, auto&& change) {
    const std::string p = dir.path() + "/" + name;
    std::system(("cp '" + good + "' '" + p + "'").c_str());
    change(p);
    return p;
  };
  auto poke = [](const std::string& p, std::streamoff off, const std::string& bytes) {
    std::fstream io(p, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(off);
    io.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  expect_open_fails(damaged("magic", [&](const std::string& p) { poke(p, 0, "NOTBENCH"); }), "bad magic");
  expect_open_fails(damaged("version", [&](const std::string& p) { poke(p, 8, std::string("\x09\0\0\0", 4)); }),
                    "version");
  expect_open_fails(damaged("entries", [&](const std::string& p) { poke(p, 16, "\xff\xff"); }), "corrupt header");
  expect_open_fails(damaged("short", [&](const std::string& p) { truncate(p.c_str(), 1 << 19); }), "truncated");
  expect_open_fails(damaged("tiny", [&](const std::string& p) { truncate(p.c_str(), 100); }), "too short");
  {
    std::ofstream(dir.path() + "/text") << "just some text\n";
  }
  expect_open_fails(dir.path() + "/text", "too short");
}

TEST(StructureFile, BadBuildsFailClearlyAndLeaveNothingBehind) {
  TempDir dir;
  microbench::BuildOptions opt;
  opt.structure = Structure::ordered_map;
  opt.bytes = 4096;
  opt.path = dir.path() + "/small.bin";
  opt.placement = dimmap::Placement::mmap(dir.path());
  EXPECT_THROW(microbench::build_structure_file(opt), dimmap::Error);
  opt.bytes = 1 << 20;
  opt.path = dir.path() + "/no/such/dir/file.bin";
  try {
    microbench::build_structure_file(opt);
    ADD_FAILURE() << "built into a missing directory";
  } catch (const dimmap::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rmdir(dir.path().c_str()), 0) << "nothing (no partial file) may be left behind";
  mkdir(dir.path().c_str(), 0755);
  EXPECT_THROW(microbench::parse_structure("b-tree"), dimmap::Error);
}

TEST(RandomAccess, UpdatesAreVerifiedAndFirstTouchFaults) {
  microbench::RandomAccessOptions opt;
  opt.bytes = 16 << 20;
  opt.updates = 200000;
  opt.threads = 3;
  const microbench::RandomAccessResult r = microbench::run_random_access(opt);
  EXPECT_TRUE(r.verified);
  // Plain malloc: demand paging, at least one fault per 2 MiB (THP) and usually per 4 KiB.
  EXPECT_GE(r.minor_faults_init, 8);
  EXPECT_GT(r.total_seconds, 0);
}

}  // namespace
