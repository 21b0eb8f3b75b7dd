// stats_text.cpp - the counters of struct dimmap_stats in words and as key=value pairs.
#include <dimmap/placement.hpp>
#include <dimmap/support/stats_text.hpp>

#include <cstdint>
#include <cstdio>

namespace dimmap::support {
namespace {

std::string u64(uint64_t v) { return std::to_string(v); }
unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

#define DIMMAP_STATS_FIELD(name, gauge) {#name, &dimmap_stats_t::name, gauge}
const StatsField kStatsFields[19] = {
    DIMMAP_STATS_FIELD(faults, false),         DIMMAP_STATS_FIELD(misses, false),
    DIMMAP_STATS_FIELD(recoveries, false),     DIMMAP_STATS_FIELD(hits, false),
    DIMMAP_STATS_FIELD(write_faults, false),   DIMMAP_STATS_FIELD(hot_promotions, false),
    DIMMAP_STATS_FIELD(evictions, false),      DIMMAP_STATS_FIELD(eviction_batches, false),
    DIMMAP_STATS_FIELD(writebacks, false),     DIMMAP_STATS_FIELD(write_ios, false),
    DIMMAP_STATS_FIELD(bytes_read, false),     DIMMAP_STATS_FIELD(bytes_written, false),
    DIMMAP_STATS_FIELD(read_errors, false),    DIMMAP_STATS_FIELD(write_errors, false),
    DIMMAP_STATS_FIELD(buffer_pages, true),    DIMMAP_STATS_FIELD(resident_pages, true),
    DIMMAP_STATS_FIELD(dirty_pages, true),     DIMMAP_STATS_FIELD(zero_fills, false),
    DIMMAP_STATS_FIELD(prefetched, false),
};
#undef DIMMAP_STATS_FIELD
static_assert(sizeof kStatsFields / sizeof kStatsFields[0] == sizeof(dimmap_stats_t) / sizeof(uint64_t),
              "kStatsFields lists every field of struct dimmap_stats");

std::string stats_text(const dimmap_stats_t& s) {
  return "faults " + u64(s.faults) + " (misses " + u64(s.misses) + ", recoveries " + u64(s.recoveries) + ", hits " +
         u64(s.hits) + ", write faults " + u64(s.write_faults) + "), hot promotions " + u64(s.hot_promotions) +
         ", evictions " + u64(s.evictions) + " in " + u64(s.eviction_batches) + " batches, writebacks " +
         u64(s.writebacks) + " in " + u64(s.write_ios) + " writes, read " + format_size(s.bytes_read) + ", wrote " +
         format_size(s.bytes_written) + ", errors " + u64(s.read_errors) + "/" + u64(s.write_errors) +
         ", prefetched " + u64(s.prefetched) + ", zero fills " + u64(s.zero_fills);
}

int format_stats_fields(char* buf, size_t size, const dimmap_stats_t& s, const char* prefix) {
  size_t length = 0;  // what snprintf would have written in all, as snprintf returns
  for (const StatsField& f : kStatsFields) {
    if (f.gauge) continue;
    const size_t room = length < size ? size - length : 0;
    const int n = std::snprintf(room ? buf + length : nullptr, room, "%s%s%s=%llu", length ? " " : "", prefix, f.name,
                                ull(s.*f.member));
    if (n < 0) return n;
    length += static_cast<size_t>(n);
  }
  return static_cast<int>(length);
}

dimmap_stats_t& operator+=(dimmap_stats_t& sum, const dimmap_stats_t& s) {
  // Every field is a uint64_t counter or gauge; summing gauges (resident pages of several
  // buffers) gives their total too.
  static_assert(sizeof(dimmap_stats_t) % sizeof(uint64_t) == 0, "dimmap_stats holds only uint64_t fields");
  auto* a = reinterpret_cast<uint64_t*>(&sum);
  const auto* b = reinterpret_cast<const uint64_t*>(&s);
  for (size_t i = 0; i < sizeof(dimmap_stats_t) / sizeof(uint64_t); ++i) a[i] += b[i];
  return sum;
}

}  // namespace dimmap::support
