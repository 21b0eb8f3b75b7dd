// bwa-mmap - `bwa index` and `bwa mem` with the big arrays on a memory-mapped placement.
//
//   bwa-mmap index [placement flags] [-a bwtsw|is|rb2] [-p prefix] [-b size] [-6] ref.fa
//   bwa-mmap mem   [placement flags] [bwa mem options] idxbase r1.fq [r2.fq]
//
// Only argument parsing lives here; the drivers are in libbwammap (src/).
#include <bwammap/index_build.hpp>
#include <bwammap/mem_align.hpp>
#include <bwammap/mem_options.hpp>
#include <bwammap/index_placement.hpp>
#include <bwammap/run_stats.hpp>

#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/support/json_summary.hpp>
#include <dimmap/memory_limit.hpp>
#include <dimmap/support/stats_text.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

void print_buffer_stats(const char* who, const bwammap::IndexPlacement& plan) {
  if (auto buffer = plan.buffer())
    std::fprintf(stderr, "[bwa-mmap %s] DI-MMAP buffer %s: %s\n", who,
                 dimmap::format_size(buffer->config().buffer_bytes).c_str(), dimmap::support::stats_text(buffer->stats()).c_str());
}

// mem's --json summary: rate = reads/s of the aligning pipeline, as the stderr line prints it.
std::string mem_summary_json(const bwammap::MemReport& r, const bwammap::IndexPlacement& plan, double wall_seconds) {
  const double reads_per_second = r.align_seconds > 0 ? static_cast<double>(r.reads) / r.align_seconds : 0;
  dimmap::json::Object j = dimmap::json::summary("bwa-mmap mem", wall_seconds, reads_per_second, "reads/s");
  j.add("reads", r.reads)
      .add("bases", r.bases)
      .add("batches", r.batches)
      .add("load_seconds", r.load_seconds)
      .add("align_seconds", r.align_seconds)
      .add("cpu_seconds", r.cpu_seconds)
      .add("peak_rss_bytes", r.peak_rss);
  if (auto buffer = plan.buffer()) j.add("dimmap_stats", dimmap::json::stats(buffer->stats()));
  return j.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bwa-mmap: bwa index and bwa mem (Debian's libbwa 0.7.17) with the index arrays on a\n"
               "placement: memory, mmap (Linux page cache) or dimmap (DI-MMAP buffer).\n"
               "Output is byte-identical to `bwa index` and, except the @PG line, to `bwa mem`."};
  app.set_help_flag("--help", "Print this help and exit");
  app.require_subcommand(1);

  // ---- index ----
  CLI::App* index_cmd = app.add_subcommand("index", "Build .amb .ann .bwt .pac .sa from a FASTA file");
  index_cmd->set_help_flag("--help", "Print this help and exit");
  bwammap::IndexPlacement index_plan;
  bwammap::IndexOptions index_opts;
  std::string block_size = "10000000";
  std::string min_alloc;  // "" = from the memory limit (dimmap::default_min_alloc)
  index_cmd->add_option("-a", index_opts.algorithm, "BWT construction algorithm: bwtsw, is or rb2 [auto: is below 50M bases, unless its\n"
                        "10 bytes per base exceed the memory limit]")
      ->check(CLI::IsMember({"auto", "bwtsw", "is", "rb2"}))
      ->group("bwa index options");
  index_cmd->add_option("-p", index_opts.prefix, "prefix of the index [same as FASTA name]")->group("bwa index options");
  index_cmd->add_option("-b", block_size, "block size for the bwtsw algorithm (K/M/G suffixes ok) [10000000]")
      ->check(dimmap::cli::size_check())
      ->group("bwa index options");
  index_cmd->add_flag("-6", index_opts.is_64, "index files named as <in.fasta>.64.* instead of <in.fasta>.*")
      ->group("bwa index options");
  index_cmd->add_option("--min-alloc", min_alloc, "libbwa allocations at least this big go to the placement, smaller ones stay in\n"
                        "RAM [1/32 of the memory limit (cgroup or MemAvailable), between 1M and 64M:\n"
                        "with 2G or more, bwtsw's workspace of about 5x -b stays in RAM]")
      ->check(dimmap::cli::size_check(/*allow_zero=*/true))
      ->group("Placement");
  index_cmd->add_option("fasta", index_opts.fasta, "reference FASTA (gz ok)")->required();
  index_plan.add_to(*index_cmd, /*per_array=*/false);

  // ---- mem ----
  CLI::App* mem_cmd = app.add_subcommand("mem", "Align reads with BWA-MEM on a zero-copy mapped index");
  mem_cmd->set_help_flag("--help", "Print this help and exit");
  bwammap::IndexPlacement mem_plan;
  bwammap::MemCli mem_cli;
  mem_cli.add_to(*mem_cmd);
  mem_plan.add_to(*mem_cmd);
  std::string mem_json;
  mem_cmd->add_option("--json", mem_json, "Also write the run's numbers as one JSON object to this file");

  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;

  try {
    if (*index_cmd) {
      const uint64_t block = dimmap::parse_size(block_size, "-b");
      if (block > 0x7fffffff) throw dimmap::cli::UsageError("-b: block size '" + block_size + "' is above 2G-1");
      index_opts.block_size = static_cast<int>(block);
      const dimmap::MemoryLimit limit = dimmap::memory_limit();
      index_opts.memory_limit = limit.bytes;
      if (min_alloc.empty()) {
        index_opts.min_alloc = dimmap::default_min_alloc(limit.bytes);
        std::fprintf(stderr, "[bwa-mmap index] --min-alloc=%s: 1/32 of the memory limit of %s (%s), between 1M and 64M\n",
                     dimmap::format_size(index_opts.min_alloc).c_str(), dimmap::format_size(limit.bytes).c_str(),
                     limit.source.c_str());
      } else {
        index_opts.min_alloc = dimmap::parse_size(min_alloc, "--min-alloc");
      }
      const bwammap::IndexReport r = bwammap::build_index(index_opts, index_plan);
      std::fprintf(stderr,
                   "[bwa-mmap index] %s.{amb,ann,bwt,pac,sa}: %lld bases in %d sequences; %.2f s wall, %.2f s CPU, "
                   "peak RSS %s\n",
                   r.prefix.c_str(), static_cast<long long>(r.layout.l_pac), r.layout.n_seqs, r.wall_seconds,
                   r.cpu_seconds, dimmap::format_size(r.peak_rss).c_str());
      std::fprintf(stderr, "[bwa-mmap index] %llu arrays (%s in all, at most %s at once) placed on %s\n",
                   static_cast<unsigned long long>(r.heap.placed_allocations),
                   dimmap::format_size(r.heap.placed_bytes).c_str(),
                   dimmap::format_size(r.heap.peak_live_bytes).c_str(), r.placement.c_str());
      print_buffer_stats("index", index_plan);
    } else {
      bwammap::MemOptions options = mem_cli.resolve();
      options.command_line = join_args(argc, argv);
      const auto start = std::chrono::steady_clock::now();
      const bwammap::MemReport r = bwammap::run_mem(options, mem_plan);
      if (!mem_json.empty()) {
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        dimmap::json::write_file(mem_json, mem_summary_json(r, mem_plan, wall));
      }
      if (options.verbosity >= 3) {
        std::fprintf(stderr,
                     "[bwa-mmap mem] %lld reads (%lld bp) in %d batches: %.2f s aligning (%.0f reads/s), %.2f s "
                     "index mapping, %.2f s CPU, peak RSS %s\n",
                     static_cast<long long>(r.reads), static_cast<long long>(r.bases), r.batches, r.align_seconds,
                     r.align_seconds > 0 ? static_cast<double>(r.reads) / r.align_seconds : 0.0, r.load_seconds,
                     r.cpu_seconds, dimmap::format_size(r.peak_rss).c_str());
        print_buffer_stats("mem", mem_plan);
      }
    }
  } catch (const dimmap::cli::UsageError& e) {
    return dimmap::cli::report_usage_error(app, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bwa-mmap: %s\n", e.what());
    return 1;
  }
  return 0;
}
