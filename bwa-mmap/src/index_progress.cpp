// index_progress.cpp - IndexProgress's thread and the libbwa calls that mark the steps.
//
// bwa_idx_build() (bwtindex.c) runs: bns_fasta2bntseq (pack both strands), bwt_pac2bwt (the
// BWT: is, bwtsw or rb2), bwt_dump_bwt, bwt_restore_bwt + bwt_bwtupdate_core (Occ counts),
// bwt_dump_bwt, bns_fasta2bntseq (forward strand only), bwt_restore_bwt, bwt_cal_sa (SA
// sampling), bwt_dump_sa. bwt_pac2bwt and bwt_bwtupdate_core live in the same object as
// bwa_idx_build, so --wrap cannot see them: their steps start when the call before them
// returns and end when the call after them starts.
//
// SA sampling walks the text backwards and stores every 32nd suffix-array value into a
// zeroed array, in an order spread evenly over it; the share of non-zero entries among 256
// evenly spaced ones estimates the fraction done (256 reads per line, whatever the genome).
#include <bwammap/index_progress.hpp>
#include <dimmap/placement.hpp>

#include <zlib.h>

#include <bwa/bntseq.h>
#include <bwa/bwa.h>
#include <bwa/bwt.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

extern "C" {
int64_t __real_bns_fasta2bntseq(gzFile fp_fa, const char* prefix, int for_only);
int64_t __wrap_bns_fasta2bntseq(gzFile fp_fa, const char* prefix, int for_only);
void __real_bwt_dump_bwt(const char* fn, const bwt_t* bwt);
void __wrap_bwt_dump_bwt(const char* fn, const bwt_t* bwt);
void __real_bwt_dump_sa(const char* fn, const bwt_t* bwt);
void __wrap_bwt_dump_sa(const char* fn, const bwt_t* bwt);
bwt_t* __real_bwt_restore_bwt(const char* fn);
bwt_t* __wrap_bwt_restore_bwt(const char* fn);
void __real_bwt_cal_sa(bwt_t* bwt, int intv);
void __wrap_bwt_cal_sa(bwt_t* bwt, int intv);
}

namespace bwammap {

using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct IndexProgress::Ticker {
  std::chrono::duration<double> interval;
  Clock::time_point start = Clock::now();
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  std::string step;  // "" between steps
  Clock::time_point step_start;
  const bwt_t* sampling = nullptr;  // during SA sampling: the bwt_t being filled
  bool step_reported = false;       // printed a line for this step (so print its end too)
  // libbwa announces most steps with "[bwa_index] Step... " and ends that line with the
  // step's time: our first line inside such a line starts with a newline of its own.
  bool bwa_line_open = false, bwa_line_broken = false;
  int restores = 0;
  std::thread thread;

  enum class BwaLine { closed, opens, continues };  // what libbwa's stderr line is at this step
  void begin(const std::string& name, BwaLine line, const bwt_t* sa_of = nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    finish_step();
    step = name;
    step_start = Clock::now();
    sampling = sa_of;
    step_reported = false;
    if (line != BwaLine::continues) {
      bwa_line_open = line == BwaLine::opens && bwa_verbose >= 3;
      bwa_line_broken = false;
    }
  }
  void end() {
    std::lock_guard<std::mutex> lock(mu);
    finish_step();
    step.clear();
    sampling = nullptr;
  }
  void finish_step() {  // mu held
    if (!step.empty() && step_reported)
      std::fprintf(stderr, "[bwa-mmap index] %s: done in %.1f s (%.1f s since the start)\n", step.c_str(),
                   seconds_since(step_start), seconds_since(start));
  }
  void report() {  // mu held
    if (step.empty()) return;
    std::string done;
    if (sampling) done = std::to_string(static_cast<int>(100 * sampled_fraction(sampling))) + "% after ";
    // libbwa's "<seconds> sec" then ends up alone on the line after our last.
    if (bwa_line_open && !bwa_line_broken) std::fputc('\n', stderr);
    bwa_line_broken = true;
    std::fprintf(stderr, "[bwa-mmap index] %s: %s%.1f s (%.1f s since the start)\n", step.c_str(), done.c_str(),
                 seconds_since(step_start), seconds_since(start));
    step_reported = true;
  }
  void run() {
    std::unique_lock<std::mutex> lock(mu);
    auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval);
    while (!stop) {
      if (wake.wait_until(lock, next, [&] { return stop; })) break;
      report();
      next = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval);
    }
  }

  static double sampled_fraction(const bwt_t* bwt) {
    // Read while libbwa writes: relaxed atomic loads of aligned words, an estimate only.
    const bwtint_t n = __atomic_load_n(&bwt->n_sa, __ATOMIC_RELAXED);
    bwtint_t* sa = __atomic_load_n(&bwt->sa, __ATOMIC_RELAXED);
    if (!sa || n == 0) return 0;
    const bwtint_t samples = n < 256 ? n : 256;
    bwtint_t filled = 0;
    for (bwtint_t i = 0; i < samples; ++i)
      if (__atomic_load_n(&sa[i * n / samples], __ATOMIC_RELAXED) != 0) ++filled;
    return static_cast<double>(filled) / samples;
  }
};

namespace {
std::mutex g_active_mu;
IndexProgress::Ticker* g_active = nullptr;  // the ticker of the index being built, if any

// Runs fn with the active ticker (if any) while no other thread can destroy it.
template <class Fn>
void with_ticker(Fn fn) {
  std::lock_guard<std::mutex> lock(g_active_mu);
  if (g_active) fn(*g_active);
}
}  // namespace

IndexProgress::IndexProgress(double interval_seconds) {
  if (interval_seconds <= 0) return;
  ticker_ = std::make_unique<Ticker>();
  ticker_->interval = std::chrono::duration<double>(interval_seconds);
  ticker_->thread = std::thread([t = ticker_.get()] { t->run(); });
  std::lock_guard<std::mutex> lock(g_active_mu);
  g_active = ticker_.get();
}

IndexProgress::~IndexProgress() {
  if (!ticker_) return;
  {
    std::lock_guard<std::mutex> lock(g_active_mu);
    g_active = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(ticker_->mu);
    ticker_->stop = true;
  }
  ticker_->wake.notify_all();
  ticker_->thread.join();
}

double progress_interval_from_env() {
  const char* v = std::getenv("BWA_MMAP_PROGRESS_SECONDS");
  if (!v || !*v) return 10;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || s != s)
    throw dimmap::Error(std::string("BWA_MMAP_PROGRESS_SECONDS='") + v + "': expected seconds (0 = no progress lines)");
  return s;
}

}  // namespace bwammap

using bwammap::with_ticker;
using Ticker = bwammap::IndexProgress::Ticker;

extern "C" int64_t __wrap_bns_fasta2bntseq(gzFile fp_fa, const char* prefix, int for_only) {
  with_ticker([&](Ticker& t) {
    t.begin(for_only ? "packing the forward strand" : "packing the FASTA", Ticker::BwaLine::opens);
  });
  const int64_t r = __real_bns_fasta2bntseq(fp_fa, prefix, for_only);
  // The BWT is built next, inside bwt_pac2bwt (not wrappable: see above).
  with_ticker([&](Ticker& t) { for_only ? t.end() : t.begin("BWT construction", Ticker::BwaLine::closed); });
  return r;
}

extern "C" void __wrap_bwt_dump_bwt(const char* fn, const bwt_t* bwt) {
  // First the new BWT (after "Construct BWT...\n"), then the updated one (in "Update BWT... ").
  with_ticker([](Ticker& t) {
    t.begin("writing the BWT", t.restores ? Ticker::BwaLine::continues : Ticker::BwaLine::closed);
  });
  __real_bwt_dump_bwt(fn, bwt);
  with_ticker([](Ticker& t) { t.end(); });
}

extern "C" bwt_t* __wrap_bwt_restore_bwt(const char* fn) {
  bwt_t* bwt = __real_bwt_restore_bwt(fn);
  // The first BWT read back gets its Occ counts next (bwt_bwtupdate_core, not wrappable).
  with_ticker([](Ticker& t) {
    if (t.restores++ == 0) t.begin("BWT update (Occ counts)", Ticker::BwaLine::opens);
  });
  return bwt;
}

extern "C" void __wrap_bwt_cal_sa(bwt_t* bwt, int intv) {
  with_ticker([&](Ticker& t) { t.begin("SA sampling", Ticker::BwaLine::opens, bwt); });
  __real_bwt_cal_sa(bwt, intv);
  with_ticker([](Ticker& t) { t.end(); });
}

extern "C" void __wrap_bwt_dump_sa(const char* fn, const bwt_t* bwt) {
  with_ticker([](Ticker& t) { t.begin("writing the SA", Ticker::BwaLine::continues); });
  __real_bwt_dump_sa(fn, bwt);
  with_ticker([](Ticker& t) { t.end(); });
}
