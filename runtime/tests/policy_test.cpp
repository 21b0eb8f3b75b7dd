// Unit tests of the DI-MMAP buffer policy: one test per rule of DESIGN.md section 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

extern "C" {
#include "dimmap_policy.h"
}

namespace {

// A policy over caller-owned arrays, with helpers that play the engine's part.
class Buffer {
 public:
  Buffer(uint32_t npages, uint32_t hot_permille, uint32_t evict_permille, uint32_t batch) {
    EXPECT_EQ(dmp_params_init(&par, npages, hot_permille, evict_permille, batch), 0);
    pages.resize(par.npages);
    buckets.resize(par.nbuckets);
    dmp_init(&p, &par, pages.data(), buckets.data());
  }

  // A miss on key: alloc + loaded. Returns the slot; demoted receives the page pushed to
  // the eviction queue (or DMP_NIL). Frees a batch first when no slot is free.
  uint32_t miss(uint64_t key, uint32_t* demoted = nullptr) {
    uint32_t s = dmp_alloc(&p, key);
    if (s == DMP_NIL) {
      evict_and_release();
      s = dmp_alloc(&p, key);
    }
    EXPECT_NE(s, DMP_NIL);
    uint32_t d = dmp_loaded(&p, s);
    if (demoted) *demoted = d;
    return s;
  }

  // The engine's fault path: recover victims, load misses, ignore hits.
  void fault(uint64_t key) {
    uint32_t s = dmp_lookup(&p, key);
    if (s == DMP_NIL) {
      miss(key);
    } else if (pages[s].state == DMP_EVICT) {
      dmp_recover(&p, s);
    }
    while (dmp_wants_eviction(&p)) evict_and_release();
  }

  std::vector<uint32_t> evict_and_release() {
    std::vector<uint32_t> out(par.batch);
    out.resize(dmp_evict_batch(&p, out.data(), par.batch));
    for (uint32_t s : out) dmp_release(&p, s);
    return out;
  }

  uint8_t state_of(uint64_t key) const {
    uint32_t s = dmp_lookup(&p, key);
    return s == DMP_NIL ? static_cast<uint8_t>(DMP_FREE) : pages[s].state;
  }

  std::vector<uint64_t> keys_in(const dmp_queue& q) const {
    std::vector<uint64_t> keys;
    for (uint32_t s = q.head; s != DMP_NIL; s = pages[s].next) keys.push_back(pages[s].key);
    return keys;
  }

  uint32_t bucket_faults(uint64_t key) {
    // The bucket of a key is found through a page that holds it.
    uint32_t s = dmp_alloc(&p, key);
    uint32_t f = pages[s].faults;
    dmp_abort(&p, s);
    return f;
  }

  dmp_params par{};
  dmp_policy p{};
  std::vector<dmp_page> pages;
  std::vector<dmp_bucket> buckets;
};

TEST(PolicyParams, RejectsTooSmallPoolAndBadShares) {
  dmp_params par;
  EXPECT_EQ(dmp_params_init(&par, DMP_MIN_PAGES - 1, 750, 62, 4), -1);
  EXPECT_EQ(dmp_params_init(&par, 64, 1000, 62, 4), -1);
  EXPECT_EQ(dmp_params_init(&par, 64, 750, 0, 4), -1);
  EXPECT_EQ(dmp_params_init(&par, 64, 750, 500, 4), -1);
  EXPECT_EQ(dmp_params_init(&par, 64, 750, 62, 4), 0);
}

TEST(PolicyParams, SplitsThePoolIntoQueues) {
  dmp_params par;
  ASSERT_EQ(dmp_params_init(&par, 1024, 750, 62, 16), 0);
  EXPECT_EQ(par.npages, 1024u);
  EXPECT_EQ(par.evict_pages, 63u);
  EXPECT_EQ(par.mapped_cap, 1024u - 63u);
  EXPECT_EQ(par.hot_cap, 768u);
  EXPECT_EQ(par.batch, 16u);
  EXPECT_GE(par.nbuckets, par.npages);
  EXPECT_EQ(par.nbuckets & (par.nbuckets - 1), 0u);
  // The eviction queue holds at least two batches, and batches are at most 1/8 of the pool.
  ASSERT_EQ(dmp_params_init(&par, 64, 750, 1, 100), 0);
  EXPECT_EQ(par.batch, 8u);
  EXPECT_EQ(par.evict_pages, 16u);
  // A full hot FIFO leaves room for at least one primary page.
  ASSERT_EQ(dmp_params_init(&par, 64, 999, 62, 4), 0);
  EXPECT_LT(par.hot_cap, par.mapped_cap);
}

TEST(Policy, FixedPoolRunsOutOfFreeSlots) {
  Buffer b(32, 0, 125, 2);
  std::vector<uint32_t> slots;
  for (uint64_t k = 0; k < 32; ++k) {
    uint32_t s = dmp_alloc(&b.p, k);
    ASSERT_NE(s, DMP_NIL);
    slots.push_back(s);
  }
  EXPECT_EQ(dmp_alloc(&b.p, 99), DMP_NIL);
  std::sort(slots.begin(), slots.end());
  EXPECT_EQ(std::unique(slots.begin(), slots.end()), slots.end());
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, MissTakesAFreePageAndQueuesItInPrimary) {
  Buffer b(64, 750, 125, 4);
  uint32_t s = dmp_alloc(&b.p, 42);
  ASSERT_NE(s, DMP_NIL);
  EXPECT_EQ(b.pages[s].state, DMP_LOADING);
  EXPECT_EQ(dmp_lookup(&b.p, 42), s);  // concurrent faults find the page while it loads
  EXPECT_EQ(b.p.free.len, 63u);
  EXPECT_EQ(dmp_loaded(&b.p, s), DMP_NIL);
  EXPECT_EQ(b.pages[s].state, DMP_PRIMARY);
  EXPECT_EQ(b.keys_in(b.p.primary), std::vector<uint64_t>{42});
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, SteadyStateFaultDisplacesOldestPrimaryPage) {
  Buffer b(32, 0, 250, 2);  // no hot FIFO: every displaced page goes to the eviction queue
  const uint32_t cap = b.par.mapped_cap;
  for (uint64_t k = 0; k < cap; ++k) {
    uint32_t demoted;
    b.miss(k, &demoted);
    EXPECT_EQ(demoted, DMP_NIL) << "no displacement before the buffer is full";
  }
  for (uint64_t k = cap; k < cap + 5; ++k) {
    uint32_t demoted;
    b.miss(k, &demoted);
    ASSERT_NE(demoted, DMP_NIL);
    EXPECT_EQ(b.pages[demoted].key, k - cap) << "the oldest primary page leaves first";
    EXPECT_EQ(b.pages[demoted].state, DMP_EVICT);
  }
  EXPECT_EQ(b.keys_in(b.p.evict), (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, PagesFaultedMoreThanAverageGoToTheHotFifo) {
  Buffer b(64, 500, 125, 4);
  const uint32_t cap = b.par.mapped_cap;
  // Fill the buffer, then make key 0 recover twice so its count is above the average.
  for (uint64_t k = 0; k < cap; ++k) b.miss(k);
  for (uint64_t k = cap; k < cap + 2; ++k) b.miss(k);  // keys 0 and 1 demoted
  ASSERT_EQ(b.state_of(0), DMP_EVICT);
  dmp_recover(&b.p, dmp_lookup(&b.p, 0));  // back to primary (tail), faults 2
  EXPECT_EQ(b.state_of(0), DMP_PRIMARY);
  EXPECT_EQ(b.pages[dmp_lookup(&b.p, 0)].faults, 2);
  EXPECT_TRUE(dmp_is_hot(&b.p, dmp_lookup(&b.p, 0)));
  // Fault new pages until key 0 is the oldest primary page and gets displaced.
  uint64_t k = cap + 2;
  while (b.state_of(0) == DMP_PRIMARY) b.miss(k++);
  EXPECT_EQ(b.state_of(0), DMP_HOT);
  EXPECT_EQ(b.p.cnt.hot_promotions, 1u);
  // Ordinary pages (count 1, below average) went to the eviction queue, not the hot FIFO.
  EXPECT_EQ(b.p.hot.len, 1u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, PageDisplacedFromHotFifoGoesToEvictionQueue) {
  Buffer b(64, 250, 125, 4);  // hot_cap = 16
  const uint32_t hot_cap = b.par.hot_cap;
  ASSERT_GT(hot_cap, 0u);
  // Make pages hot by recovering them, then push them through the primary FIFO.
  uint64_t next = 0;
  std::vector<uint64_t> hot_keys;
  while (b.p.hot.len < hot_cap) {
    uint64_t key = next++;
    b.miss(key);
    for (int i = 0; i < 3; ++i) {  // bump count: demote, recover
      while (b.state_of(key) == DMP_PRIMARY) b.miss(next++);
      if (b.state_of(key) == DMP_HOT) break;
      ASSERT_EQ(b.state_of(key), DMP_EVICT);
      dmp_recover(&b.p, dmp_lookup(&b.p, key));
    }
    while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  }
  ASSERT_EQ(b.p.hot.len, hot_cap);
  const uint64_t oldest_hot = b.pages[b.p.hot.head].key;
  // One more hot page pushes the oldest hot page into the eviction queue.
  uint64_t key = next++;
  b.miss(key);
  for (int i = 0; i < 8 && b.state_of(key) != DMP_HOT; ++i) {
    while (b.state_of(key) == DMP_PRIMARY) b.miss(next++);
    if (b.state_of(key) == DMP_EVICT) dmp_recover(&b.p, dmp_lookup(&b.p, key));
    while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  }
  ASSERT_EQ(b.state_of(key), DMP_HOT);
  EXPECT_NE(b.state_of(oldest_hot), DMP_HOT);
  EXPECT_TRUE(b.state_of(oldest_hot) == DMP_EVICT || b.state_of(oldest_hot) == DMP_FREE);
  EXPECT_LE(b.p.hot.len, hot_cap);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, FaultOnVictimPageRecoversItAndBumpsItsCount) {
  Buffer b(32, 0, 125, 2);
  const uint32_t cap = b.par.mapped_cap;
  for (uint64_t k = 0; k <= cap; ++k) b.miss(k);
  uint32_t s = dmp_lookup(&b.p, 0);
  ASSERT_EQ(b.pages[s].state, DMP_EVICT);
  const uint16_t before = b.pages[s].faults;
  uint32_t demoted = dmp_recover(&b.p, s);
  EXPECT_EQ(b.pages[s].state, DMP_PRIMARY);
  EXPECT_EQ(b.pages[s].faults, before + 1);
  EXPECT_EQ(b.keys_in(b.p.primary).back(), 0u) << "a recovered page is the newest primary page";
  ASSERT_NE(demoted, DMP_NIL) << "recovery is an insertion: it displaces the oldest primary page";
  EXPECT_EQ(b.pages[demoted].key, 1u);
  EXPECT_EQ(b.p.cnt.recoveries, 1u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, LeavingPageCanBeRecoveredBeforeRelease) {
  Buffer b(32, 0, 125, 2);
  for (uint64_t k = 0; k <= b.par.mapped_cap; ++k) b.miss(k);
  uint32_t out[2];
  ASSERT_EQ(dmp_evict_batch(&b.p, out, 1), 1u);
  EXPECT_EQ(b.pages[out[0]].state, DMP_LEAVING);
  dmp_recover(&b.p, out[0]);  // a fault arrived while its writeback was in flight
  EXPECT_EQ(b.pages[out[0]].state, DMP_PRIMARY);
  EXPECT_EQ(b.p.leaving, 0u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, PagesLeaveTheEvictionQueueInBatchesOldestFirstSkippingBusy) {
  Buffer b(64, 0, 250, 4);
  for (uint64_t k = 0; k < b.par.mapped_cap + 10; ++k) b.miss(k);
  ASSERT_EQ(b.p.evict.len, 10u);
  EXPECT_FALSE(dmp_wants_eviction(&b.p)) << "free slots remain: no need to evict yet";
  dmp_lookup(&b.p, 1);
  b.pages[dmp_lookup(&b.p, 1)].flags |= DMP_F_BUSY;  // e.g. an msync writes it right now
  uint32_t out[8];
  uint32_t n = dmp_evict_batch(&b.p, out, 4);
  ASSERT_EQ(n, 4u);
  std::vector<uint64_t> keys;
  for (uint32_t i = 0; i < n; ++i) {
    keys.push_back(b.pages[out[i]].key);
    EXPECT_EQ(b.pages[out[i]].state, DMP_LEAVING);
    EXPECT_EQ(dmp_lookup(&b.p, b.pages[out[i]].key), out[i]) << "leaving pages stay findable";
  }
  EXPECT_EQ(keys, (std::vector<uint64_t>{0, 2, 3, 4}));
  EXPECT_EQ(b.p.evict.len, 6u);
  for (uint32_t i = 0; i < n; ++i) dmp_release(&b.p, out[i]);
  EXPECT_EQ(dmp_lookup(&b.p, 0), DMP_NIL);
  EXPECT_EQ(b.p.cnt.batches, 1u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, EvictionIsWantedWhenFreeSlotsRunLow) {
  Buffer b(32, 0, 125, 2);
  uint64_t k = 0;
  while (b.p.free.len >= b.par.reserve) b.miss(k++);
  EXPECT_TRUE(dmp_wants_eviction(&b.p));
  b.evict_and_release();
  EXPECT_FALSE(dmp_wants_eviction(&b.p));
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, BucketHistorySeedsNewPagesAndDecays) {
  Buffer b(32, 0, 125, 2);
  const uint64_t key = 7;
  EXPECT_EQ(b.bucket_faults(key), 1u) << "a fresh bucket seeds count 1";
  // Load key, demote it, recover it twice (count 3), then let it leave.
  b.miss(key);
  uint64_t next = 1000;
  for (int i = 0; i < 2; ++i) {
    while (b.state_of(key) == DMP_PRIMARY) b.miss(next++);
    dmp_recover(&b.p, dmp_lookup(&b.p, key));
  }
  EXPECT_EQ(b.pages[dmp_lookup(&b.p, key)].faults, 3);
  while (b.state_of(key) != DMP_FREE) {
    b.miss(next++);
    while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  }
  EXPECT_EQ(b.bucket_faults(key), 3u) << "the bucket remembers the leaving page's higher count";
  // The next page of that bucket starts at 3; leaving with an equal count decays the bucket.
  b.miss(key);
  EXPECT_EQ(b.pages[dmp_lookup(&b.p, key)].faults, 3);
  while (b.state_of(key) != DMP_FREE) {
    b.miss(next++);
    while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  }
  EXPECT_EQ(b.bucket_faults(key), 2u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, BucketHistoryNeverDecaysBelowOne) {
  Buffer b(32, 0, 125, 2);
  uint64_t next = 1000;
  for (int round = 0; round < 3; ++round) {
    b.miss(5);
    while (b.state_of(5) != DMP_FREE) {
      b.miss(next++);
      while (dmp_wants_eviction(&b.p)) b.evict_and_release();
    }
  }
  EXPECT_EQ(b.bucket_faults(5), 1u);
}

TEST(Policy, AbortFreesTheSlotWithoutTouchingHistory) {
  Buffer b(32, 0, 125, 2);
  uint32_t s = dmp_alloc(&b.p, 3);
  dmp_abort(&b.p, s);
  EXPECT_EQ(dmp_lookup(&b.p, 3), DMP_NIL);
  EXPECT_EQ(b.p.free.len, 32u);
  EXPECT_EQ(b.bucket_faults(3), 1u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, RemoveDropsPagesFromAnyQueue) {
  Buffer b(64, 500, 125, 4);
  for (uint64_t k = 0; k < b.par.mapped_cap + 3; ++k) b.miss(k);
  for (uint64_t k = 0; k < b.par.mapped_cap + 3; ++k) {
    uint32_t s = dmp_lookup(&b.p, k);
    if (s != DMP_NIL) dmp_remove(&b.p, s);
  }
  EXPECT_EQ(b.p.free.len, 64u);
  EXPECT_EQ(dmp_resident(&b.p), 0u);
  EXPECT_EQ(b.p.fault_sum, 0u);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

TEST(Policy, NoHotFifoWhenHotFractionIsZero) {
  Buffer b(64, 0, 125, 4);
  EXPECT_EQ(b.par.hot_cap, 0u);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5000; ++i) b.fault(rng() % 100);  // heavy reuse: many recoveries
  EXPECT_EQ(b.p.hot.len, 0u);
  EXPECT_EQ(b.p.cnt.hot_promotions, 0u);
  EXPECT_GT(b.p.cnt.recoveries, 0u);
}

// Randomized: a skewed workload through the whole state machine keeps every invariant,
// and the hot FIFO holds the frequently faulted keys.
TEST(Policy, RandomWorkloadKeepsInvariantsAndCachesHotKeys) {
  Buffer b(256, 750, 62, 8);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    // 90% of faults to 100 hot keys, 10% to 100000 cold keys.
    uint64_t key = coin(rng) < 0.9 ? rng() % 100 : 1000 + rng() % 100000;
    b.fault(key);
    if (i % 997 == 0) {
      ASSERT_EQ(dmp_check(&b.p), 0) << "after fault " << i;
    }
    // Occasionally a page is busy (being written) when a batch is chosen.
    if (i % 101 == 0 && b.p.evict.head != DMP_NIL) {
      b.pages[b.p.evict.head].flags ^= DMP_F_BUSY;
    }
  }
  ASSERT_EQ(dmp_check(&b.p), 0);
  int hot_resident = 0;
  for (uint64_t k = 0; k < 100; ++k) hot_resident += b.state_of(k) != DMP_FREE;
  EXPECT_GE(hot_resident, 95) << "hot keys stay in the buffer under a cold scan";
  EXPECT_GT(b.p.cnt.hot_promotions, 0u);
  EXPECT_GT(b.p.cnt.recoveries, 0u);
  EXPECT_LE(b.p.hot.len, b.par.hot_cap);
}

// The same cold scan without a hot FIFO keeps fewer hot keys: the hot FIFO is what helps.
TEST(Policy, HotFifoBeatsPlainFifoOnSkewedWorkload) {
  auto misses = [](uint32_t hot_permille) {
    Buffer b(256, hot_permille, 62, 8);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (int i = 0; i < 100000; ++i) b.fault(coin(rng) < 0.8 ? rng() % 200 : 1000 + rng() % 100000);
    return b.p.cnt.allocs;
  };
  EXPECT_LT(misses(750), misses(0));
}

// A pool whose pages in use must shrink (its caller's memory is short) lends slots back: the
// FIFOs give up pages to the eviction queue, eviction keeps the lent slots free, and the
// pages come back into use once the slots are returned.
TEST(Policy, LentSlotsLeaveTheFifosAndStayFreeUntilReturned) {
  Buffer b(256, 500, 62, 8);
  std::mt19937_64 rng(3);
  // Hot pages fill the hot FIFO (faulted again while in the eviction queue), cold ones the rest.
  for (int i = 0; i < 20000; ++i) b.fault(i % 2 ? rng() % 150 : 1000 + rng() % 100000);
  ASSERT_EQ(b.p.free.len + dmp_resident(&b.p), b.par.npages);
  ASSERT_GT(b.p.hot.len, 8u);
  // Enough that the hot FIFO must give up half its pages too.
  const uint32_t lend = b.par.hot_cap - b.p.hot.len / 2;
  ASSERT_LE(lend, b.par.mapped_cap / 2);
  ASSERT_EQ(dmp_lend(&b.p, lend), lend);
  const uint32_t hot_before = b.p.hot.len;
  uint32_t demoted = 0;
  for (uint32_t s = dmp_shrink(&b.p); s != DMP_NIL; s = dmp_shrink(&b.p)) {
    EXPECT_EQ(b.pages[s].state, DMP_EVICT);
    ++demoted;
  }
  EXPECT_GT(demoted, 0u);
  EXPECT_LE(b.p.primary.len + b.p.hot.len, b.par.mapped_cap - lend);
  EXPECT_LE(b.p.hot.len, b.par.hot_cap - lend);
  EXPECT_LT(b.p.hot.len, hot_before);
  while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  EXPECT_GE(b.p.free.len, b.par.reserve + lend);
  EXPECT_EQ(dmp_check(&b.p), 0);
  // Faults go on within the smaller pool.
  for (int i = 0; i < 5000; ++i) {
    b.fault(i % 2 ? rng() % 150 : 1000 + rng() % 100000);
    ASSERT_LE(dmp_resident(&b.p), b.par.npages - lend);
  }
  EXPECT_EQ(dmp_check(&b.p), 0);
  // Returned, the slots fill again.
  dmp_lend(&b.p, 0);
  for (int i = 0; i < 5000; ++i) b.fault(1000 + rng() % 100000);
  EXPECT_GT(dmp_resident(&b.p), b.par.npages - b.par.reserve - b.par.batch);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

// At most half of the FIFOs' budget is lent, so they keep pages to work with.
TEST(Policy, LendingStopsAtHalfTheFifosBudget) {
  Buffer b(64, 500, 125, 4);
  for (uint64_t k = 0; k < 200; ++k) b.fault(k);
  EXPECT_EQ(dmp_lend(&b.p, b.par.npages), b.par.mapped_cap / 2);
  while (dmp_shrink(&b.p) != DMP_NIL) {
  }
  while (dmp_wants_eviction(&b.p)) b.evict_and_release();
  EXPECT_EQ(b.p.primary.len + b.p.hot.len, b.par.mapped_cap - b.par.mapped_cap / 2);
  EXPECT_EQ(dmp_check(&b.p), 0);
}

}  // namespace
