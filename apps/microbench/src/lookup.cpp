// lookup.cpp - the kernel: N threads look keys up in the mapped structure, taking queries in
// chunks from one counter-based stream; the clock runs from a common start to the last
// thread's finish.
#include "microbench/lookup.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "containers.hpp"
#include "microbench/keys.hpp"

namespace microbench {
namespace {

constexpr uint64_t kChunk = 256;  // queries a thread takes from the shared counter at a time

struct ThreadTally {
  uint64_t answered = 0, found = 0, wrong = 0, checksum = 0;
  char pad[64 - 4 * sizeof(uint64_t)];  // one cache line each: no false sharing
};

template <class Finder>
LookupResult run_with(const Finder& find, uint64_t entries, uint64_t data_seed, const LookupOptions& opt) {
  using Clock = std::chrono::steady_clock;
  const unsigned nthreads = opt.threads ? opt.threads : 1;
  std::vector<ThreadTally> tally(nthreads);
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::atomic<uint64_t> next{0};
  Clock::time_point deadline = Clock::time_point::max();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      ThreadTally local{};
      ready++;
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      // Each query index is answered once, by whichever thread takes its chunk: the answers
      // as a whole do not depend on the number of threads.
      for (;;) {
        const uint64_t lo = next.fetch_add(kChunk, std::memory_order_relaxed);
        // A thread answers its first 16 lookups whatever the clock says: on a loaded machine a
        // thread may first run after the time limit, and a run must still answer something.
        if (lo >= opt.queries || (local.answered > 0 && Clock::now() > deadline)) break;
        const uint64_t hi = std::min(opt.queries, lo + kChunk);
        uint64_t q = lo;
        for (; q < hi; ++q) {
          // A slow placement may take seconds per chunk: look at the clock every 16 lookups.
          if (q % 16 == 0 && q != lo && Clock::now() > deadline) break;
          const uint64_t j = query_index(opt.seed, q, entries);
          const uint64_t key = key_of(j, data_seed);
          uint64_t value = 0;
          const bool hit = find(key, &value);
          local.found += hit;
          local.checksum += hit ? value : 0;
          local.wrong += hit != (j < entries) || (hit && value != value_of(key));
        }
        local.answered += q - lo;
        if (q < hi) break;
      }
      tally[t] = local;
    });
  }
  while (ready.load() < nthreads) std::this_thread::yield();
  const auto t0 = Clock::now();
  if (opt.max_seconds > 0)
    deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.max_seconds));
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  LookupResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (const ThreadTally& t : tally) {
    r.queries += t.answered;
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
