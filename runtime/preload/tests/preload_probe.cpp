// preload-probe - an ordinary program that the preload tests run under dimmap-run.
// It knows nothing of the preload (links no dimmap library): it allocates with the C and C++
// allocators, checks its data, and reports where the kernel says its memory lives.
//
//   preload-probe fill SIZE [THREADS]  malloc SIZE, fill, check; 0 ok, 1 bad data, 3 malloc failed
//   preload-probe where SIZE...        per size: malloc it, print "SIZE page_aligned dimmap locked path"
//   preload-probe api MIN_ALLOC        every allocation function across the threshold
//   preload-probe threads N ITER MIN   N threads allocating, checking and freeing at once
//   preload-probe fork MIN_ALLOC       big blocks across fork() without and with exec
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <algorithm>
#include <thread>
#include <vector>

namespace {

int g_failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "preload-probe: check failed at line %d: %s\n", __LINE__, #cond); \
      g_failures++;                                                                 \
    }                                                                               \
  } while (0)

uint64_t mix(uint64_t x) {  // splitmix64 finaliser: the expected content of word x
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void fill(void* p, size_t bytes, uint64_t seed) {
  auto* w = static_cast<uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; ++i) w[i] = mix(i ^ seed);
}

// Index of the first bad word, or SIZE_MAX.
size_t first_bad(const void* p, size_t bytes, uint64_t seed) {
  const auto* w = static_cast<const uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; ++i)
    if (w[i] != mix(i ^ seed)) return i;
  return SIZE_MAX;
}

size_t parse_size(const char* s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  switch (*end) {
    case 'K': v <<= 10; break;
    case 'M': v <<= 20; break;
    case 'G': v <<= 30; break;
    default: break;
  }
  return static_cast<size_t>(v);
}

// The /proc/self/maps line of the mapping that holds p, and its smaps Locked value.
struct Where {
  std::string perms;
  std::string path;
  uint64_t locked_kib = 0;
};

Where where_is(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  Where w;
  bool inside = false;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2 && line.find(' ') > line.find('-')) {
      inside = a >= lo && a < hi;
      if (inside) {
        std::istringstream f(line);
        std::string range, perms, off, dev, inode;
        f >> range >> perms >> off >> dev >> inode;
        w.perms = perms;
        std::getline(f, w.path);
        w.path.erase(0, w.path.find_first_not_of(' '));
      }
      continue;
    }
    if (inside && line.rfind("Locked:", 0) == 0) w.locked_kib = std::strtoull(line.c_str() + 7, nullptr, 10);
  }
  return w;
}

// libdimmap is in the process only if the preload brought it: ask it without linking it.
int in_dimmap(const void* p) {
  using Fn = int (*)(const void*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "dimmap_is_mapped"));
  return fn ? fn(p) : 0;
}

// Fills and checks with several threads, each on its own contiguous share, so a storage
// placement sees several faults in flight (as a real data-intensive program would).
int cmd_fill(size_t bytes, int nthreads) {
  auto* p = static_cast<uint64_t*>(std::malloc(bytes));
  if (!p) {
    std::fprintf(stderr, "preload-probe: malloc(%zu) failed: %s\n", bytes, std::strerror(errno));
    return 3;
  }
  const size_t words = bytes / 8, share = (words + nthreads - 1) / nthreads;
  std::vector<uint64_t> sums(nthreads, 0);
  std::atomic<size_t> first_bad_word{SIZE_MAX};
  auto run = [&](bool check) {
    std::vector<std::thread> threads;
    for (int t = 0; t < nthreads; ++t) {
      threads.emplace_back([&, t, check] {
        const size_t lo = std::min(words, t * share), hi = std::min(words, lo + share);
        for (size_t i = lo; i < hi; ++i) {
          if (!check) {
            p[i] = mix(i ^ 7);
          } else if (p[i] != mix(i ^ 7)) {
            size_t cur = first_bad_word.load();
            while (i < cur && !first_bad_word.compare_exchange_weak(cur, i)) {
            }
            return;
          } else if (i % (4096 / 8) == 0) {
            sums[t] += p[i];
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  };
  run(false);
  run(true);  // every word checked: two passes over the memory in all
  if (first_bad_word != SIZE_MAX) {
    std::fprintf(stderr, "preload-probe: word %zu of %zu bytes is wrong\n", first_bad_word.load(), bytes);
    return 1;
  }
  uint64_t sum = 0;
  for (uint64_t s : sums) sum += s;
  std::printf("fill ok %zu bytes checksum %016" PRIx64 "\n", bytes, sum);
  std::free(p);
  return 0;
}

int cmd_where(int argc, char** argv) {
  std::vector<void*> keep;
  for (int i = 0; i < argc; ++i) {
    const size_t bytes = parse_size(argv[i]);
    char* p = static_cast<char*>(std::malloc(bytes));
    if (!p) return 3;
    p[0] = 1;  // make it resident so smaps shows its mapping
    const Where w = where_is(p);
    std::printf("%s %d %d %d %s\n", argv[i], (reinterpret_cast<uintptr_t>(p) & 4095) == 0, in_dimmap(p),
                w.locked_kib > 0, w.path.empty() ? "[anon]" : w.path.c_str());
    keep.push_back(p);
  }
  for (void* p : keep) std::free(p);
  return 0;
}

bool all_zero(const void* p, size_t bytes) {
  const auto* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; i += 4093)
    if (c[i]) return false;
  return c[bytes - 1] == 0;
}

int cmd_api(size_t min) {
  const size_t big = min + min / 2 + 123;  // not a multiple of anything
  // calloc: zero, and the threshold applies to n * size.
  auto* z = static_cast<char*>(std::calloc(big / 16, 16));
  CHECK(z && all_zero(z, big / 16 * 16));
  std::free(z);
  volatile size_t huge = SIZE_MAX / 2;  // volatile: the compiler must not see the overflow coming
  errno = 0;
  CHECK(std::calloc(huge, 4) == nullptr && errno == ENOMEM);

  // realloc in every direction across the threshold keeps the data.
  char* p = static_cast<char*>(std::malloc(1000));
  CHECK(p);
  fill(p, 1000, 1);
  p = static_cast<char*>(std::realloc(p, big));  // small -> big
  CHECK(p && first_bad(p, 1000, 1) == SIZE_MAX);
  CHECK(malloc_usable_size(p) >= big);
  fill(p, big, 2);
  p = static_cast<char*>(std::realloc(p, 2 * big));  // big -> bigger
  CHECK(p && first_bad(p, big, 2) == SIZE_MAX);
  fill(p, 2 * big, 3);
  p = static_cast<char*>(std::realloc(p, big));  // big -> smaller big
  CHECK(p && first_bad(p, big, 3) == SIZE_MAX);
  p = static_cast<char*>(std::realloc(p, 4096));  // big -> small
  CHECK(p && first_bad(p, 4096, 3) == SIZE_MAX);
  p = static_cast<char*>(std::realloc(p, big));
  CHECK(p && first_bad(p, 4096, 3) == SIZE_MAX);
  CHECK(std::realloc(p, 0) == nullptr);  // glibc semantics: freed
  errno = 0;
  CHECK(reallocarray(nullptr, huge, 4) == nullptr && errno == ENOMEM);
  void* ra = reallocarray(nullptr, big / 8, 8);
  CHECK(ra && malloc_usable_size(ra) >= big / 8 * 8);
  std::free(ra);

  // The aligned allocators.
  void* a = nullptr;
  CHECK(posix_memalign(&a, 2 << 20, big) == 0 && a && reinterpret_cast<uintptr_t>(a) % (2 << 20) == 0);
  CHECK(malloc_usable_size(a) >= big);
  fill(a, big, 4);
  CHECK(first_bad(a, big, 4) == SIZE_MAX);
  std::free(a);
  CHECK(posix_memalign(&a, 24, 100) == EINVAL);
  void* b = aligned_alloc(65536, big);
  CHECK(b && reinterpret_cast<uintptr_t>(b) % 65536 == 0);
  fill(b, big, 5);
  CHECK(first_bad(b, big, 5) == SIZE_MAX);
  std::free(b);
  void* c = memalign(1 << 20, big);
  CHECK(c && reinterpret_cast<uintptr_t>(c) % (1 << 20) == 0);
  std::free(c);
  void* d = valloc(big);
  CHECK(d && reinterpret_cast<uintptr_t>(d) % 4096 == 0);
  std::memset(d, 1, big);
  std::free(d);
  void* e = pvalloc(big);
  CHECK(e && reinterpret_cast<uintptr_t>(e) % 4096 == 0 && malloc_usable_size(e) >= (big + 4095) / 4096 * 4096);
  std::free(e);

  // C++ new/delete go through the same functions.
  char* n = new char[big];
  std::memset(n, 7, big);
  CHECK(n[big - 1] == 7);
  delete[] n;

  // Small allocations work alongside.
  std::vector<char*> smalls;
  for (int i = 0; i < 1000; ++i) smalls.push_back(strdup("small allocation"));
  for (char* s : smalls) {
    CHECK(std::strcmp(s, "small allocation") == 0);
    std::free(s);
  }
  if (g_failures == 0) std::printf("api ok\n");
  return g_failures ? 1 : 0;
}

int cmd_threads(int nthreads, int iters, size_t min) {
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t state = static_cast<uint64_t>(t) + 1;
      for (int i = 0; i < iters; ++i) {
        state = mix(state);
        const size_t bytes = min + state % min;
        const uint64_t seed = state;
        void* p = nullptr;
        switch (state % 4) {
          case 0: p = std::malloc(bytes); break;
          case 1: p = std::calloc(1, bytes); break;
          case 2: p = aligned_alloc(1 << 16, bytes); break;
          default: p = std::realloc(std::malloc(64), bytes); break;
        }
        void* small = std::malloc(state % 4096 + 1);
        if (!p || !small) {
          bad++;
          continue;
        }
        // Touch a sample of pages: the point is concurrent bookkeeping, not bandwidth.
        auto* w = static_cast<uint64_t*>(p);
        for (size_t k = 0; k < bytes / 8; k += 4096 / 8) w[k] = mix(k ^ seed);
        for (size_t k = 0; k < bytes / 8; k += 4096 / 8)
          if (w[k] != mix(k ^ seed)) bad++;
        if (malloc_usable_size(p) < bytes) bad++;
        std::free(small);
        std::free(p);
      }
    });
  }
  for (auto& th : threads) th.join();
  if (bad) std::fprintf(stderr, "preload-probe: %d bad allocations or data\n", bad.load());
  else std::printf("threads ok\n");
  return bad ? 1 : 0;
}

// Is [p, p + len) mapped in this process? mincore fails with ENOMEM on unmapped memory.
bool is_mapped(const void* p, size_t len) {
  std::vector<unsigned char> vec((len + 4095) / 4096);
  return mincore(const_cast<void*>(p), len, vec.data()) == 0;
}

int cmd_fork(size_t min, const char* self) {
  const char* placement = std::getenv("DIMMAP_RUN_PLACEMENT");
  const bool dimmap = placement && std::strcmp(placement, "dimmap") == 0;
  const size_t big = min + 4096;
  void* p = std::malloc(big);
  CHECK(p);
  fill(p, big, 11);

  // fork without exec: the child keeps working with the heap it inherited.
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int bad = 0;
    if (dimmap) {
      const Where w = where_is(p);  // DI-MMAP regions are not inherited: at most a placeholder
      if (is_mapped(p, big) && w.perms.rfind("---", 0) != 0) bad |= 1;
    } else if (first_bad(p, big, 11) != SIZE_MAX) {
      bad |= 2;  // inherited content
    }
    void* q = std::malloc(big);  // a new big allocation in the child
    if (!q) {
      bad |= 4;
    } else {
      fill(q, big, 12);
      if (first_bad(q, big, 12) != SIZE_MAX) bad |= 8;
      std::free(q);
    }
    std::free(p);  // forgetting the inherited block must not crash
    _exit(bad);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status))
    std::fprintf(stderr, "preload-probe: forked child status %d\n", status);
  CHECK(first_bad(p, big, 11) == SIZE_MAX);  // the parent's block is intact

  // fork + exec: the new program gets a working preload of its own.
  std::fflush(nullptr);
  pid = fork();
  if (pid == 0) {
    const std::string arg = std::to_string(big);
    execl(self, self, "fill", arg.c_str(), static_cast<char*>(nullptr));
    _exit(126);
  }
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::free(p);
  if (g_failures == 0) std::printf("fork ok\n");
  return g_failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "fill" && (argc == 3 || argc == 4)) return cmd_fill(parse_size(argv[2]), argc == 4 ? std::atoi(argv[3]) : 1);
  if (cmd == "where" && argc >= 3) return cmd_where(argc - 2, argv + 2);
  if (cmd == "api" && argc == 3) return cmd_api(parse_size(argv[2]));
  if (cmd == "threads" && argc == 5) return cmd_threads(std::atoi(argv[2]), std::atoi(argv[3]), parse_size(argv[4]));
  if (cmd == "fork" && argc == 3) return cmd_fork(parse_size(argv[2]), "/proc/self/exe");
  std::fprintf(stderr, "usage: preload-probe fill SIZE [THREADS] | where SIZE... | api MIN | threads N ITER MIN | fork MIN\n");
  return 2;
}
