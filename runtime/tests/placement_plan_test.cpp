// The placement vocabulary: presets and overrides -> placements, flags over DIMMAP_* variables
// over defaults, errors naming the flag or variable, aliases, %r, the shared buffer.
#include <dimmap/cli.hpp>
#include <dimmap/placement_plan.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace dimmap {
namespace {

// Sets variables for one test and restores them after.
class Env {
 public:
  ~Env() {
    for (const auto& name : names_) ::unsetenv(name.c_str());
  }
  void set(const std::string& name, const std::string& value) {
    names_.push_back(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::string> names_;
};

class PlacementPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"DIMMAP_PLACEMENT", "DIMMAP_BACKEND", "DIMMAP_BUFFER", "DIMMAP_HOT_FRACTION", "DIMMAP_STORAGE",
                          "DIMMAP_MEMORY_DIR", "DIMMAP_DONTNEED_INTERVAL"})
      ::unsetenv(v);
  }
  // Two structures as in an application: "graph" (read-only data) and "scratch" (read-write,
  // kept in memory by semi-external).
  PlacementPlan plan{{{"graph"}, {"scratch", /*memory_when_semi_external=*/true, /*read_only=*/false}},
                     Preset::in_memory};
  Env env;

  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(PlacementPlanTest, PresetsPlaceEachStructure) {
  EXPECT_EQ(plan.placement_of("graph").backend, Backend::memory);
  EXPECT_EQ(plan.placement_of("scratch").backend, Backend::memory);
  plan.settings().placement = "semi-external";
  plan.validate();
  EXPECT_EQ(plan.placement_of("graph").backend, Backend::mmap);
  EXPECT_EQ(plan.placement_of("scratch").backend, Backend::memory);
  plan.settings().placement = "full-external";
  plan.validate();
  EXPECT_EQ(plan.placement_of("scratch").backend, Backend::mmap);
  plan.settings().place["graph"] = "memory";
  plan.validate();
  EXPECT_EQ(plan.placement_of("graph").backend, Backend::memory);
  EXPECT_NE(error_of([&] { plan.placement_of("nothing"); }).find("'nothing'"), std::string::npos);
}

TEST_F(PlacementPlanTest, FlagOverVariableOverDefault) {
  plan.settings().placement = "full-external";
  EXPECT_EQ(plan.backend(), Backend::mmap);  // default
  env.set("DIMMAP_BACKEND", "dimmap");
  plan.validate();
  EXPECT_EQ(plan.backend(), Backend::dimmap);  // variable
  plan.settings().backend = "mmap";
  plan.validate();
  EXPECT_EQ(plan.backend(), Backend::mmap);  // flag

  env.set("DIMMAP_STORAGE", "/var/tmp");
  plan.validate();
  EXPECT_EQ(plan.storage_dir(), "/var/tmp");
  EXPECT_TRUE(plan.storage_given());
  plan.settings().storage = "/srv";
  plan.validate();
  EXPECT_EQ(plan.placement_of("graph").dir, "/srv");

  env.set("DIMMAP_BUFFER", "12M");
  EXPECT_EQ(plan.buffer_bytes(), 12u << 20);
}

TEST_F(PlacementPlanTest, FlagBufferWins) {
  env.set("DIMMAP_BUFFER", "12M");
  plan.settings().buffer = "8M";
  EXPECT_EQ(plan.buffer_bytes(), 8u << 20);
}

TEST_F(PlacementPlanTest, BadValuesNameTheirSource) {
  plan.settings().buffer = "12Q";
  EXPECT_NE(error_of([&] { plan.validate(); }).find("--buffer"), std::string::npos);
  plan.settings().buffer.clear();
  env.set("DIMMAP_BUFFER", "lots");
  EXPECT_NE(error_of([&] { plan.validate(); }).find("DIMMAP_BUFFER"), std::string::npos);
  plan.settings().buffer = "8M";  // the flag hides the bad variable
  EXPECT_EQ(error_of([&] { plan.validate(); }), "");
  env.set("DIMMAP_HOT_FRACTION", "1.5");
  EXPECT_NE(error_of([&] { plan.validate(); }).find("DIMMAP_HOT_FRACTION: '1.5'"), std::string::npos);
  plan.settings().hot_fraction = "0.5";
  EXPECT_EQ(error_of([&] { plan.validate(); }), "");
  EXPECT_DOUBLE_EQ(plan.hot_fraction(), 0.5);
  plan.settings().place["scratch"] = "tape";
  EXPECT_NE(error_of([&] { plan.validate(); }).find("--place-scratch: 'tape'"), std::string::npos);
  plan.settings().place.clear();
  plan.settings().place["nothing"] = "memory";
  EXPECT_NE(error_of([&] { plan.validate(); }).find("--place-nothing"), std::string::npos);
}

TEST_F(PlacementPlanTest, AliasesKeepOldSpellings) {
  plan.settings().placement = "dimmap";
  plan.validate();
  EXPECT_EQ(plan.preset(), Preset::full_external);
  EXPECT_EQ(plan.backend(), Backend::dimmap);
  plan.settings().placement = "memory";
  plan.validate();
  EXPECT_EQ(plan.preset(), Preset::in_memory);
  plan.settings().placement = "external";
  plan.validate();
  EXPECT_EQ(plan.preset(), Preset::full_external);
  plan.settings().placement = "mmap";
  plan.settings().backend = "dimmap";
  const std::string e = error_of([&] { plan.validate(); });
  EXPECT_NE(e.find("--placement=mmap"), std::string::npos) << e;
  EXPECT_NE(e.find("--backend=dimmap"), std::string::npos) << e;
}

TEST_F(PlacementPlanTest, MemoryDirAndRank) {
  plan.settings().memory_dir = "anonymous";
  EXPECT_EQ(plan.placement_of("graph").dir, "");
  plan.settings().memory_dir = "/dev/shm/r%r";
  plan.settings().storage = "/data/%r/x";
  plan.settings().placement = "semi-external";
  plan.set_rank(3);
  EXPECT_EQ(plan.placement_of("scratch").dir, "/dev/shm/r3");
  EXPECT_EQ(plan.placement_of("graph").dir, "/data/3/x");
}

TEST_F(PlacementPlanTest, DontneedOnlyOnReadOnlyStructures) {
  plan.settings().placement = "full-external";
  plan.settings().dontneed_interval = "5";
  EXPECT_EQ(plan.placement_of("graph").dontneed_interval_s, 5u);
  EXPECT_EQ(plan.placement_of("scratch").dontneed_interval_s, 0u);
  plan.settings().dontneed_interval = "soon";
  EXPECT_NE(error_of([&] { plan.validate(); }).find("--dontneed-interval"), std::string::npos);
}

TEST_F(PlacementPlanTest, OneSharedBufferUntilReleased) {
  plan.settings().placement = "full-external";
  plan.settings().backend = "dimmap";
  plan.settings().buffer = "4M";
  const Placement a = plan.placement_of("graph");
  const Placement b = plan.placement_of("scratch");
  ASSERT_TRUE(a.buffer);
  EXPECT_EQ(a.buffer, b.buffer);
  EXPECT_EQ(a.buffer->config().buffer_bytes, 4u << 20);
  plan.release_buffer();
  const Placement c = plan.placement_of("graph");
  EXPECT_NE(c.buffer, a.buffer);
}

TEST_F(PlacementPlanTest, CommandLineChecksAndValidatesAfterParsing) {
  CLI::App app{"test", "tool"};
  cli::add_placement_options(app, plan);
  EXPECT_THROW(app.parse(std::vector<std::string>{"--backend=tape"}), CLI::ValidationError);
  EXPECT_THROW(app.parse(std::vector<std::string>{"--place-scratch=tape"}), CLI::ValidationError);
  app.clear();
  env.set("DIMMAP_PLACEMENT", "sideways");
  try {
    app.parse(std::vector<std::string>{});
    FAIL() << "a bad DIMMAP_PLACEMENT was accepted";
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("DIMMAP_PLACEMENT"), std::string::npos) << e.what();
  }
  app.clear();
  app.parse(std::vector<std::string>{"", "--memory-dir", "--placement=semi-external"});  // reversed argv
  EXPECT_EQ(plan.settings().placement, "semi-external");
  EXPECT_EQ(plan.preset(), Preset::semi_external);
  EXPECT_EQ(plan.memory_dir(), "");
}

}  // namespace
}  // namespace dimmap
