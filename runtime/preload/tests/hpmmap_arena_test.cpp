// Tests of the HPMMAP arena (dimmap/hpmmap.h): no page faults after creation, huge pages as
// /proc/self/smaps sees them, the allocator against an independent model, bad input.
#include <dimmap/dimmap.h>
#include <dimmap/hpmmap.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "smaps_reader.hpp"

namespace {

constexpr uint64_t kMiB = 1ull << 20;

// AddressSanitizer makes mlock a no-op and touches shadow memory (which faults) on every
// checked access: the fault counts and lock checks mean nothing in that build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

long minor_faults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

bool thp_enabled() {
  const std::string s = read_first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  return !s.empty() && s.find("[never]") == std::string::npos;
}

struct Arena {
  dimmap_hpmmap_arena* a = nullptr;
  Arena(uint64_t bytes, dimmap_hpmmap_pages pages) {
    dimmap_hpmmap_options opt;
    dimmap_hpmmap_options_init(&opt);
    opt.bytes = bytes;
    opt.pages = pages;
    const int rc = dimmap_hpmmap_create(&opt, &a);
    EXPECT_EQ(rc, 0) << dimmap_last_error();
  }
  ~Arena() { dimmap_hpmmap_destroy(a); }
  struct dimmap_hpmmap_stats stats() const {
    struct dimmap_hpmmap_stats s {};
    EXPECT_EQ(dimmap_hpmmap_stats(a, &s), 0);
    return s;
  }
};

TEST(HpmmapArena, ReservesWholeHugePagesAndReportsWhatItGot) {
  Arena arena(5 * kMiB, DIMMAP_HPMMAP_AUTO);  // rounds up to 6 MiB
  ASSERT_NE(arena.a, nullptr);
  const struct dimmap_hpmmap_stats s = arena.stats();
  EXPECT_EQ(s.bytes_reserved, 6 * kMiB);
  EXPECT_NE(s.pages, DIMMAP_HPMMAP_AUTO);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dimmap_hpmmap_base(arena.a)) % (2 * kMiB), 0u);
  EXPECT_EQ(s.largest_free, 6 * kMiB);
  EXPECT_EQ(s.bytes_allocated, 0u);
  EXPECT_GT(s.setup_ns, 0u);
  // Locked and resident: smaps agrees independently.
  const auto m = dimmap::test::smaps_range(dimmap_hpmmap_base(arena.a), s.bytes_reserved);
  if (s.pages == DIMMAP_HPMMAP_HUGETLB) {
    EXPECT_EQ(m.hugetlb_kib, 6 * 1024u);
  } else {
    EXPECT_EQ(m.rss_kib, 6 * 1024u);
    if (s.locked && !kSanitized) {
      EXPECT_EQ(m.locked_kib, 6 * 1024u);
    }
    EXPECT_EQ(m.anon_huge_kib, s.huge_pages * 2048);
  }
}

// The point of HPMMAP: once the arena exists, using its memory takes no page faults.
TEST(HpmmapArena, AllocationsAfterCreationTakeNoPageFaults) {
  if (kSanitized) GTEST_SKIP() << "AddressSanitizer's shadow memory faults on every first access";
  const uint64_t size = 64 * kMiB;
  Arena arena(size, DIMMAP_HPMMAP_AUTO);
  ASSERT_NE(arena.a, nullptr);
  std::vector<char*> blocks;
  const long before = minor_faults();
  for (size_t bytes : {size_t(1 * kMiB), size_t(8 * kMiB), size_t(24 * kMiB), size_t(30 * kMiB)}) {
    char* p = static_cast<char*>(dimmap_hpmmap_alloc(arena.a, bytes, 0));
    ASSERT_NE(p, nullptr) << dimmap_last_error();
    std::memset(p, 0x5a, bytes);
    blocks.push_back(p);
  }
  const long arena_faults = minor_faults() - before;

  // Control: the same amount of ordinary anonymous memory, touched the same way.
  const uint64_t control_len = 63 * kMiB;
  void* control = mmap(nullptr, control_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(control, MAP_FAILED);
  madvise(control, control_len, MADV_NOHUGEPAGE);
  const long before_control = minor_faults();
  std::memset(control, 0x5a, control_len);
  const long control_faults = minor_faults() - before_control;
  munmap(control, control_len);

  EXPECT_LE(arena_faults, 8) << "faults while filling 63 MiB of arena memory";
  EXPECT_GE(control_faults, static_cast<long>(control_len / 4096 / 2)) << "the control should fault per page";
  for (char* p : blocks) EXPECT_EQ(dimmap_hpmmap_free(arena.a, p), 0);
}

TEST(HpmmapArena, TransparentHugePagesShowInSmaps) {
  if (!thp_enabled()) GTEST_SKIP() << "THP is disabled on this kernel";
  Arena arena(32 * kMiB, DIMMAP_HPMMAP_THP);
  ASSERT_NE(arena.a, nullptr);
  const struct dimmap_hpmmap_stats s = arena.stats();
  EXPECT_EQ(s.pages, DIMMAP_HPMMAP_THP);
  const auto m = dimmap::test::smaps_range(dimmap_hpmmap_base(arena.a), s.bytes_reserved);
  EXPECT_EQ(m.anon_huge_kib, s.huge_pages * 2048) << "the arena's count must match smaps";
  // The kernel may be short of free 2 MiB blocks on a busy machine, but not of all of them.
  EXPECT_GT(s.huge_pages, 0u) << "no huge pages at all with THP enabled";
}

// hugetlbfs pages, when the pool can provide them. Raising the surplus allowance needs root;
// it is given back at the end.
TEST(HpmmapArena, HugetlbPagesWhenThePoolHasRoom) {
  const char* path = "/proc/sys/vm/nr_overcommit_hugepages";
  const long old = std::stol("0" + read_first_line(path));
  {
    std::ofstream out(path);
    out << old + 16 << '\n';
    out.flush();
    if (!out) GTEST_SKIP() << "cannot raise " << path << " (not root)";
  }
  {
    Arena arena(16 * kMiB, DIMMAP_HPMMAP_HUGETLB);
    if (arena.a) {
      const struct dimmap_hpmmap_stats s = arena.stats();
      if (s.pages == DIMMAP_HPMMAP_HUGETLB) {
        EXPECT_EQ(s.huge_pages, 8u);
        EXPECT_EQ(dimmap::test::smaps_range(dimmap_hpmmap_base(arena.a), s.bytes_reserved).hugetlb_kib, 16 * 1024u);
        char* p = static_cast<char*>(dimmap_hpmmap_alloc(arena.a, 16 * kMiB, 2 * kMiB));
        ASSERT_NE(p, nullptr);
        const long before = minor_faults();
        std::memset(p, 1, 16 * kMiB);
        if (!kSanitized) {
          EXPECT_LE(minor_faults() - before, 2);
        }
      } else {
        ADD_FAILURE() << "hugetlb pool allowance raised but the arena got " << dimmap_hpmmap_pages_name(s.pages)
                      << " (memory too fragmented for 8 free 2 MiB pages?)";
      }
    }
  }
  const long now = std::stol("0" + read_first_line(path));
  std::ofstream(path) << (now >= old + 16 ? now - 16 : old) << '\n';
}

TEST(HpmmapArena, FallsBackWithAWarningWhenHugetlbPagesAreUnavailable) {
  // Ask for 64 hugetlb pages more than the pool could provide (free pages plus the surplus
  // allowance): the hugetlb attempt must fail, the arena must still come up.
  std::ifstream mi("/proc/meminfo");
  std::string key;
  uint64_t v = 0, free_pages = 0;
  while (mi >> key >> v) {
    if (key == "HugePages_Free:") free_pages = v;
    mi.ignore(256, '\n');
  }
  const long over = std::stol("0" + read_first_line("/proc/sys/vm/nr_overcommit_hugepages"));
  const uint64_t ram = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  dimmap_hpmmap_options opt;
  dimmap_hpmmap_options_init(&opt);
  opt.pages = DIMMAP_HPMMAP_HUGETLB;
  opt.bytes = (free_pages + static_cast<uint64_t>(over) + 64) * 2 * kMiB;  // + 64: beyond what a concurrent test adds
  if (opt.bytes > ram / 8) GTEST_SKIP() << "hugetlb pool too large to exhaust safely";
  testing::internal::CaptureStderr();
  dimmap_hpmmap_arena* a = nullptr;
  ASSERT_EQ(dimmap_hpmmap_create(&opt, &a), 0) << dimmap_last_error();
  const std::string err = testing::internal::GetCapturedStderr();
  struct dimmap_hpmmap_stats s {};
  dimmap_hpmmap_stats(a, &s);
  EXPECT_NE(s.pages, DIMMAP_HPMMAP_HUGETLB);
  EXPECT_NE(err.find("hugetlbfs"), std::string::npos) << "stderr: " << err;
  dimmap_hpmmap_destroy(a);
}

TEST(HpmmapArena, SmallPagesStillPopulatedAndNeverMerged) {
  Arena arena(8 * kMiB, DIMMAP_HPMMAP_SMALL);
  ASSERT_NE(arena.a, nullptr);
  const struct dimmap_hpmmap_stats s = arena.stats();
  EXPECT_EQ(s.pages, DIMMAP_HPMMAP_SMALL);
  EXPECT_EQ(s.huge_pages, 0u);
  const auto m = dimmap::test::smaps_range(dimmap_hpmmap_base(arena.a), s.bytes_reserved);
  EXPECT_EQ(m.rss_kib, 8 * 1024u);
  EXPECT_EQ(m.anon_huge_kib, 0u);
}

// Random allocations and frees against a model of live blocks: in bounds, aligned, never
// overlapping, contents intact, and everything coalesces back at the end.
TEST(HpmmapArena, AllocatorMatchesAModelOfLiveBlocks) {
  const uint64_t size = 32 * kMiB;
  Arena arena(size, DIMMAP_HPMMAP_AUTO);
  ASSERT_NE(arena.a, nullptr);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(dimmap_hpmmap_base(arena.a));
  std::map<uintptr_t, std::pair<size_t, unsigned char>> live;  // start -> (size, fill byte)
  std::mt19937_64 rng(42);
  size_t failures = 0;
  for (int step = 0; step < 20000; ++step) {
    const bool do_alloc = live.empty() || rng() % 100 < 55;
    if (do_alloc) {
      const size_t bytes = 1 + rng() % (rng() % 8 == 0 ? 2 * kMiB : 4096);
      const size_t align = size_t(1) << (rng() % 22);  // 1 B .. 2 MiB
      auto* p = static_cast<unsigned char*>(dimmap_hpmmap_alloc(arena.a, bytes, align));
      if (!p) {
        EXPECT_EQ(errno, ENOMEM);
        failures++;
        continue;
      }
      const uintptr_t a = reinterpret_cast<uintptr_t>(p);
      ASSERT_GE(a, lo);
      ASSERT_LE(a + bytes, lo + size);
      ASSERT_EQ(a % align, 0u) << "alignment " << align;
      ASSERT_GE(dimmap_hpmmap_usable_size(arena.a, p), bytes);
      auto next = live.lower_bound(a);
      if (next != live.end()) {
        ASSERT_LE(a + bytes, next->first) << "overlaps the next live block";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.first, a) << "overlaps the previous live block";
      }
      const unsigned char fill = static_cast<unsigned char>(rng());
      std::memset(p, fill, bytes);
      live[a] = {bytes, fill};
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      const auto* p = reinterpret_cast<const unsigned char*>(it->first);
      for (size_t i = 0; i < it->second.first; i += 97) ASSERT_EQ(p[i], it->second.second) << "block corrupted";
      ASSERT_EQ(p[it->second.first - 1], it->second.second);
      ASSERT_EQ(dimmap_hpmmap_free(arena.a, reinterpret_cast<void*>(it->first)), 0);
      live.erase(it);
    }
  }
  const struct dimmap_hpmmap_stats mid = arena.stats();
  EXPECT_EQ(mid.allocations - mid.frees, live.size());
  EXPECT_EQ(mid.failed_allocations, failures);
  for (auto& [a, info] : live) ASSERT_EQ(dimmap_hpmmap_free(arena.a, reinterpret_cast<void*>(a)), 0);
  const struct dimmap_hpmmap_stats end = arena.stats();
  EXPECT_EQ(end.bytes_allocated, 0u);
  EXPECT_EQ(end.largest_free, size) << "free blocks did not coalesce back into one";
  EXPECT_GT(end.peak_allocated, 0u);
}

TEST(HpmmapArena, ExhaustionFailsCleanlyAndFreedSpaceComesBack) {
  Arena arena(4 * kMiB, DIMMAP_HPMMAP_AUTO);
  ASSERT_NE(arena.a, nullptr);
  void* a = dimmap_hpmmap_alloc(arena.a, kMiB, 0);
  void* b = dimmap_hpmmap_alloc(arena.a, kMiB, 0);
  void* c = dimmap_hpmmap_alloc(arena.a, kMiB, 0);
  ASSERT_TRUE(a && b && c);
  errno = 0;
  EXPECT_EQ(dimmap_hpmmap_alloc(arena.a, 2 * kMiB, 0), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(arena.stats().failed_allocations, 1u);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, b), 0);  // a hole in the middle: 1 MiB + 1 MiB tail
  EXPECT_EQ(dimmap_hpmmap_alloc(arena.a, 2 * kMiB, 0), nullptr);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, c), 0);  // b, c and the tail merge: 3 MiB
  EXPECT_EQ(arena.stats().largest_free, 3 * kMiB);
  void* big = dimmap_hpmmap_alloc(arena.a, 3 * kMiB, 0);
  EXPECT_NE(big, nullptr);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, a), 0);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, big), 0);
  EXPECT_EQ(arena.stats().largest_free, 4 * kMiB);
}

TEST(HpmmapArena, RejectsBadInput) {
  dimmap_hpmmap_options opt;
  dimmap_hpmmap_options_init(&opt);
  dimmap_hpmmap_arena* a = nullptr;
  EXPECT_EQ(dimmap_hpmmap_create(&opt, &a), -EINVAL);  // size 0
  EXPECT_STRNE(dimmap_last_error(), "");
  opt.bytes = ~0ull;
  EXPECT_EQ(dimmap_hpmmap_create(&opt, &a), -EINVAL);  // absurd
  EXPECT_NE(std::string(dimmap_last_error()).find("absurd"), std::string::npos) << dimmap_last_error();

  Arena arena(2 * kMiB, DIMMAP_HPMMAP_SMALL);
  ASSERT_NE(arena.a, nullptr);
  errno = 0;
  EXPECT_EQ(dimmap_hpmmap_alloc(arena.a, 100, 3), nullptr);
  EXPECT_EQ(errno, EINVAL);
  int outside = 0;
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, &outside), -EINVAL);
  EXPECT_FALSE(dimmap_hpmmap_contains(arena.a, &outside));
  char* p = static_cast<char*>(dimmap_hpmmap_alloc(arena.a, 100, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, p + 64), -EINVAL);  // inside, but not a block start
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, p), 0);
  EXPECT_EQ(dimmap_hpmmap_free(arena.a, p), -EINVAL);  // double free
  EXPECT_EQ(dimmap_hpmmap_usable_size(arena.a, p), 0u);

  dimmap_hpmmap_pages kind;
  EXPECT_EQ(dimmap_hpmmap_parse_pages("thp", &kind), 0);
  EXPECT_EQ(kind, DIMMAP_HPMMAP_THP);
  EXPECT_EQ(dimmap_hpmmap_parse_pages("huge", &kind), -EINVAL);
  EXPECT_NE(std::string(dimmap_last_error()).find("huge"), std::string::npos);
}

}  // namespace
