// lookup.cpp - the kernel: N threads, each with its own query stream, look keys up in the
// mapped structure; the clock runs from a common start to the last thread's finish.
#include "microbench/lookup.hpp"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "containers.hpp"
#include "microbench/keys.hpp"

namespace microbench {
namespace {

struct ThreadTally {
  uint64_t found = 0, wrong = 0, checksum = 0;
  char pad[64 - 3 * sizeof(uint64_t)];  // one cache line each: no false sharing
};

template <class Finder>
LookupResult run_with(const Finder& find, uint64_t entries, uint64_t data_seed, const LookupOptions& opt) {
  const unsigned nthreads = opt.threads ? opt.threads : 1;
  std::vector<ThreadTally> tally(nthreads);
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      // Thread t answers queries [lo, hi): contiguous shares of one counter-based stream.
      const uint64_t lo = opt.queries * t / nthreads, hi = opt.queries * (t + 1) / nthreads;
      ThreadTally local{};
      ready++;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (uint64_t q = lo; q < hi; ++q) {
        const uint64_t j = query_index(opt.seed, q, entries);
        const uint64_t key = key_of(j, data_seed);
        uint64_t value = 0;
        const bool hit = find(key, &value);
        local.found += hit;
        local.checksum += hit ? value : 0;
        local.wrong += hit != (j < entries) || (hit && value != value_of(key));
      }
      tally[t] = local;
    });
  }
  while (ready.load() < nthreads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  LookupResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.queries = opt.queries;
  for (const ThreadTally& t : tally) {
    r.found += t.found;
    r.wrong += t.wrong;
    r.checksum += t.checksum;
  }
  return r;
}

}  // namespace

LookupResult run_lookups(const StructureFile& file, const LookupOptions& opt) {
  return with_finder(file, [&](const auto& find) { return run_with(find, file.entries(), file.seed(), opt); });
}

}  // namespace microbench
