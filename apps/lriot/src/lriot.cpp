// lriot.cpp - the LRIOT kernel: P processes x T threads replaying their page sequences.
//
// The parent forks the processes, waits until each has opened the file (mapping, buffer),
// starts them together and stops them when --seconds have passed. Processes report through a
// shared anonymous mapping; all times are CLOCK_MONOTONIC, which every process shares.
// With --verify the whole file is checked before and after (pattern.cpp, the verifier):
// every page intact, and the write counters grown by exactly the writes performed.
// With --warmup the parent marks the warm-up's end: it takes the processes' live counters and
// the device's, and each process takes its DI-MMAP counters, so the result covers what follows.
#include <budget/page_cache.hpp>
#include <dimmap/file_size.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/stats_text.hpp>
#include <lriot/lriot.hpp>
#include <lriot/pattern.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "device_requests.hpp"
#include "host_counters.hpp"
#include "target.hpp"

namespace lriot {
namespace {

using dimmap::Error;

constexpr uint64_t kClaim = 16;  // sequence positions a thread claims at a time

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void sleep_seconds(double s) {
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  nanosleep(&ts, nullptr);
}

// One process's report to the parent.
struct ProcSlot {
  std::atomic<int> state{0};  // 0 setting up, 1 ready, 2 setup failed
  std::atomic<uint64_t> ops_done{0};
  std::atomic<uint64_t> writes_done{0};
  std::atomic<uint64_t> mismatches{0};
  std::atomic<int> error_claimed{0};
  std::atomic<int> mismatch_claimed{0};
  uint64_t reads = 0, writes = 0;
  double ops_end = 0, sync_end = 0;
  int has_stats = 0;
  struct dimmap_stats stats = {};
  int has_warm_stats = 0;
  struct dimmap_stats warm_stats = {};  // at the warm-up's end
  char error[512] = {};
  char mismatch[160] = {};

  void record_error(const char* what) {
    if (error_claimed.exchange(1) == 0) std::snprintf(error, sizeof error, "%s", what);
  }
  void record_mismatch(uint64_t page, const char* what) {
    mismatches.fetch_add(1);
    if (mismatch_claimed.exchange(1) == 0) std::snprintf(mismatch, sizeof mismatch, "page %llu: %s",
                                                         static_cast<unsigned long long>(page), what);
  }
};

struct SharedHeader {
  std::atomic<int> go{0};  // 1 start, 2 abort
  std::atomic<int> stop{0};
  std::atomic<int> warmed_up{0};  // the warm-up has ended: the measured part begins
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "counters are shared between processes");

// The parent's and children's common memory: a header and one slot per process.
class SharedState {
 public:
  explicit SharedState(unsigned procs) : procs_(procs) {
    bytes_ = kSlotsOffset + procs * sizeof(ProcSlot);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Error(std::string("cannot map shared memory: ") + std::strerror(errno));
    header_ = new (p) SharedHeader;
    slots_ = reinterpret_cast<ProcSlot*>(static_cast<char*>(p) + kSlotsOffset);
    for (unsigned i = 0; i < procs; ++i) new (&slots_[i]) ProcSlot;
  }
  ~SharedState() { munmap(header_, bytes_); }
  SharedState(const SharedState&) = delete;
  SharedState& operator=(const SharedState&) = delete;

  SharedHeader& header() { return *header_; }
  ProcSlot& slot(unsigned i) { return slots_[i]; }
  bool stopped() const { return header_->stop.load(std::memory_order_relaxed) != 0; }

 private:
  // The slots follow the header at their own alignment (their counters are 8-byte atomics).
  static constexpr size_t kSlotsOffset =
      (sizeof(SharedHeader) + alignof(ProcSlot) - 1) / alignof(ProcSlot) * alignof(ProcSlot);
  unsigned procs_;
  size_t bytes_;
  SharedHeader* header_;
  ProcSlot* slots_;
};

struct ThreadTotals {
  uint64_t reads = 0, writes = 0, sink = 0;
};

// One thread: claims positions of the process's sequence and performs their operations.
void worker(detail::Target& target, const PageSequence& sequence, std::atomic<uint64_t>& next, uint64_t limit,
            bool verify, SharedState& shared, ProcSlot& slot, ThreadTotals& totals) {
  void* scratch_memory = nullptr;
  if (posix_memalign(&scratch_memory, kPageSize, kPageSize) != 0) {
    slot.record_error("out of memory for an I/O buffer");
    shared.header().stop.store(1);
    return;
  }
  uint64_t* scratch = static_cast<uint64_t*>(scratch_memory);
  try {
    while (!shared.stopped()) {
      const uint64_t first = next.fetch_add(kClaim, std::memory_order_relaxed);
      if (first >= limit) break;
      const uint64_t end = std::min(limit, first + kClaim);
      uint64_t done = 0, written = 0;
      for (uint64_t k = first; k < end && !shared.stopped(); ++k, ++done) {
        const Op op = sequence(k);
        if (op.write) {
          if (!target.write(op.page, scratch, verify)) slot.record_mismatch(op.page, "wrong identity before a write");
          ++totals.writes;
          ++written;
          continue;
        }
        const uint64_t* words = target.read(op.page, scratch);
        if (verify) {
          if (!check_page(op.page, words)) slot.record_mismatch(op.page, "wrong content on a read");
        } else {
          totals.sink += *static_cast<volatile const uint64_t*>(words);  // the load is the operation
        }
        ++totals.reads;
      }
      // Operations before writes: the parent, reading writes first, never sees more writes than operations.
      slot.ops_done.fetch_add(done);
      slot.writes_done.fetch_add(written);
    }
  } catch (const std::exception& e) {
    slot.record_error(e.what());
    shared.header().stop.store(1);
  }
  std::free(scratch_memory);
}

// A forked process: open the file, wait for the start, run the threads, sync, report, exit.
[[noreturn]] void process_main(const Config& c, const SequenceParams& params, unsigned proc, uint64_t buffer_bytes,
                               SharedState& shared) {
  ProcSlot& slot = shared.slot(proc);
  {
    std::unique_ptr<detail::Target> target;
    try {
      target = detail::open_target(c, params.pages, buffer_bytes);
    } catch (const std::exception& e) {
      slot.record_error(e.what());
      slot.state.store(2);
      _exit(1);
    }
    const PageSequence sequence(params, proc);
    slot.state.store(1);
    while (shared.header().go.load() == 0) sleep_seconds(50e-6);
    if (shared.header().go.load() == 2) _exit(0);

    const uint64_t limit = c.ops == 0 ? UINT64_MAX : c.ops / c.procs + (proc < c.ops % c.procs ? 1 : 0);
    std::atomic<uint64_t> next{0};
    std::vector<ThreadTotals> totals(c.threads);
    std::vector<std::thread> threads;
    std::thread warm_marker;  // takes the buffer's counters when the parent ends the warm-up
    if (c.warmup_seconds > 0)
      warm_marker = std::thread([&] {
        while (!shared.header().warmed_up.load() && !shared.stopped()) sleep_seconds(1e-3);
        if (shared.header().warmed_up.load() && target->stats(&slot.warm_stats)) slot.has_warm_stats = 1;
      });
    try {
      for (unsigned t = 0; t < c.threads; ++t)
        threads.emplace_back(worker, std::ref(*target), std::cref(sequence), std::ref(next), limit, c.verify,
                             std::ref(shared), std::ref(slot), std::ref(totals[t]));
    } catch (const std::exception& e) {
      slot.record_error(("cannot start " + std::to_string(c.threads) + " threads: " + e.what()).c_str());
      shared.header().stop.store(1);
    }
    for (std::thread& t : threads) t.join();
    slot.ops_end = now_seconds();
    if (warm_marker.joinable()) warm_marker.join();
    for (const ThreadTotals& t : totals) {
      slot.reads += t.reads;
      slot.writes += t.writes;
    }
    if (c.sequence.write_fraction > 0 && !slot.error_claimed.load()) {
      try {
        target->sync();
      } catch (const std::exception& e) {
        slot.record_error(e.what());
      }
    }
    slot.sync_end = now_seconds();
    if (target->stats(&slot.stats)) slot.has_stats = 1;
  }  // unmaps (and for dimmap frees the buffer) before exiting
  std::fflush(stderr);
  _exit(slot.error_claimed.load() ? 1 : 0);
}

std::string describe_exit(unsigned proc, int status, const Config& c) {
  std::string who = "process " + std::to_string(proc);
  if (WIFSIGNALED(status)) {
    std::string s = who + " was killed by " + strsignal(WTERMSIG(status));
    if (WTERMSIG(status) == SIGBUS)
      s += " (a page could not be read or mapped" + std::string(c.mode == Mode::dimmap ? ": see dimmap's log)" : ")");
    if (WTERMSIG(status) == SIGKILL) s += " (out of memory? a memory budget's OOM killer?)";
    return s;
  }
  return who + " exited with status " + std::to_string(WEXITSTATUS(status));
}

// Where the measured part begins: the common start, or the warm-up's end.
struct MeasureStart {
  double time = 0;
  std::vector<uint64_t> ops, writes;  // per process, done by then
  bool has_device = false;
  detail::DeviceRequests device;  // completed by the file's device by then
  bool has_host = false;
  HostCounters host;  // the machine's counters by then
};

// The forked processes of one run, as the parent sees them.
class ProcessGroup {
 public:
  ProcessGroup(const Config& c, SharedState& shared)
      : c_(c), shared_(shared), pids_(c.procs, -1), status_(c.procs, 0), exited_(c.procs, false) {}
  ~ProcessGroup() {  // on an error path: no process may outlive the run
    if (running_ == 0) return;
    shared_.header().stop.store(1);
    shared_.header().go.store(2);
    while (running_) reap(true);
  }
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  void start(const SequenceParams& params, uint64_t buffer_bytes_per_proc) {
    std::fflush(stdout);  // or the children would print the parent's buffered output again
    std::fflush(stderr);
    for (unsigned p = 0; p < c_.procs; ++p) {
      const pid_t pid = fork();
      if (pid == 0) process_main(c_, params, p, buffer_bytes_per_proc, shared_);
      if (pid < 0) {
        fail(std::string("cannot fork: ") + std::strerror(errno));
        return;
      }
      pids_[p] = pid;
      ++running_;
    }
  }

  // Waits until every process has opened the file; throws if one could not.
  void wait_until_ready() {
    for (;;) {
      unsigned ready = 0;
      for (unsigned p = 0; p < c_.procs; ++p) ready += pids_[p] >= 0 && shared_.slot(p).state.load() == 1;
      reap(false);
      if (!failure_.empty()) throw Error(failure_);  // the destructor aborts the others
      if (ready == c_.procs) return;
      sleep_seconds(1e-3);
    }
  }

  // Starts every process at once; returns the common start time.
  double go() {
    const double t0 = now_seconds();
    shared_.header().go.store(1);
    return t0;
  }

  // Ends the warm-up (marking where the measured part begins in *start), stops the processes
  // --seconds after it, prints progress, and reaps them all.
  void supervise(double t0, const std::string& device_stat, MeasureStart* start) {
    double next_progress = t0 + c_.progress_seconds, last_time = t0;
    uint64_t last_ops = 0;
    bool warming = c_.warmup_seconds > 0;
    mark_start(t0, device_stat, start);
    while (running_) {
      sleep_seconds(0.01);
      reap(false);
      const double t = now_seconds();
      if (warming && t - t0 >= c_.warmup_seconds) {
        mark_start(t, device_stat, start);
        shared_.header().warmed_up.store(1);
        warming = false;
      }
      if (c_.seconds > 0 && !warming && t - start->time >= c_.seconds) shared_.header().stop.store(1);
      if (c_.progress_seconds > 0 && t >= next_progress) {
        uint64_t ops = 0;
        for (unsigned p = 0; p < c_.procs; ++p) ops += shared_.slot(p).ops_done.load();
        std::fprintf(stderr, "lriot: %6.1f s  %12llu ops  %10.0f ops/s%s\n", t - t0,
                     static_cast<unsigned long long>(ops), static_cast<double>(ops - last_ops) / (t - last_time),
                     warming ? "  (warm-up)" : "");
        last_ops = ops;
        last_time = t;
        next_progress = t + c_.progress_seconds;
      }
    }
    if (!failure_.empty()) throw Error(failure_);
  }

 private:
  void mark_start(double t, const std::string& device_stat, MeasureStart* start) {
    start->time = t;
    start->ops.assign(c_.procs, 0);
    start->writes.assign(c_.procs, 0);
    for (unsigned p = 0; p < c_.procs; ++p) {
      start->writes[p] = shared_.slot(p).writes_done.load();
      start->ops[p] = shared_.slot(p).ops_done.load();
    }
    start->has_device = detail::read_device_requests(device_stat, &start->device);
    start->has_host = detail::read_host_counters(&start->host);
  }

  void fail(const std::string& why) {
    if (failure_.empty()) failure_ = why;
    shared_.header().stop.store(1);
  }

  void reap(bool block) {
    for (unsigned p = 0; p < c_.procs; ++p) {
      if (pids_[p] < 0 || exited_[p]) continue;
      if (waitpid(pids_[p], &status_[p], block ? 0 : WNOHANG) != pids_[p]) continue;
      exited_[p] = true;
      --running_;
      if (!WIFEXITED(status_[p]) || WEXITSTATUS(status_[p]) != 0)
        fail(shared_.slot(p).error_claimed.load() ? std::string(shared_.slot(p).error)
                                                  : describe_exit(p, status_[p], c_));
    }
  }

  const Config& c_;
  SharedState& shared_;
  std::vector<pid_t> pids_;
  std::vector<int> status_;
  std::vector<bool> exited_;
  unsigned running_ = 0;
  std::string failure_;
};

// The counters of `now` less those of `then`; the gauges (buffer, resident and dirty pages) as now.
dimmap_stats_t counters_since(const dimmap_stats_t& now, const dimmap_stats_t& then) {
  dimmap_stats_t d = now;
  for (const dimmap::support::StatsField& f : dimmap::support::kStatsFields)
    if (!f.gauge) d.*f.member = now.*f.member - std::min(now.*f.member, then.*f.member);
  return d;
}

// Adds up what the processes reported from the start of the measured part on.
void collect(SharedState& shared, unsigned procs, const MeasureStart& start, Result& r) {
  const double t0 = start.time;
  double ops_end = t0, sync_end = t0;
  for (unsigned p = 0; p < procs; ++p) {
    ProcSlot& s = shared.slot(p);
    // The live counts were read writes first (and are kept operations first): a claim of
    // operations under way may count among the operations and not yet among the writes.
    const uint64_t warm_writes = std::min(start.writes[p], s.writes);
    const uint64_t warm_reads = std::min(start.ops[p] - std::min(start.ops[p], start.writes[p]), s.reads);
    r.warmup_reads += warm_reads;
    r.warmup_writes += warm_writes;
    r.reads += s.reads - warm_reads;
    r.writes += s.writes - warm_writes;
    ops_end = std::max(ops_end, s.ops_end);
    sync_end = std::max(sync_end, s.sync_end);
    r.sync_seconds = std::max(r.sync_seconds, s.sync_end - s.ops_end);
    r.mismatches += s.mismatches.load();
    if (r.first_mismatch.empty() && s.mismatch_claimed.load()) r.first_mismatch = s.mismatch;
    if (s.has_stats) {
      r.has_dimmap_stats = true;
      dimmap::support::operator+=(r.dimmap, s.has_warm_stats ? counters_since(s.stats, s.warm_stats) : s.stats);
    }
  }
  r.ops = r.reads + r.writes;
  r.run_seconds = ops_end - t0;
  r.seconds = sync_end - t0;
}

// A regular file or, as in the papers' raw-device runs, a block device.
uint64_t file_size(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open --file '" + path + "': " + std::strerror(errno));
  try {
    const uint64_t bytes = dimmap::file_or_device_size(fd, path);
    close(fd);
    return bytes;
  } catch (...) {
    close(fd);
    throw;
  }
}

}  // namespace

Result run(const Config& c) {
  validate(c);
  Result r;
  r.config = c;
  r.file_bytes = file_size(c.file);
  r.pages = r.file_bytes / kPageSize;
  if (r.pages == 0)
    throw Error("--file '" + c.file + "' is " + std::to_string(r.file_bytes) + " bytes, smaller than one 4 KiB page");
  SequenceParams params = c.sequence;
  params.pages = r.pages;
  params.procs = c.procs;
  check_sequence_params(params);
  r.config.sequence = params;
  r.hot_pages = hot_pages(params);
  if (c.mode == Mode::dimmap) {
    uint64_t bytes = c.buffer_bytes;
    if (!bytes) {  // DIMMAP_BUFFER, else the memory-limit default
      dimmap_config defaults;
      if (dimmap_config_init(&defaults) < 0) throw Error(std::string("dimmap configuration: ") + dimmap_last_error());
      bytes = defaults.buffer_bytes;
    }
    r.buffer_bytes_per_proc = bytes / c.procs;
  }
  try {
    r.resident_at_start = budget::resident_fraction(c.file);
  } catch (const std::exception&) {
    r.resident_at_start = -1;  // informative only
  }
  uint64_t counters_before = 0;
  if (c.verify) {
    FileCheck before = verify_pattern_file(c.file);
    if (before.bad_pages)
      throw Error("--verify: '" + c.file + "' does not hold the LRIOT pattern (page " +
                  std::to_string(before.first_bad_page) + " is wrong; make the file with --create)");
    counters_before = before.counter_sum;
  }

  const std::string device_stat = detail::device_stat_file(c.file);
  SharedState shared(c.procs);
  ProcessGroup group(c, shared);
  group.start(params, r.buffer_bytes_per_proc);
  group.wait_until_ready();
  const double t0 = group.go();
  MeasureStart start;
  group.supervise(t0, device_stat, &start);
  collect(shared, c.procs, start, r);
  HostCounters host_end;
  if (start.has_host && detail::read_host_counters(&host_end)) {
    r.has_host = true;
    r.host = detail::host_counters_since(host_end, start.host);
  }
  detail::DeviceRequests end;
  if (start.has_device && detail::read_device_requests(device_stat, &end)) {
    r.has_device_requests = true;
    r.device_reads = end.reads - start.device.reads;
    r.device_writes = end.writes - start.device.writes;
  }
  if (c.verify) {
    FileCheck after = verify_pattern_file(c.file);
    r.verified = true;
    r.bad_pages_after = after.bad_pages;
    r.counter_delta = after.counter_sum - counters_before;
  }
  return r;
}

}  // namespace lriot
