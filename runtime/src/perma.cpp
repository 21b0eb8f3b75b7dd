// perma.cpp - PerMA latency model: spec parsing and the delaying I/O queue.
#include "perma.hpp"

#include <sched.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <queue>
#include <unordered_map>
#include <vector>

#include "c_boundary.hpp"
#include "log.hpp"

namespace dimmap::detail {

int64_t perma_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void perma_wait_until(int64_t due) {
  // The application's thread keeps its own timer slack (50 us by default): a sleep ends up
  // to that much late, so it sleeps only through the part of the wait that is longer.
  constexpr int64_t kSleepAbove = 200000, kYieldAbove = 20000;
  for (int64_t left; (left = due - perma_now_ns()) > 0;) {
    if (left > kSleepAbove) {
      const int64_t nap = left - kSleepAbove / 2;
      const struct timespec ts = {static_cast<time_t>(nap / 1000000000), static_cast<long>(nap % 1000000000)};
      nanosleep(&ts, nullptr);
    } else if (left > kYieldAbove) {
      sched_yield();
    }
  }
}

namespace {

class LatencyQueue final : public IoQueue {
 public:
  LatencyQueue(std::unique_ptr<IoQueue> inner, const perma_model& m) : inner_(std::move(inner)), model_(m) {}

  void push(const IoOp& op) override {
    due_[op.tag] = due_for(op);
    inner_->push(op);
  }
  // The model's device answers in its own time, whatever the real read took: a read done at
  // once waits here as one through the inner queue would, without a kernel worker's wake-up
  // added to every modelled latency.
  bool hold_done(const IoOp& op, ssize_t result) override {
    held_.push(Held{due_for(op), IoDone{op.tag, result}});
    return true;
  }
  int submit() override { return inner_->submit(); }

  size_t reap(IoDone* out, size_t max) override {
    scratch_.resize(256);
    for (size_t n; (n = inner_->reap(scratch_.data(), scratch_.size())) > 0;) {
      for (size_t i = 0; i < n; ++i) {
        auto it = due_.find(scratch_[i].tag);
        held_.push(Held{it == due_.end() ? 0 : it->second, scratch_[i]});
        if (it != due_.end()) due_.erase(it);
      }
    }
    const int64_t now = perma_now_ns();
    size_t k = 0;
    while (k < max && !held_.empty() && held_.top().due <= now) {
      out[k++] = held_.top().done;
      held_.pop();
      --in_flight_;
    }
    return k;
  }

  int event_fd() const override { return inner_->event_fd(); }
  const char* name() const override { return inner_->name(); }
  int64_t ns_until_next() const override {
    if (held_.empty()) return -1;
    const int64_t d = held_.top().due - perma_now_ns();
    return d < 0 ? 0 : d;
  }

 private:
  int64_t due_for(const IoOp& op) {
    ++in_flight_;
    return perma_now_ns() + static_cast<int64_t>(perma_latency_ns(&model_, in_flight_, op.len));
  }
  struct Held {
    int64_t due;
    IoDone done;
    bool operator<(const Held& o) const { return due > o.due; }  // min-heap on due
  };
  std::unique_ptr<IoQueue> inner_;
  perma_model model_;
  uint32_t in_flight_ = 0;
  std::unordered_map<uint64_t, int64_t> due_;
  std::priority_queue<Held> held_;
  std::vector<IoDone> scratch_;
};

bool parse_number(const std::string& text, double* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(text.c_str(), &end);
  return !text.empty() && !errno && *end == '\0' && std::isfinite(*out);
}

}  // namespace

int parse_perma(const std::string& spec, perma_model* m) {
  if (perma_preset(spec.c_str(), m) == 0) return 0;
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t comma; (comma = spec.find(',', start)) != std::string::npos; start = comma + 1)
    parts.push_back(spec.substr(start, comma - start));
  parts.push_back(spec.substr(start));
  if (parts.size() != 5)
    return fail(EINVAL,
                "DIMMAP_PERMA='%s': not a preset (lcurr, lnxt1, lnxt2, lnxt3, sim-opt, vm-disk) nor five values D,R,P,E,C "
                "(D, R in microseconds; P, C in picoseconds per byte; E bus efficiency in (0,1], 0 = unlimited)",
                spec.c_str());
  double v[5];
  const char* names[5] = {"D", "R", "P", "E", "C"};
  for (int i = 0; i < 5; ++i) {
    if (!parse_number(parts[i], &v[i]) || v[i] < 0)
      return fail(EINVAL, "DIMMAP_PERMA='%s': %s='%s' is not a non-negative number", spec.c_str(), names[i],
                  parts[i].c_str());
  }
  // Sanity: one second of device latency or a microsecond per byte is not a memory device.
  if (v[0] > 1e6 || v[1] > 1e6)
    return fail(EINVAL, "DIMMAP_PERMA='%s': D and R must be at most 1000000 microseconds", spec.c_str());
  if (v[2] > 1e6 || v[4] > 1e6)
    return fail(EINVAL, "DIMMAP_PERMA='%s': P and C must be at most 1000000 picoseconds per byte", spec.c_str());
  if (v[3] > 1.0) return fail(EINVAL, "DIMMAP_PERMA='%s': E is a fraction in (0, 1] (or 0)", spec.c_str());
  m->d_ns = static_cast<uint64_t>(v[0] * 1000.0 + 0.5);
  m->r_ns = static_cast<uint64_t>(v[1] * 1000.0 + 0.5);
  m->p_ps = static_cast<uint32_t>(v[2] + 0.5);
  m->e_pct = static_cast<uint32_t>(v[3] * 100.0 + 0.5);
  if (v[3] > 0 && m->e_pct == 0) m->e_pct = 1;
  m->c_ps = static_cast<uint32_t>(v[4] + 0.5);
  return 0;
}

std::unique_ptr<IoQueue> with_perma_latency(std::unique_ptr<IoQueue> inner, const perma_model& model) {
  return std::make_unique<LatencyQueue>(std::move(inner), model);
}

}  // namespace dimmap::detail

extern "C" int dimmap_perma_latency_ns(const char* spec, unsigned concurrent, uint64_t bytes, uint64_t* out_ns) {
  return dimmap::detail::guard_status("dimmap_perma_latency_ns", [&]() -> int {
    perma_model m;
    if (!spec || !out_ns) return dimmap::detail::fail(EINVAL, "dimmap_perma_latency_ns: null argument");
    if (int rc = dimmap::detail::parse_perma(spec, &m); rc < 0) return rc;
    *out_ns = perma_latency_ns(&m, concurrent, bytes);
    return 0;
  });
}
