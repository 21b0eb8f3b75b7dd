// microbench - the DI-MMAP paper's micro-benchmarks (§5.2) and the HPMMAP experiment kernel.
//
//   microbench build --structure=sorted-vector|ordered-map|unordered-map --size=SIZE --out=FILE
//   microbench query --file=FILE [--placement=...] [--backend=...] [--buffer=...] --threads=1,2,4
//   microbench random-access --size=SIZE --updates=N [--threads=N]
#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/support/json_summary.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/progress.hpp>
#include <dimmap/support/stats_text.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "microbench/lookup.hpp"
#include "microbench/random_access.hpp"
#include "microbench/structure_file.hpp"

namespace {

void print_buffer_stats(const dimmap::Placement& p) {
  if (p.backend != dimmap::Backend::dimmap || !p.buffer) return;
  std::fprintf(stderr, "microbench: dimmap buffer: %s\n", dimmap::support::stats_text(p.buffer->stats()).c_str());
}

struct QueryRun {
  unsigned threads;
  microbench::LookupResult result;
};

// query's --json summary: rate = lookups/s over every thread count (all answers over all their
// seconds), each thread count's numbers in "runs", the buffer's counters on DI-MMAP.
std::string query_summary_json(const microbench::StructureFile& f, const dimmap::Placement& p,
                               const std::vector<QueryRun>& runs, double wall_seconds) {
  uint64_t queries = 0;
  double seconds = 0;
  std::vector<dimmap::json::Object> rows;
  for (const QueryRun& run : runs) {
    const microbench::LookupResult& r = run.result;
    queries += r.queries;
    seconds += r.seconds;
    char checksum[20];
    std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(r.checksum));
    rows.push_back(dimmap::json::Object()
                       .add("threads", run.threads)
                       .add("queries", r.queries)
                       .add("seconds", r.seconds)
                       .add("lookups_per_second", r.lookups_per_second())
                       .add("found", r.found)
                       .add("wrong", r.wrong)
                       .add("checksum", std::string(checksum)));
  }
  const double rate = seconds > 0 ? static_cast<double>(queries) / seconds : 0;
  dimmap::json::Object j = dimmap::json::summary("microbench query", wall_seconds, rate, "lookups/s");
  j.add("structure", microbench::to_string(f.structure()))
      .add("placement", p.describe())
      .add("entries", f.entries())
      .add("queries", queries)
      .add("seconds", seconds)
      .raw("runs", dimmap::json::array(rows));
  if (p.backend == dimmap::Backend::dimmap && p.buffer) j.add("dimmap_stats", dimmap::json::stats(p.buffer->stats()));
  return j.str();
}

// random-access's --json summary: rate = updates/s of the update phase; the phases' times, faults
// and huge pages as the text line prints them.
std::string random_access_summary_json(const microbench::RandomAccessOptions& o, const microbench::RandomAccessResult& r) {
  const double rate = r.update_seconds > 0 ? static_cast<double>(o.updates) / r.update_seconds : 0;
  return dimmap::json::summary("microbench random-access", r.total_seconds, rate, "updates/s")
      .add("bytes", o.bytes)
      .add("updates", o.updates)
      .add("threads", o.threads)
      .add("alloc_seconds", r.alloc_seconds)
      .add("init_seconds", r.init_seconds)
      .add("update_seconds", r.update_seconds)
      .add("total_seconds", r.total_seconds)
      .add("minflt_init", r.minor_faults_init)
      .add("minflt_update", r.minor_faults_update)
      .add("majflt", r.major_faults)
      .add("huge_kib", r.huge_kib)
      .add("verified", r.verified)
      .str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Micro-benchmarks of the DI-MMAP paper (binary search, ordered map, unordered map on mapped\n"
               "files) and the random-access kernel of the HPMMAP experiment.",
               "microbench"};
  app.require_subcommand(1);

  // build
  std::string structure = "sorted-vector", size = "256M", out;
  uint64_t seed = 1;
  // The file is written on storage: --backend, --storage and the buffer, no preset.
  dimmap::PlacementPlan build_plan({}, dimmap::Preset::full_external);
  CLI::App* build = app.add_subcommand("build", "Build a structure into a file once (written whole, then renamed)");
  const auto structures = CLI::IsMember({"sorted-vector", "ordered-map", "unordered-map"});
  build->add_option("--structure", structure, "sorted-vector, ordered-map or unordered-map")
      ->check(structures)
      ->capture_default_str();
  build->add_option("--size", size, "File size (the number of entries follows)")
      ->check(dimmap::cli::size_check())
      ->capture_default_str();
  build->add_option("--out", out, "Output file")->required();
  build->add_option("--seed", seed, "Data-set seed")->capture_default_str();
  {
    using namespace dimmap::cli;
    add_placement_options(*build, build_plan, kBackend | kBuffer | kStorage | kDontneed);
  }

  // query
  std::string file, threads = "1,2,4,8", expect_structure;
  uint64_t queries = 1 << 20, query_seed = 7, verify = 0;
  double duration = 0;
  // One structure, the file: semi-external is the same as full-external (it is the data, not
  // an algorithm's scratch).
  dimmap::PlacementPlan query_plan({{"structure"}}, dimmap::Preset::full_external);
  CLI::App* query = app.add_subcommand("query", "Look keys up with N threads; prints one TSV row per thread count");
  query->add_option("--file", file, "Structure file from 'microbench build'")->required();
  query->add_option("--threads", threads, "Comma-separated thread counts")
      ->check(dimmap::cli::thread_list())
      ->capture_default_str();
  query->add_option("--queries", queries, "Lookups per thread count (in total)")->capture_default_str();
  query->add_option("--seed", query_seed, "Seed of the query stream")->capture_default_str();
  query->add_option("--duration", duration, "Stop each thread count after this many seconds (0 = all queries)")
      ->check(CLI::NonNegativeNumber);
  query->add_option("--structure", expect_structure, "Fail unless the file holds this structure")->check(structures);
  query->add_option("--verify", verify, "Also compare N answers with a std:: container built in memory");
  bool advise_random = false;
  query->add_flag("--advise-random", advise_random, "mmap backend: MADV_RANDOM on the file (no readahead)");
  std::string query_json;
  query->add_option("--json", query_json, "Also write the run's numbers as one JSON object to this file");
  {
    using namespace dimmap::cli;
    add_placement_options(*query, query_plan, kAllPlacementOptions & ~kPlaceEach);
  }

  // random-access
  microbench::RandomAccessOptions ra;
  std::string ra_size = "256M";
  CLI::App* random = app.add_subcommand("random-access", "Random XOR updates on a malloc'd table (HPMMAP experiment)");
  random->add_option("--size", ra_size, "Table size")->check(dimmap::cli::size_check())->capture_default_str();
  random->add_option("--updates", ra.updates, "Updates in total")->capture_default_str();
  random->add_option("--threads", ra.threads, "Threads")->check(dimmap::cli::thread_count())->capture_default_str();
  random->add_option("--seed", ra.seed, "Seed")->capture_default_str();
  std::string random_json;
  random->add_option("--json", random_json, "Also write the run's numbers as one JSON object to this file");

  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;

  try {
    if (*build) {
      microbench::BuildOptions opt;
      opt.structure = microbench::parse_structure(structure);
      opt.bytes = dimmap::parse_size(size, "--size");
      opt.seed = seed;
      opt.path = out;
      opt.placement = build_plan.storage_placement();
      dimmap::support::ProgressReporter bar("microbench: building " + structure, 1000);
      opt.progress = [&](double f) { bar.set(static_cast<uint64_t>(f * 1000)); };
      const microbench::BuildReport r = microbench::build_structure_file(opt);
      bar.finish();
      std::printf("built %s %s: %llu entries, %s, %.2f s\n", structure.c_str(), out.c_str(),
                  static_cast<unsigned long long>(r.entries), dimmap::format_size(r.bytes).c_str(), r.seconds);
      return 0;
    }
    if (*query) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<unsigned> counts;
      dimmap::cli::read_thread_list(threads, counts);  // checked while parsing
      dimmap::Placement placement = query_plan.placement_of("structure");
      placement.advise_random = advise_random;
      std::fprintf(stderr, "microbench: opening '%s' on %s\n", file.c_str(), placement.describe().c_str());
      const microbench::StructureFile f = microbench::StructureFile::open(placement, file);
      if (!expect_structure.empty() && microbench::parse_structure(expect_structure) != f.structure())
        throw dimmap::Error("'" + file + "' holds a " + microbench::to_string(f.structure()) + ", not a " +
                            expect_structure);
      std::printf("structure\tplacement\tentries\tthreads\tqueries\tseconds\tlookups_per_s\tfound\tchecksum\n");
      int status = 0;
      std::vector<QueryRun> runs;
      for (unsigned n : counts) {
        const microbench::LookupResult r = microbench::run_lookups(f, {queries, n, query_seed, duration});
        runs.push_back({n, r});
        std::printf("%s\t%s\t%llu\t%u\t%llu\t%.4f\t%.0f\t%llu\t%016llx\n", microbench::to_string(f.structure()),
                    placement.describe().c_str(), static_cast<unsigned long long>(f.entries()), n,
                    static_cast<unsigned long long>(r.queries), r.seconds, r.lookups_per_second(),
                    static_cast<unsigned long long>(r.found), static_cast<unsigned long long>(r.checksum));
        std::fflush(stdout);
        if (r.wrong) {
          std::fprintf(stderr, "microbench: %llu of %llu answers were wrong with %u threads\n",
                       static_cast<unsigned long long>(r.wrong), static_cast<unsigned long long>(r.queries), n);
          status = 1;
        }
      }
      print_buffer_stats(placement);
      if (verify) {
        const microbench::VerifyResult v = microbench::verify_against_std(f, verify, query_seed);
        std::fprintf(stderr, "microbench: verified %llu answers against std::: %llu mismatches%s%s\n",
                     static_cast<unsigned long long>(v.checked), static_cast<unsigned long long>(v.mismatches),
                     v.mismatches ? ", first: " : "", v.first_mismatch.c_str());
        if (v.mismatches) status = 1;
      }
      if (!query_json.empty()) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        dimmap::json::write_file(query_json, query_summary_json(f, placement, runs, wall));
      }
      return status;
    }
    ra.bytes = dimmap::parse_size(ra_size, "--size");
    const microbench::RandomAccessResult r = microbench::run_random_access(ra);
    std::printf("random-access bytes=%llu updates=%llu threads=%u alloc_s=%.6f init_s=%.6f update_s=%.6f "
                "total_s=%.6f minflt_init=%ld minflt_update=%ld majflt=%ld huge_kib=%llu verified=%d\n",
                static_cast<unsigned long long>(ra.bytes), static_cast<unsigned long long>(ra.updates), ra.threads,
                r.alloc_seconds, r.init_seconds, r.update_seconds, r.total_seconds, r.minor_faults_init,
                r.minor_faults_update, r.major_faults, static_cast<unsigned long long>(r.huge_kib), r.verified);
    if (!random_json.empty()) dimmap::json::write_file(random_json, random_access_summary_json(ra, r));
    if (!r.verified) {
      std::fprintf(stderr, "microbench: the table does not match the updates applied\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "microbench: %s\n", e.what());
    return 1;
  }
}
