// random_access.cpp - the HPMMAP experiment's kernel (see random_access.hpp).
//
// Verification: every update XORs a value into some word, so whatever the order and the
// threads' interleaving at word level, the XOR of the whole table ends up as the XOR of the
// initial contents and of every update value. Threads update disjoint slices, so no update
// is lost to a race either.
#include "microbench/random_access.hpp"

#include <dimmap/placement.hpp>
#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "microbench/keys.hpp"

namespace microbench {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Faults {
  long minor, major;
};
Faults faults_now() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return {ru.ru_minflt, ru.ru_majflt};
}

// Huge-page kiB of the mappings overlapping [p, p + len).
uint64_t huge_kib_of(const void* p, uint64_t len) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + len;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  uint64_t kib = 0;
  while (std::getline(in, line)) {
    uintptr_t a = 0, b = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 && line.find(' ') > line.find('-')) {
      inside = a < hi && b > lo;
      continue;
    }
    if (!inside) continue;
    std::istringstream f(line);
    std::string key;
    uint64_t v = 0;
    f >> key >> v;
    if (key == "AnonHugePages:" || key == "Private_Hugetlb:" || key == "Shared_Hugetlb:") kib += v;
  }
  return kib;
}

}  // namespace

RandomAccessResult run_random_access(const RandomAccessOptions& opt) {
  const unsigned nthreads = opt.threads ? opt.threads : 1;
  const uint64_t words = opt.bytes / 8;
  if (words < nthreads) throw dimmap::Error("--size is too small for " + std::to_string(nthreads) + " threads");
  RandomAccessResult r;
  const auto t_start = Clock::now();

  auto* table = static_cast<uint64_t*>(std::malloc(words * 8));
  if (!table) throw dimmap::Error("cannot allocate a table of " + dimmap::format_size(words * 8));
  r.alloc_seconds = since(t_start);

  auto parallel = [&](auto&& body) {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < nthreads; ++t) threads.emplace_back(body, t);
    for (auto& th : threads) th.join();
  };
  const uint64_t slice = words / nthreads;
  auto slice_lo = [&](unsigned t) { return t * slice; };
  auto slice_hi = [&](unsigned t) { return t + 1 == nthreads ? words : (t + 1) * slice; };

  Faults f0 = faults_now();
  auto t = Clock::now();
  parallel([&](unsigned th) {
    for (uint64_t i = slice_lo(th); i < slice_hi(th); ++i) table[i] = i;
  });
  r.init_seconds = since(t);
  Faults f1 = faults_now();

  std::vector<uint64_t> update_xor(nthreads, 0);
  t = Clock::now();
  parallel([&](unsigned th) {
    Rng rng(mix64(opt.seed) ^ mix64(th + 101));
    const uint64_t lo = slice_lo(th), len = slice_hi(th) - lo;
    const uint64_t mine = opt.updates / nthreads + (th < opt.updates % nthreads ? 1 : 0);
    uint64_t acc = 0;
    for (uint64_t u = 0; u < mine; ++u) {
      const uint64_t x = rng.next();
      table[lo + static_cast<uint64_t>((static_cast<unsigned __int128>(x) * len) >> 64)] ^= x;
      acc ^= x;
    }
    update_xor[th] = acc;
  });
  r.update_seconds = since(t);
  Faults f2 = faults_now();

  uint64_t expect = 0, got = 0;
  for (uint64_t i = 0; i < words; ++i) {
    expect ^= i;
    got ^= table[i];
  }
  for (uint64_t x : update_xor) expect ^= x;
  r.verified = expect == got;
  r.huge_kib = huge_kib_of(table, words * 8);
  std::free(table);
  r.total_seconds = since(t_start);
  r.minor_faults_init = f1.minor - f0.minor;
  r.minor_faults_update = f2.minor - f1.minor;
  r.major_faults = f2.major - f0.major;
  return r;
}

}  // namespace microbench
