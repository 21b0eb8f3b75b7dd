// stats_text.hpp - a DI-MMAP buffer's counters (struct dimmap_stats) for people and for logs.
#pragma once

#include <dimmap/dimmap.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dimmap::support {

// Every field of struct dimmap_stats with its name, in the struct's order: the one list the
// text, key=value and JSON forms are made from. Gauges (buffer_pages, resident_pages,
// dirty_pages) describe the buffer now rather than count events.
struct StatsField {
  const char* name;
  uint64_t dimmap_stats_t::*member;
  bool gauge;
};
extern const StatsField kStatsFields[19];

// Every counter as one sentence: "faults 12 (misses 3, recoveries 1, hits 8, write faults 0),
// hot promotions 2, evictions 4 in 1 batches, writebacks 0 in 0 writes, read 12K, wrote 0,
// errors 0/0, prefetched 0, zero fills 0".
std::string stats_text(const dimmap_stats_t& s);

// The counters (not the gauges) as "key=value" pairs separated by spaces, each key prefixed by `prefix` (for
// lines that other programs parse). Writes into buf without allocating (usable in the preload
// library's exit path); returns the length snprintf would have produced.
int format_stats_fields(char* buf, size_t size, const dimmap_stats_t& s, const char* prefix = "");

// The counters summed field by field (several processes, ranks or buffers).
dimmap_stats_t& operator+=(dimmap_stats_t& sum, const dimmap_stats_t& s);

}  // namespace dimmap::support
