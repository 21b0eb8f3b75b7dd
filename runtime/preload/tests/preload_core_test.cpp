// Unit tests of the preload's parts that interpose nothing: the block table (against
// std::unordered_map), the environment contract, and the backing mappings on real files.
#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <unordered_map>

#include "backing.hpp"
#include "block_table.hpp"
#include "preload_config.hpp"

namespace {

using dimmap::preload::Block;
using dimmap::preload::BlockKind;
using dimmap::preload::BlockTable;

TEST(BlockTable, MatchesAnUnorderedMapUnderRandomInsertsAndRemoves) {
  BlockTable table;
  std::unordered_map<uintptr_t, size_t> model;
  std::mt19937_64 rng(7);
  for (int step = 0; step < 200000; ++step) {
    // Page-aligned keys from a small range, so probe runs collide and wrap often.
    const uintptr_t key = (1 + rng() % 5000) << 12;
    switch (rng() % 3) {
      case 0: {
        Block b;
        b.user = key;
        b.usable = step;
        ASSERT_TRUE(table.insert(b));
        model[key] = static_cast<size_t>(step);
        break;
      }
      case 1: {
        Block b;
        const bool removed = table.remove(key, &b);
        ASSERT_EQ(removed, model.count(key) == 1) << "step " << step;
        if (removed) {
          ASSERT_EQ(b.usable, model[key]);
          model.erase(key);
        }
        break;
      }
      default: {
        Block b;
        const bool found = table.find(key, &b);
        ASSERT_EQ(found, model.count(key) == 1) << "step " << step;
        if (found) {
          ASSERT_EQ(b.usable, model[key]);
        }
      }
    }
    ASSERT_EQ(table.size(), model.size());
  }
  for (const auto& [key, value] : model) {
    Block b;
    ASSERT_TRUE(table.find(key, &b));
    EXPECT_EQ(b.usable, value);
  }
  table.release_storage();
}

TEST(BlockTable, ForEachVisitsEveryBlockAndMayChangeIt) {
  BlockTable table;
  for (uintptr_t k = 1; k <= 3000; ++k) {
    Block b;
    b.user = k << 12;
    b.kind = k % 2 ? BlockKind::dimmap : BlockKind::file;
    ASSERT_TRUE(table.insert(b));
  }
  table.lock_for_fork();
  table.for_each_locked([](Block& b) {
    if (b.kind == BlockKind::dimmap) b.kind = BlockKind::inherited_dimmap;
  });
  table.unlock_after_fork();
  for (uintptr_t k = 1; k <= 3000; ++k) {
    Block out;
    ASSERT_TRUE(table.find(k << 12, &out));
    EXPECT_EQ(out.kind, k % 2 ? BlockKind::inherited_dimmap : BlockKind::file);
  }
  table.release_storage();
}

class Env {
 public:
  explicit Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    clear();
    for (const auto& [name, value] : vars) setenv(name, value, 1);
  }
  ~Env() { clear(); }

 private:
  static void clear() {
    for (const char* name : {"DIMMAP_RUN_PLACEMENT", "DIMMAP_RUN_DIR", "DIMMAP_RUN_MIN_ALLOC", "DIMMAP_RUN_ARENA",
                             "DIMMAP_RUN_HUGE_PAGES", "DIMMAP_RUN_STATS", "DIMMAP_RUN_LEADER", "DIMMAP_RUN_FILES"})
      unsetenv(name);
  }
};

TEST(PreloadConfig, ReadsWhatDimmapRunSets) {
  Env env({{"DIMMAP_RUN_PLACEMENT", "hpmmap"},
           {"DIMMAP_RUN_MIN_ALLOC", "1048576"},
           {"DIMMAP_RUN_ARENA", "67108864"},
           {"DIMMAP_RUN_HUGE_PAGES", "thp"},
           {"DIMMAP_RUN_STATS", "1"},
           {"DIMMAP_RUN_LEADER", "4242"}});
  dimmap::preload::PreloadConfig cfg;
  char err[256] = "";
  ASSERT_TRUE(read_preload_config(&cfg, err, sizeof err)) << err;
  EXPECT_EQ(cfg.placement, dimmap::preload::PlacementKind::hpmmap);
  EXPECT_EQ(cfg.min_alloc, 1u << 20);
  EXPECT_EQ(cfg.arena_bytes, 64u << 20);
  EXPECT_EQ(cfg.huge_pages, DIMMAP_HPMMAP_THP);
  EXPECT_TRUE(cfg.stats);
  EXPECT_EQ(cfg.leader_pid, 4242);
}

TEST(PreloadConfig, UnsetMeansInactive) {
  Env env({});
  dimmap::preload::PreloadConfig cfg;
  char err[256] = "";
  ASSERT_TRUE(read_preload_config(&cfg, err, sizeof err));
  EXPECT_EQ(cfg.placement, dimmap::preload::PlacementKind::none);
}

TEST(PreloadConfig, FilesWithoutAPlacementLeaveTheHeapAlone) {
  Env env({{"DIMMAP_RUN_FILES", "/data/db:/scratch"}});
  dimmap::preload::PreloadConfig cfg;
  char err[256] = "";
  ASSERT_TRUE(read_preload_config(&cfg, err, sizeof err)) << err;
  EXPECT_EQ(cfg.placement, dimmap::preload::PlacementKind::none);
  EXPECT_STREQ(cfg.files, "/data/db:/scratch");
}

TEST(PreloadConfig, PathUnderDirsMatchesWholeComponentsOnly) {
  using dimmap::preload::path_under_dirs;
  const char* dirs = "/data/db:/scratch";
  EXPECT_TRUE(path_under_dirs("/data/db/hash.k2d", dirs));
  EXPECT_TRUE(path_under_dirs("/data/db/sub/dir/f", dirs));
  EXPECT_TRUE(path_under_dirs("/scratch/x", dirs));
  EXPECT_FALSE(path_under_dirs("/data/dbx/hash.k2d", dirs));  // a sibling sharing the prefix
  EXPECT_FALSE(path_under_dirs("/data/db", dirs));            // the directory itself is no file
  EXPECT_FALSE(path_under_dirs("/data/other", dirs));
  EXPECT_FALSE(path_under_dirs("relative/data/db/f", dirs));
  EXPECT_FALSE(path_under_dirs("/data/db/f", ""));
  EXPECT_TRUE(path_under_dirs("/anything", "/"));
}

TEST(PreloadConfig, RejectsMalformedValuesNamingTheVariable) {
  const struct {
    std::initializer_list<std::pair<const char*, const char*>> vars;
    const char* expect;
  } cases[] = {
      {{{"DIMMAP_RUN_PLACEMENT", "disk"}}, "DIMMAP_RUN_PLACEMENT='disk'"},
      {{{"DIMMAP_RUN_PLACEMENT", "mmap"}}, "needs DIMMAP_RUN_DIR"},
      {{{"DIMMAP_RUN_PLACEMENT", "mmap"}, {"DIMMAP_RUN_DIR", "relative/dir"}}, "absolute path"},
      {{{"DIMMAP_RUN_PLACEMENT", "memory"}, {"DIMMAP_RUN_MIN_ALLOC", "64M"}}, "DIMMAP_RUN_MIN_ALLOC='64M'"},
      {{{"DIMMAP_RUN_PLACEMENT", "memory"}, {"DIMMAP_RUN_MIN_ALLOC", "0"}}, "above 0"},
      {{{"DIMMAP_RUN_PLACEMENT", "hpmmap"}}, "needs DIMMAP_RUN_ARENA"},
      {{{"DIMMAP_RUN_PLACEMENT", "hpmmap"}, {"DIMMAP_RUN_ARENA", "1024"}, {"DIMMAP_RUN_HUGE_PAGES", "1G"}},
       "DIMMAP_RUN_HUGE_PAGES='1G'"},
      {{{"DIMMAP_RUN_FILES", "/data:db"}}, "DIMMAP_RUN_FILES='/data:db'"},
  };
  for (const auto& c : cases) {
    Env env(c.vars);
    dimmap::preload::PreloadConfig cfg;
    char err[256] = "";
    EXPECT_FALSE(read_preload_config(&cfg, err, sizeof err)) << c.expect;
    EXPECT_NE(std::string(err).find(c.expect), std::string::npos) << err;
  }
}

TEST(Backing, FileBlocksAreAlignedZeroFilledAndLeaveNoFileBehind) {
  const dimmap::testing::TempDir dir("backing");
  for (size_t align : {size_t(4096), size_t(1) << 21}) {
    Block b;
    char err[256] = "";
    ASSERT_EQ(dimmap::preload::map_block(BlockKind::file, dir.path().c_str(), nullptr, 3 << 20, align, &b, err, sizeof err), 0) << err;
    EXPECT_EQ(b.user % align, 0u);
    EXPECT_GE(b.usable, 3u << 20);
    EXPECT_LE(b.user + b.usable, b.base + b.map_len);
    const char* p = reinterpret_cast<const char*>(b.user);
    for (size_t i = 0; i < (3u << 20); i += 4096) ASSERT_EQ(p[i], 0);
    std::memset(reinterpret_cast<void*>(b.user), 0xab, 3 << 20);
    EXPECT_EQ(dimmap::preload::unmap_block(b, err, sizeof err), 0) << err;
  }
  EXPECT_TRUE(dir.entries().empty()) << "the directory must be empty: backing files are unnamed";
}

TEST(Backing, ADirectoryThatDoesNotExistIsNamedInTheError) {
  Block b;
  char err[256] = "";
  EXPECT_EQ(dimmap::preload::map_block(BlockKind::file, "/nonexistent/dir", nullptr, 1 << 20, 4096, &b, err, sizeof err),
            ENOENT);
  EXPECT_NE(std::string(err).find("'/nonexistent/dir'"), std::string::npos) << err;
}

}  // namespace
