// report.cpp - LRIOT results as text and as JSON.
#include <dimmap/support/json_summary.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/stats_text.hpp>
#include <lriot/lriot.hpp>

#include <cstdio>
#include <string>

namespace lriot {
namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string u64(uint64_t v) { return std::to_string(v); }

std::string describe_pattern(const Config& c) {
  const SequenceParams& s = c.sequence;
  std::string text = to_string(s.pattern);
  if (s.pattern == Pattern::partitioned)
    text += " (" + fmt("%.0f%%", 100 * s.partition_ops) + " of operations to " + fmt("%.0f%%", 100 * s.partition_space) +
            " of the file)";
  if (s.write_fraction >= 1)
    text += ", all read-modify-writes";
  else if (s.write_fraction > 0)
    text += ", " + fmt("%.0f%%", 100 * s.write_fraction) + " read-modify-writes";
  else
    text += ", reads";
  return text;
}

}  // namespace

std::string to_text(const Result& r) {
  const Config& c = r.config;
  std::string t = "lriot: " + std::string(to_string(c.mode)) + ", " + describe_pattern(c) + ", " + std::to_string(c.procs) +
                  " process" + (c.procs > 1 ? "es" : "") + " x " + std::to_string(c.threads) + " threads\n";
  t += "file: " + c.file + ", " + dimmap::format_size(r.file_bytes) + " (" + u64(r.pages) + " pages";
  if (r.hot_pages) t += ", " + u64(r.hot_pages) + " hot";
  t += ")";
  if (r.resident_at_start >= 0) t += ", " + fmt("%.1f%%", 100 * r.resident_at_start) + " in the page cache at the start";
  t += "\n";
  t += "ops: " + u64(r.ops) + " (" + u64(r.reads) + " reads, " + u64(r.writes) + " writes) in " +
       fmt("%.3f", r.seconds) + " s: " + fmt("%.0f", r.iops()) + " IOPS";
  if (c.sequence.write_fraction > 0)
    t += " (operations " + fmt("%.3f", r.run_seconds) + " s = " + fmt("%.0f", r.run_iops()) + " ops/s, final " +
         (c.mode == Mode::mmap || c.mode == Mode::dimmap ? "msync " : "fdatasync ") + fmt("%.3f", r.sync_seconds) +
         " s)";
  if (c.warmup_seconds > 0)
    t += ", after a " + fmt("%g", c.warmup_seconds) + " s warm-up of " + u64(r.warmup_reads + r.warmup_writes) + " ops";
  t += "\n";
  if (r.has_device_requests && r.ops) {
    const double ops = static_cast<double>(r.ops);
    t += "device: " + u64(r.device_reads) + " reads + " + u64(r.device_writes) + " writes completed (" +
         fmt("%.2f", static_cast<double>(r.device_reads) / ops) + " + " +
         fmt("%.2f", static_cast<double>(r.device_writes) / ops) + " per operation; every program's requests)\n";
  }
  if (r.has_host && r.ops) {
    const double ops = static_cast<double>(r.ops);
    t += "host: " + fmt("%.2f", r.host.busy_seconds) + " CPU-seconds busy (" +
         fmt("%.1f", 1e6 * r.host.busy_seconds / ops) + " us per operation), " + fmt("%.2f", r.host.iowait_seconds) +
         " in I/O wait, " + u64(r.host.tlb_shootdowns) + " TLB shootdowns (" +
         fmt("%.2f", static_cast<double>(r.host.tlb_shootdowns) / ops) + " per operation), " +
         u64(r.host.major_faults) + " major faults; the whole machine's\n";
  }
  if (r.has_dimmap_stats) {
    const struct dimmap_stats& s = r.dimmap;
    t += "dimmap: buffer " + dimmap::format_size(r.buffer_bytes_per_proc) + (c.procs > 1 ? " per process" : "") +
         "; " + dimmap::support::stats_text(s) + "\n";
  }
  if (r.verified) {
    t += std::string("verify: ") + (r.ok() ? "ok" : "FAILED") + " (" + u64(r.mismatches) + " bad pages seen, " +
         u64(r.bad_pages_after) + " bad pages in the file after, write counters +" + u64(r.counter_delta) + " for " +
         u64(r.writes + r.warmup_writes) + " writes" +
         (r.warmup_writes ? ", " + u64(r.warmup_writes) + " of them in the warm-up" : std::string()) + ")";
    if (!r.first_mismatch.empty()) t += "; first: " + r.first_mismatch;
    t += "\n";
  }
  return t;
}

std::string to_json(const Result& r) {
  const Config& c = r.config;
  const SequenceParams& s = c.sequence;
  // wall_seconds: the measured run (operations and the final sync), as IOPS counts it.
  dimmap::json::Object j = dimmap::json::summary("lriot", r.seconds, r.iops(), "IOPS");
  j.add("mode", to_string(c.mode))
      .add("pattern", to_string(s.pattern))
      .add("partition_ops", s.partition_ops)
      .add("partition_space", s.partition_space)
      .add("write_fraction", s.write_fraction)
      .add("seed", s.seed)
      .add("procs", c.procs)
      .add("threads", c.threads)
      .add("file", c.file)
      .add("file_bytes", r.file_bytes)
      .add("pages", r.pages)
      .add("hot_pages", r.hot_pages)
      .add("resident_at_start", r.resident_at_start)
      .add("ops", r.ops)
      .add("reads", r.reads)
      .add("writes", r.writes)
      .add("seconds", r.seconds)
      .add("run_seconds", r.run_seconds)
      .add("sync_seconds", r.sync_seconds)
      .add("iops", r.iops())
      .add("run_iops", r.run_iops())
      .add("warmup_seconds", c.warmup_seconds)
      .add("warmup_ops", r.warmup_reads + r.warmup_writes);
  if (r.has_device_requests) j.add("device_reads", r.device_reads).add("device_writes", r.device_writes);
  if (r.has_host)
    j.add("host", dimmap::json::Object()
                      .add("busy_seconds", r.host.busy_seconds)
                      .add("iowait_seconds", r.host.iowait_seconds)
                      .add("tlb_shootdowns", r.host.tlb_shootdowns)
                      .add("major_faults", r.host.major_faults));
  if (c.mode == Mode::dimmap) j.add("buffer_bytes_per_proc", r.buffer_bytes_per_proc);
  if (r.has_dimmap_stats) j.add("dimmap_stats", dimmap::json::stats(r.dimmap));
  if (r.verified)
    j.add("verify", dimmap::json::Object()
                        .add("ok", r.ok())
                        .add("mismatches", r.mismatches)
                        .add("bad_pages_after", r.bad_pages_after)
                        .add("counter_delta", r.counter_delta)
                        .add("first_mismatch", r.first_mismatch));
  return j.str();
}

}  // namespace lriot
