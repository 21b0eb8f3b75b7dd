// hpmmap_arena.cpp - an HPMMAP-style arena: large pages, populated and locked at creation,
// then handed out by a best-fit allocator so later accesses take no page faults.
//
// Two parts: reserve() gets the memory (hugetlbfs, THP, or small pages, in that order of
// preference) and measures what the kernel really gave from /proc/self/smaps; BestFit
// manages offsets inside it. See dimmap/hpmmap.h for the contract.
#include <dimmap/dimmap.h>
#include <dimmap/hpmmap.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include "c_boundary.hpp"
#include "log.hpp"

using dimmap::detail::fail;
using dimmap::detail::LogLevel;

namespace {

constexpr size_t kHugePage = 2u << 20;
constexpr size_t kGranule = 64;  // allocation unit: one cache line

// Debian 12's headers predate these (Linux 5.14 and 6.1); the running kernel is newer.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Huge pages (2 MiB) backing [base, base + size) according to /proc/self/smaps:
// AnonHugePages for THP, Private_/Shared_Hugetlb for hugetlbfs.
uint64_t huge_pages_in(const void* base, size_t size) {
  FILE* f = std::fopen("/proc/self/smaps", "re");
  if (!f) return 0;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(base), hi = lo + size;
  bool inside = false;
  uint64_t kb = 0;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    uintptr_t start = 0, end = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {  // a mapping's first line
      inside = start < hi && end > lo;
      continue;
    }
    if (!inside) continue;
    unsigned long long v = 0;
    if (std::sscanf(line, "AnonHugePages: %llu kB", &v) == 1 || std::sscanf(line, "Private_Hugetlb: %llu kB", &v) == 1 ||
        std::sscanf(line, "Shared_Hugetlb: %llu kB", &v) == 1)
      kb += v;
  }
  std::fclose(f);
  return kb * 1024 / kHugePage;
}

// Touches every page of [p, p + size) for writing, in the kernel if it can.
void populate(char* p, size_t size) {
  if (madvise(p, size, MADV_POPULATE_WRITE) == 0) return;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t off = 0; off < size; off += page) reinterpret_cast<volatile char*>(p)[off] = 0;
}

struct Reservation {
  char* base = nullptr;
  size_t size = 0;
  dimmap_hpmmap_pages pages = DIMMAP_HPMMAP_SMALL;
};

bool reserve_hugetlb(size_t size, Reservation* out) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) return false;
  *out = Reservation{static_cast<char*>(p), size, DIMMAP_HPMMAP_HUGETLB};
  return true;
}

// Anonymous memory aligned to 2 MiB, populated now. With THP each 2 MiB block becomes a
// huge page if the kernel has one free (or can collapse it now); afterwards the area is
// marked MADV_NOHUGEPAGE either way, so khugepaged never merges pages in it later.
bool reserve_anonymous(size_t size, bool thp, Reservation* out) {
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return false;
  char* base = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(raw), kHugePage));
  const size_t head = static_cast<size_t>(base - static_cast<char*>(raw));
  if (head) munmap(raw, head);
  if (kHugePage - head) munmap(base + size, kHugePage - head);
  if (thp) madvise(base, size, MADV_HUGEPAGE);
  else madvise(base, size, MADV_NOHUGEPAGE);
  populate(base, size);
  if (thp && huge_pages_in(base, size) < size / kHugePage) madvise(base, size, MADV_COLLAPSE);
  if (thp) madvise(base, size, MADV_NOHUGEPAGE);
  *out = Reservation{base, size, thp ? DIMMAP_HPMMAP_THP : DIMMAP_HPMMAP_SMALL};
  return true;
}

bool thp_available() {
  FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
  if (!f) return false;
  char buf[128] = "";
  const bool ok = std::fgets(buf, sizeof buf, f) && !std::strstr(buf, "[never]");
  std::fclose(f);
  return ok;
}

// Free extents ordered by offset (for coalescing) and by length (for best fit); live
// allocations by offset. All offsets and lengths are multiples of kGranule.
class BestFit {
 public:
  explicit BestFit(size_t size) { insert_free(0, size); }

  // Offset of a new block of len bytes whose address (base + offset) is align-aligned.
  bool alloc(uintptr_t base, size_t len, size_t align, size_t* out) {
    for (auto it = by_len_.lower_bound({len, 0}); it != by_len_.end(); ++it) {
      const size_t start = it->second, end = start + it->first;
      const size_t p = round_up(base + start, align) - base;
      if (p + len > end) continue;  // long enough, but not once aligned
      erase_free(start, end - start);
      if (p > start) insert_free(start, p - start);
      if (p + len < end) insert_free(p + len, end - p - len);
      live_.emplace(p, len);
      *out = p;
      return true;
    }
    return false;
  }

  // Length of the freed block, 0 if off is not a live allocation.
  size_t free(size_t off) {
    auto it = live_.find(off);
    if (it == live_.end()) return 0;
    const size_t freed = it->second;
    size_t start = off, len = freed;
    live_.erase(it);
    auto next = by_off_.find(start + len);
    if (next != by_off_.end()) {
      len += next->second;
      erase_free(next->first, next->second);
    }
    auto prev = by_off_.lower_bound(start);
    if (prev != by_off_.begin() && (--prev)->first + prev->second == start) {
      start = prev->first;
      len += prev->second;
      erase_free(prev->first, prev->second);
    }
    insert_free(start, len);
    return freed;
  }

  size_t usable(size_t off) const {
    auto it = live_.find(off);
    return it == live_.end() ? 0 : it->second;
  }
  size_t largest_free() const { return by_len_.empty() ? 0 : by_len_.rbegin()->first; }

 private:
  void insert_free(size_t off, size_t len) {
    by_off_.emplace(off, len);
    by_len_.emplace(len, off);
  }
  void erase_free(size_t off, size_t len) {
    by_off_.erase(off);
    by_len_.erase({len, off});
  }

  std::map<size_t, size_t> by_off_;
  std::set<std::pair<size_t, size_t>> by_len_;
  std::unordered_map<size_t, size_t> live_;
};

// Every live arena, so fork() can take all their locks (a child must not inherit a lock
// held by a thread that does not exist there).
std::mutex g_arenas_mu;
std::set<dimmap_hpmmap_arena*> g_arenas;
std::once_flag g_atfork_once;

}  // namespace

struct dimmap_hpmmap_arena {
  Reservation mem;
  struct dimmap_hpmmap_stats st {};
  std::mutex mu;
  BestFit fit;
  explicit dimmap_hpmmap_arena(const Reservation& r) : mem(r), fit(r.size) {}
};

namespace {

void atfork_prepare() {
  g_arenas_mu.lock();
  for (dimmap_hpmmap_arena* a : g_arenas) a->mu.lock();
}
void atfork_release() {
  for (dimmap_hpmmap_arena* a : g_arenas) a->mu.unlock();
  g_arenas_mu.unlock();
}

const char* kind_name(dimmap_hpmmap_pages p) { return dimmap_hpmmap_pages_name(p); }

}  // namespace

extern "C" void dimmap_hpmmap_options_init(struct dimmap_hpmmap_options* opt) {
  dimmap::detail::guard_void("dimmap_hpmmap_options_init", [&] {
    std::memset(opt, 0, sizeof *opt);
    opt->pages = DIMMAP_HPMMAP_AUTO;
    opt->lock = 1;
  });
}

extern "C" const char* dimmap_hpmmap_pages_name(enum dimmap_hpmmap_pages pages) {
  switch (pages) {
    case DIMMAP_HPMMAP_AUTO: return "auto";
    case DIMMAP_HPMMAP_HUGETLB: return "hugetlb";
    case DIMMAP_HPMMAP_THP: return "thp";
    case DIMMAP_HPMMAP_SMALL: return "small";
  }
  return "?";
}

extern "C" int dimmap_hpmmap_parse_pages(const char* text, enum dimmap_hpmmap_pages* out) {
  return dimmap::detail::guard_status("dimmap_hpmmap_parse_pages", [&]() -> int {
    static const struct {
      const char* name;
      dimmap_hpmmap_pages pages;
    } names[] = {{"auto", DIMMAP_HPMMAP_AUTO}, {"hugetlb", DIMMAP_HPMMAP_HUGETLB}, {"thp", DIMMAP_HPMMAP_THP},
                 {"small", DIMMAP_HPMMAP_SMALL}, {"none", DIMMAP_HPMMAP_SMALL}};
    for (const auto& n : names) {
      if (text && !std::strcmp(text, n.name)) {
        *out = n.pages;
        return 0;
      }
    }
    return fail(EINVAL, "unknown huge-page kind '%s' (expected auto, hugetlb, thp or small)", text ? text : "");
  });
}

extern "C" int dimmap_hpmmap_create(const struct dimmap_hpmmap_options* opt, struct dimmap_hpmmap_arena** out) {
  return dimmap::detail::guard_status("dimmap_hpmmap_create", [&]() -> int {
    dimmap::detail::clear_error();
    if (!opt || !out) return fail(EINVAL, "dimmap_hpmmap_create: null argument");
    if (opt->bytes == 0) return fail(EINVAL, "an HPMMAP arena needs a size above 0");
    if (opt->bytes > (SIZE_MAX >> 2)) return fail(EINVAL, "an HPMMAP arena of %" PRIu64 " bytes is absurd", opt->bytes);
    if (opt->pages < DIMMAP_HPMMAP_AUTO || opt->pages > DIMMAP_HPMMAP_SMALL)
      return fail(EINVAL, "unknown huge-page kind %d", static_cast<int>(opt->pages));
    const size_t size = round_up(opt->bytes, kHugePage);
    const uint64_t t0 = now_ns();

    Reservation r;
    bool ok = false;
    const dimmap_hpmmap_pages want = opt->pages;
    if (want == DIMMAP_HPMMAP_AUTO || want == DIMMAP_HPMMAP_HUGETLB) {
      ok = reserve_hugetlb(size, &r);
      if (!ok && want == DIMMAP_HPMMAP_HUGETLB)
        dimmap::detail::log(LogLevel::warn,
                            "hpmmap: no %zu hugetlbfs pages free (%s; see /proc/sys/vm/nr_hugepages): trying THP",
                            size / kHugePage, std::strerror(errno));
    }
    if (!ok && want != DIMMAP_HPMMAP_SMALL && thp_available()) ok = reserve_anonymous(size, true, &r);
    if (!ok) ok = reserve_anonymous(size, false, &r);
    if (!ok) return fail(ENOMEM, "cannot reserve an HPMMAP arena of %zu bytes: %s", size, std::strerror(errno));

    auto* arena = new dimmap_hpmmap_arena(r);
    arena->st.bytes_reserved = size;
    arena->st.pages = r.pages;
    arena->st.huge_pages = huge_pages_in(r.base, size);
    if (opt->lock) {
      arena->st.locked = mlock(r.base, size) == 0;
      if (!arena->st.locked)
        dimmap::detail::log(LogLevel::warn, "hpmmap: cannot lock the %zu MiB arena in memory (%s; raise ulimit -l)",
                            size >> 20, std::strerror(errno));
    }
    arena->st.largest_free = size;
    arena->st.setup_ns = now_ns() - t0;
    if (r.pages != DIMMAP_HPMMAP_HUGETLB && arena->st.huge_pages < size / kHugePage) {
      const bool none = arena->st.huge_pages == 0;
      dimmap::detail::log(none ? LogLevel::warn : LogLevel::info,
                          "hpmmap: %" PRIu64 " of %zu 2 MiB pages are huge (%s); the rest are 4 KiB pages, still "
                          "populated and locked",
                          arena->st.huge_pages, size / kHugePage, kind_name(r.pages));
    }
    std::call_once(g_atfork_once, [] { pthread_atfork(atfork_prepare, atfork_release, atfork_release); });
    {
      std::lock_guard<std::mutex> lock(g_arenas_mu);
      g_arenas.insert(arena);
    }
    *out = arena;
    return 0;
  });
}

extern "C" void dimmap_hpmmap_destroy(struct dimmap_hpmmap_arena* arena) {
  dimmap::detail::guard_void("dimmap_hpmmap_destroy", [&] {
    if (!arena) return;
    {
      std::lock_guard<std::mutex> lock(g_arenas_mu);
      g_arenas.erase(arena);
    }
    munmap(arena->mem.base, arena->mem.size);
    delete arena;
  });
}

extern "C" void* dimmap_hpmmap_alloc(struct dimmap_hpmmap_arena* arena, size_t bytes, size_t alignment) {
  return dimmap::detail::guard_value<void*>("dimmap_hpmmap_alloc", nullptr, [&]() -> void* {
    if (!arena || (alignment & (alignment - 1))) {
      errno = -fail(EINVAL, "dimmap_hpmmap_alloc: %s", arena ? "alignment is not a power of two" : "no arena");
      return nullptr;
    }
    const size_t len = round_up(bytes ? bytes : 1, kGranule);
    const size_t align = alignment < kGranule ? kGranule : alignment;
    std::lock_guard<std::mutex> lock(arena->mu);
    size_t off = 0;
    if (len < bytes || !arena->fit.alloc(reinterpret_cast<uintptr_t>(arena->mem.base), len, align, &off)) {
      arena->st.failed_allocations++;
      errno = -fail(ENOMEM, "the HPMMAP arena cannot fit %zu more bytes (largest free block %zu)", bytes,
                    arena->fit.largest_free());
      return nullptr;
    }
    arena->st.allocations++;
    arena->st.bytes_allocated += len;
    if (arena->st.bytes_allocated > arena->st.peak_allocated) arena->st.peak_allocated = arena->st.bytes_allocated;
    return arena->mem.base + off;
  });
}

extern "C" int dimmap_hpmmap_free(struct dimmap_hpmmap_arena* arena, void* p) {
  return dimmap::detail::guard_status("dimmap_hpmmap_free", [&]() -> int {
    if (!arena || !dimmap_hpmmap_contains(arena, p)) return fail(EINVAL, "dimmap_hpmmap_free(%p): not in the arena", p);
    std::lock_guard<std::mutex> lock(arena->mu);
    const size_t len = arena->fit.free(static_cast<size_t>(static_cast<char*>(p) - arena->mem.base));
    if (!len) return fail(EINVAL, "dimmap_hpmmap_free(%p): not a live allocation", p);
    arena->st.frees++;
    arena->st.bytes_allocated -= len;
    return 0;
  });
}

extern "C" size_t dimmap_hpmmap_usable_size(struct dimmap_hpmmap_arena* arena, const void* p) {
  return dimmap::detail::guard_value<size_t>("dimmap_hpmmap_usable_size", size_t{0}, [&]() -> size_t {
    if (!arena || !dimmap_hpmmap_contains(arena, p)) return 0;
    std::lock_guard<std::mutex> lock(arena->mu);
    return arena->fit.usable(static_cast<size_t>(static_cast<const char*>(p) - arena->mem.base));
  });
}

extern "C" int dimmap_hpmmap_contains(const struct dimmap_hpmmap_arena* arena, const void* p) {
  return dimmap::detail::guard_value<int>("dimmap_hpmmap_contains", 0, [&]() -> int {
    if (!arena) return 0;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p), lo = reinterpret_cast<uintptr_t>(arena->mem.base);
    return a >= lo && a < lo + arena->mem.size;
  });
}

extern "C" void* dimmap_hpmmap_base(const struct dimmap_hpmmap_arena* arena) {
  return arena ? arena->mem.base : nullptr;
}

extern "C" int dimmap_hpmmap_stats(struct dimmap_hpmmap_arena* arena, struct dimmap_hpmmap_stats* out) {
  return dimmap::detail::guard_status("dimmap_hpmmap_stats", [&]() -> int {
    if (!arena || !out) return fail(EINVAL, "dimmap_hpmmap_stats: null argument");
    std::lock_guard<std::mutex> lock(arena->mu);
    *out = arena->st;
    out->largest_free = arena->fit.largest_free();
    return 0;
  });
}
