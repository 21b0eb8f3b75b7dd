// soak.cpp - see soak.hpp.
#include "soak.hpp"

#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "memory_probe.hpp"
#include "page_files.hpp"
#include "pattern.hpp"
#include "watchdog.hpp"

namespace dimmap::reliability {
namespace {

using Clock = std::chrono::steady_clock;

// AddressSanitizer keeps freed memory in a quarantine (up to 256 MiB by default), so the
// process's anonymous memory then grows with every free: the growth check means nothing there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kQuarantinedHeap = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kQuarantinedHeap = true;
#else
constexpr bool kQuarantinedHeap = false;
#endif
#else
constexpr bool kQuarantinedHeap = false;
#endif

struct alignas(64) ThreadState {
  std::atomic<uint64_t> ops{0};
  uint64_t reads = 0, writes = 0, mismatches = 0;
  std::string first_mismatch;
  std::vector<uint32_t> version;  // of the pages this thread owns: page = index * threads + t
};

struct Shared {
  uint64_t* words = nullptr;
  uint64_t pages = 0, hot_pages = 0;
  unsigned threads = 0;
  double write_fraction = 0;
  std::atomic<bool> stop{false};
};

void note_mismatch(ThreadState& st, uint64_t page, size_t word, uint64_t value, const char* why) {
  if (st.mismatches++ == 0)
    st.first_mismatch = "page " + std::to_string(page) + " word " + std::to_string(word) + ": " + why +
                        " (read " + std::to_string(value) + ")";
}

void worker(Shared& sh, ThreadState& st, unsigned t, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + t);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  while (!sh.stop.load(std::memory_order_relaxed)) {
    uint64_t p = (rng() & 1) ? rng() % sh.hot_pages : rng() % sh.pages;
    if (coin(rng) < sh.write_fraction) {
      // Write a whole new version of the nearest page this thread owns.
      p = p - p % sh.threads + t;
      if (p >= sh.pages) p -= sh.threads;
      if (p >= sh.pages) continue;  // fewer pages than threads: this one owns none here
      const uint32_t v = ++st.version[p / sh.threads];
      uint64_t* page = sh.words + p * kWordsPerPage;
      for (size_t w = 0; w < kWordsPerPage; ++w) __atomic_store_n(&page[w], pattern_word(p, w, v), __ATOMIC_RELAXED);
      st.writes++;
    } else {
      const bool mine = p % sh.threads == t;
      const uint64_t* page = sh.words + p * kWordsPerPage;
      for (int i = 0; i < 4; ++i) {
        const size_t w = i == 0 ? 0 : rng() % kWordsPerPage;
        const uint64_t value = __atomic_load_n(&page[w], __ATOMIC_RELAXED);
        if (!tag_matches(value, p, w))
          note_mismatch(st, p, w, value, "wrong tag: misplaced or corrupt page");
        else if (mine && version_of(value) != st.version[p / sh.threads])
          note_mismatch(st, p, w, value, ("owner expected version " + std::to_string(st.version[p / sh.threads])).c_str());
      }
      st.reads++;
    }
    st.ops.fetch_add(1, std::memory_order_relaxed);
  }
}

uint64_t pending_faults(const struct dimmap_stats& s) {
  const uint64_t served = s.misses + s.hits + s.write_faults;  // (recoveries need no fault here)
  return s.faults > served ? s.faults - served : 0;
}

}  // namespace

SoakResult run_soak(const SoakConfig& c) {
  if (c.threads == 0 || c.threads > 4096) throw Error("--threads must be between 1 and 4096");
  if (c.buffer_ratio < 2) throw Error("--buffer-ratio must be at least 2");
  if (!(c.write_fraction >= 0 && c.write_fraction <= 1)) throw Error("--write-fraction must be in [0, 1]");
  if (!(c.seconds > 0) || !(c.sample_seconds > 0) || !(c.stall_seconds > 0))
    throw Error("--seconds, --sample and --stall must be positive");
  const uint64_t pages = c.file_bytes / kPageBytes;
  const uint64_t buffer_pages = pages / c.buffer_ratio;
  if (buffer_pages < DIMMAP_MIN_BUFFER_PAGES)
    throw Error("the file must be at least " + std::to_string(DIMMAP_MIN_BUFFER_PAGES * c.buffer_ratio) +
                " pages for a buffer of 1/" + std::to_string(c.buffer_ratio));

  const std::string path = c.dir + "/dimmap-soak-" + std::to_string(getpid());
  create_pattern_file(path, pages, 0);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  unlink(path.c_str());  // nothing left behind, whatever happens
  if (fd < 0) throw Error("cannot reopen " + path + ": " + std::strerror(errno));

  dimmap_config cfg;
  if (dimmap_config_init(&cfg) != 0) throw Error(dimmap_last_error());
  cfg.buffer_bytes = buffer_pages * kPageBytes;
  Buffer buffer(cfg);
  const size_t bytes = pages * kPageBytes;
  void* map = dimmap_instance_mmap(buffer.instance(), nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw Error(dimmap_last_error());

  Shared sh;
  sh.words = static_cast<uint64_t*>(map);
  sh.pages = pages;
  sh.hot_pages = std::max<uint64_t>(1, buffer_pages / 2);
  sh.threads = c.threads;
  sh.write_fraction = c.write_fraction;
  std::vector<ThreadState> states(c.threads);
  for (unsigned t = 0; t < c.threads; ++t) states[t].version.assign((pages + c.threads - 1) / c.threads, 0);

  SoakResult r;
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < c.threads; ++t) pool.emplace_back(worker, std::ref(sh), std::ref(states[t]), t, c.seed);

  auto total_ops = [&] {
    uint64_t n = 0;
    for (const ThreadState& st : states) n += st.ops.load(std::memory_order_relaxed);
    return n;
  };
  uint64_t last_ops = 0;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.sample_seconds));
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.seconds));
  auto last_progress = start, next_sample = start + period;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = Clock::now();
    const uint64_t ops = total_ops();
    if (ops != last_ops) {
      last_ops = ops;
      last_progress = now;
    } else if (now - last_progress > std::chrono::duration<double>(c.stall_seconds)) {
      std::fprintf(stderr, "dimmap-soak: DEADLOCK: no operation completed for %.0f s (%llu ops so far)\n",
                   c.stall_seconds, static_cast<unsigned long long>(ops));
      dump_thread_stacks();
      std::fflush(stderr);
      _exit(3);
    }
    if (now < next_sample) continue;
    next_sample += period;
    SoakSample s;
    s.t = std::chrono::duration<double>(now - start).count();
    s.ops = ops;
    s.stats = buffer.stats();
    const MemorySample mem = sample_memory();
    s.rss_anon = mem.rss_anon;
    s.rss_shmem = mem.rss_shmem;
    s.buffer_bytes = mem.buffer_bytes;
    r.samples.push_back(s);
    if (c.progress)
      std::fprintf(stderr,
                   "dimmap-soak: %5.0f s %12llu ops  faults %llu (miss %llu, recover %llu, hit %llu, wp %llu) "
                   "evict %llu wb %llu resident %llu/%llu dirty %llu  anon %.1fM buffer %.1fM\n",
                   s.t, static_cast<unsigned long long>(s.ops), static_cast<unsigned long long>(s.stats.faults),
                   static_cast<unsigned long long>(s.stats.misses), static_cast<unsigned long long>(s.stats.recoveries),
                   static_cast<unsigned long long>(s.stats.hits), static_cast<unsigned long long>(s.stats.write_faults),
                   static_cast<unsigned long long>(s.stats.evictions), static_cast<unsigned long long>(s.stats.writebacks),
                   static_cast<unsigned long long>(s.stats.resident_pages),
                   static_cast<unsigned long long>(s.stats.buffer_pages),
                   static_cast<unsigned long long>(s.stats.dirty_pages), s.rss_anon / 1048576.0,
                   s.buffer_bytes / 1048576.0);
  }
  sh.stop = true;
  {
    Watchdog wd(c.stall_seconds, "dimmap-soak: stopping the worker threads");
    for (auto& th : pool) th.join();
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Faults still queued for a free page (some stale: their thread was woken by another
  // thread's fill of the same page) are accounted when the server next has room: settle.
  for (int i = 0; i < 200; ++i) {
    r.final_stats = buffer.stats();
    if (pending_faults(r.final_stats) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // Checks while running: the buffer's memory bounded by its size, no growth of the heap
  // between the first and last third. Faults waiting for a page are reported, not bounded:
  // a thread woken by another's fill of the same page leaves a stale entry behind.
  const uint64_t slack = (uint64_t{cfg.evict_batch} + 64) * kPageBytes;
  for (const SoakSample& s : r.samples) {
    r.max_pending_faults = std::max(r.max_pending_faults, pending_faults(s.stats));
    r.max_buffer_bytes = std::max(r.max_buffer_bytes, s.buffer_bytes);
    if (s.stats.resident_pages > s.stats.buffer_pages)
      r.failures.push_back("at " + std::to_string(static_cast<int>(s.t)) + " s resident pages exceed the buffer");
    if (s.stats.faults < s.stats.misses + s.stats.hits + s.stats.write_faults)
      r.failures.push_back("at " + std::to_string(static_cast<int>(s.t)) + " s more faults served than received");
  }
  if (r.max_buffer_bytes > cfg.buffer_bytes + slack)
    r.failures.push_back("the buffer's memfds held " + std::to_string(r.max_buffer_bytes) + " bytes, more than its " +
                         std::to_string(cfg.buffer_bytes) + " (+ " + std::to_string(slack) + " slack)");
  if (r.samples.size() >= 6) {
    const size_t third = r.samples.size() / 3;
    uint64_t first = 0, last = 0;
    for (size_t i = 1; i < third + 1; ++i) first = std::max(first, r.samples[i].rss_anon);  // [0] is warm-up
    for (size_t i = r.samples.size() - third; i < r.samples.size(); ++i) last = std::max(last, r.samples[i].rss_anon);
    r.rss_anon_growth = static_cast<int64_t>(last) - static_cast<int64_t>(first);
    const int64_t allowed = std::max<int64_t>(16 << 20, static_cast<int64_t>(first / 10));
    if (r.rss_anon_growth > allowed && !kQuarantinedHeap)
      r.failures.push_back("anonymous memory grew by " + std::to_string(r.rss_anon_growth >> 20) +
                           " MiB between the first and last third of the run");
  }
  if (std::string v = stats_violations(r.final_stats); !v.empty()) r.failures.push_back("final stats: " + v);

  for (const ThreadState& st : states) {
    r.ops += st.ops.load();
    r.reads += st.reads;
    r.writes += st.writes;
    r.read_mismatches += st.mismatches;
    if (r.first_mismatch.empty()) r.first_mismatch = st.first_mismatch;
  }
  if (r.read_mismatches) r.failures.push_back(std::to_string(r.read_mismatches) + " reads saw wrong data: " + r.first_mismatch);

  // Everything written must reach the file.
  if (dimmap_munmap(map, bytes) != 0) r.failures.push_back(std::string("munmap failed: ") + dimmap_last_error());
  std::vector<uint64_t> expected(pages);
  for (uint64_t p = 0; p < pages; ++p) expected[p] = states[p % c.threads].version[p / c.threads];
  std::string first_wrong;
  r.wrong_pages_after = count_wrong_pages(fd, expected, &first_wrong);
  if (r.wrong_pages_after)
    r.failures.push_back(std::to_string(r.wrong_pages_after) + " pages of the file are wrong after munmap: " + first_wrong);
  close(fd);
  return r;
}

std::string to_text(const SoakConfig& c, const SoakResult& r) {
  const struct dimmap_stats& s = r.final_stats;
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "soak: %u threads, %.0f s, file %.0f MiB, buffer 1/%llu (%llu pages), write fraction %.2f\n"
      "ops %llu (%.0f/s): %llu reads, %llu writes; read mismatches %llu; wrong pages after munmap %llu\n"
      "faults %llu: misses %llu, recoveries %llu, hits %llu, write faults %llu; evictions %llu in %llu batches; "
      "writebacks %llu in %llu writes; read errors %llu, write errors %llu\n"
      "most faults pending in a sample %llu; buffer memory peak %.1f MiB; anonymous memory growth %.1f MiB\n",
      c.threads, r.seconds, static_cast<double>(c.file_bytes) / 1048576.0,
      static_cast<unsigned long long>(c.buffer_ratio), static_cast<unsigned long long>(s.buffer_pages),
      c.write_fraction, static_cast<unsigned long long>(r.ops), r.seconds > 0 ? r.ops / r.seconds : 0.0,
      static_cast<unsigned long long>(r.reads), static_cast<unsigned long long>(r.writes),
      static_cast<unsigned long long>(r.read_mismatches), static_cast<unsigned long long>(r.wrong_pages_after),
      static_cast<unsigned long long>(s.faults), static_cast<unsigned long long>(s.misses),
      static_cast<unsigned long long>(s.recoveries), static_cast<unsigned long long>(s.hits),
      static_cast<unsigned long long>(s.write_faults), static_cast<unsigned long long>(s.evictions),
      static_cast<unsigned long long>(s.eviction_batches), static_cast<unsigned long long>(s.writebacks),
      static_cast<unsigned long long>(s.write_ios), static_cast<unsigned long long>(s.read_errors),
      static_cast<unsigned long long>(s.write_errors), static_cast<unsigned long long>(r.max_pending_faults),
      r.max_buffer_bytes / 1048576.0, r.rss_anon_growth / 1048576.0);
  std::string out = buf;
  if (r.failures.empty()) return out + "PASS\n";
  for (const std::string& f : r.failures) out += "FAIL: " + f + "\n";
  return out;
}

}  // namespace dimmap::reliability
