// run_summary.cpp - kmer classify's and kmer lookup's --json summaries.
#include <kmer/run_summary.hpp>

#include <dimmap/support/json_summary.hpp>

namespace kmer {

std::string classify_summary_json(const ClassifySummary& s) {
  const double reads_per_second = s.seconds > 0 ? static_cast<double>(s.reads) / s.seconds : 0;
  dimmap::json::Object j = dimmap::json::summary("kmer classify", s.wall_seconds, reads_per_second, "reads/s");
  j.add("reads", s.reads)
      .add("classified", s.classified)
      .add("bases", s.bases)
      .add("seconds", s.seconds)
      .add("load_seconds", s.load_seconds)
      .add("reads_per_second", reads_per_second)
      .add("bases_per_second", s.seconds > 0 ? static_cast<double>(s.bases) / s.seconds : 0)
      .add("ranks", s.ranks)
      .add("placement", s.placement);
  if (s.dimmap_stats) j.add("dimmap_stats", dimmap::json::stats(*s.dimmap_stats));
  return j.str();
}

std::string lookup_summary_json(const LookupSummary& s) {
  uint64_t lookups = 0;
  double seconds = 0;
  std::vector<dimmap::json::Object> runs;
  for (const LookupRun& r : s.runs) {
    lookups += r.result.lookups;
    seconds += r.result.seconds;
    dimmap::json::Object o;
    o.add("threads", r.threads)
        .add("run", r.run)
        .add("lookups", r.result.lookups)
        .add("hits", r.result.hits)
        .add("seconds", r.result.seconds)
        .add("lookups_per_second", r.result.lookups_per_second())
        .add("hit_rate", r.result.hit_rate());
    if (r.dimmap_stats) o.add("dimmap_stats", dimmap::json::stats(*r.dimmap_stats));
    runs.push_back(std::move(o));
  }
  const double rate = seconds > 0 ? static_cast<double>(lookups) / seconds : 0;
  dimmap::json::Object j = dimmap::json::summary("kmer lookup", s.wall_seconds, rate, "lookups/s");
  j.add("index", s.index)
      .add("placement", s.placement)
      .add("db_bytes", s.db_bytes)
      .add("lookups", lookups)
      .add("seconds", seconds)
      .raw("runs", dimmap::json::array(runs));
  if (!s.runs.empty() && s.runs.back().dimmap_stats) j.add("dimmap_stats", dimmap::json::stats(*s.runs.back().dimmap_stats));
  return j.str();
}

}  // namespace kmer
