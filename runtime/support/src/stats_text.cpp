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

std::string stats_text(const dimmap_stats_t& s) {
  return "faults " + u64(s.faults) + " (misses " + u64(s.misses) + ", recoveries " + u64(s.recoveries) + ", hits " +
         u64(s.hits) + ", write faults " + u64(s.write_faults) + "), hot promotions " + u64(s.hot_promotions) +
         ", evictions " + u64(s.evictions) + " in " + u64(s.eviction_batches) + " batches, writebacks " +
         u64(s.writebacks) + " in " + u64(s.write_ios) + " writes, read " + format_size(s.bytes_read) + ", wrote " +
         format_size(s.bytes_written) + ", errors " + u64(s.read_errors) + "/" + u64(s.write_errors) +
         ", prefetched " + u64(s.prefetched) + ", zero fills " + u64(s.zero_fills);
}

int format_stats_fields(char* buf, size_t size, const dimmap_stats_t& s, const char* prefix) {
  const char* p = prefix;
  return std::snprintf(buf, size,
                       "%sfaults=%llu %smisses=%llu %srecoveries=%llu %shits=%llu %swrite_faults=%llu "
                       "%shot_promotions=%llu %sevictions=%llu %seviction_batches=%llu %swritebacks=%llu "
                       "%swrite_ios=%llu %sbytes_read=%llu %sbytes_written=%llu %sread_errors=%llu "
                       "%swrite_errors=%llu %sprefetched=%llu %szero_fills=%llu",
                       p, ull(s.faults), p, ull(s.misses), p, ull(s.recoveries), p, ull(s.hits), p,
                       ull(s.write_faults), p, ull(s.hot_promotions), p, ull(s.evictions), p,
                       ull(s.eviction_batches), p, ull(s.writebacks), p, ull(s.write_ios), p, ull(s.bytes_read), p,
                       ull(s.bytes_written), p, ull(s.read_errors), p, ull(s.write_errors), p, ull(s.prefetched),
                       p, ull(s.zero_fills));
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
