// perma.hpp - the PerMA NVRAM latency model applied to the engine's I/O: each page read or
// write completes no earlier than the model says, so a RAM-backed file behaves like a
// device of the modelled technology.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io_queue.hpp"

extern "C" {
#include "perma_model.h"
}

namespace dimmap::detail {

// Parses a preset name (lcurr, lnxt1, lnxt2, lnxt3, sim-opt, vm-disk) or explicit "D,R,P,E,C" with D
// and R in microseconds, P and C in picoseconds per byte, E the bus efficiency as a fraction
// (0 < E <= 1, or 0 for unlimited bandwidth). Returns 0 or -EINVAL with fail() set.
int parse_perma(const std::string& spec, perma_model* out);

// Wraps an I/O queue: holds each completion until the model's latency has passed since
// submission. The delay is waited out by the server: spin, yield or sleep by its length.
std::unique_ptr<IoQueue> with_perma_latency(std::unique_ptr<IoQueue> inner, const perma_model& model);

// Nanoseconds on the steady clock, the time base of a modelled latency.
int64_t perma_now_ns();

// Returns once perma_now_ns() >= due, as PerMA waited: sleeps while the wait is long, then
// yields, and spins through the last microseconds. For the thread that takes its own miss.
void perma_wait_until(int64_t due);

}  // namespace dimmap::detail
