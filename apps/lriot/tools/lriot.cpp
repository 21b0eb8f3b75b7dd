// lriot - the Livermore Random I/O Testbench command line (arguments only; see lriot.hpp).
#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/support/progress.hpp>
#include <lriot/lriot.hpp>
#include <lriot/pattern.hpp>
#include <unistd.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{"LRIOT, the Livermore Random I/O Testbench: processes x threads perform random 4 KiB reads and "
               "read-modify-writes on one file through O_DIRECT, the page cache, Linux mmap or DI-MMAP, and report "
               "IOPS."};
  lriot::Config c;
  std::string mode = "mmap", pattern = "partitioned", create, advice = "random";
  dimmap::PlacementPlan buffer_plan({}, dimmap::Preset::full_external);  // --buffer, --hot-fraction
  bool create_only = false, json = false;
  app.add_option("--file", c.file, "The file to test (made by --create for --verify)")->required();
  app.add_option("--create", create,
                 "First (re)create the file with SIZE bytes of LRIOT's verifiable pattern, e.g. 4G")
      ->check(dimmap::cli::size_check());
  app.add_flag("--create-only", create_only, "Only create the file, do not run");
  app.add_option("--mode", mode, "direct (O_DIRECT pread/pwrite), stdio (buffered pread/pwrite), mmap, dimmap")
      ->capture_default_str();
  app.add_option("--procs", c.procs, "Processes (each with its own share of pages)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--threads", c.threads, "Threads per process")
      ->check(dimmap::cli::thread_count())
      ->capture_default_str();
  app.add_option("--pattern", pattern, "uniform, or partitioned (--partition-ops of the operations go to the first "
                                       "--partition-space of the file)")
      ->capture_default_str();
  app.add_option("--partition-ops", c.sequence.partition_ops, "Partitioned: share of operations on the hot range")
      ->capture_default_str();
  app.add_option("--partition-space", c.sequence.partition_space, "Partitioned: share of the file that is hot")
      ->capture_default_str();
  app.add_option("--write-fraction", c.sequence.write_fraction,
                 "Share of operations that are read-modify-writes of a page")
      ->capture_default_str();
  app.add_option("--seed", c.sequence.seed, "Seed of the page sequence (same seed, same run)")->capture_default_str();
  auto* ops = app.add_option("--ops", c.ops, "Operations in all, split over the processes (0 = until --seconds)");
  auto* seconds = app.add_option("--seconds", c.seconds, "Stop after this many seconds (default 10; 0 = until --ops)");
  app.add_option("--warmup", c.warmup_seconds,
                 "First run the load this many seconds unmeasured: --seconds, the counts and the device's "
                 "requests then cover the steady state, not the cold start")
      ->capture_default_str();
  dimmap::cli::add_placement_options(app, buffer_plan, dimmap::cli::kBuffer);  // for all processes together
  app.add_option("--madvise", advice, "random (MADV_RANDOM / POSIX_FADV_RANDOM: no readahead) or normal")
      ->check(CLI::IsMember({"random", "normal"}))
      ->capture_default_str();
  app.add_flag("--verify", c.verify, "Check every page read, and the whole file before and after the run");
  app.add_option("--progress", c.progress_seconds, "Print progress on stderr every S seconds (0 = never)")
      ->default_val(5);
  app.add_flag("--json", json, "Print the result as one JSON object");
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;

  // Every option value is checked before any file is made: a bad one is a usage error.
  uint64_t create_bytes = 0;
  try {
    c.mode = lriot::parse_mode(mode);
    c.sequence.pattern = lriot::parse_pattern(pattern);
    c.random_advice = advice == "random";
    if (c.mode == lriot::Mode::dimmap) {
      c.buffer_bytes = buffer_plan.buffer_bytes();
      c.hot_fraction = buffer_plan.hot_fraction();
    } else if (!buffer_plan.settings().buffer.empty()) {
      std::fprintf(stderr, "lriot: --buffer only applies to --mode=dimmap\n");
    }
    if (ops->count() && !seconds->count()) c.seconds = 0;  // --ops alone: run them all
    if (!create.empty()) {
      create_bytes = dimmap::parse_size(create, "--create");
      if (create_bytes % 4096)
        throw dimmap::Error("--create: size '" + create + "' is not a multiple of 4 KiB (the page size)");
    } else if (create_only) {
      throw dimmap::Error("--create-only needs --create=SIZE");
    }
    lriot::validate(c);
  } catch (const std::exception& e) {
    return dimmap::cli::report_usage_error(app, e.what());
  }

  try {
    if (!create.empty()) {
      const uint64_t bytes = create_bytes;
      // Files worth waiting for get a progress line (in tenths, or redrawn on a terminal).
      dimmap::support::ProgressReporter bar("lriot: creating " + c.file, bytes,
                                            c.progress_seconds > 0 && bytes >= (256ull << 20));
      lriot::create_pattern_file(c.file, bytes, [&](uint64_t done, uint64_t) { bar.set(done); });
      bar.finish();
      if (create_only) return 0;
    }
    lriot::Result r = lriot::run(c);
    std::fputs(json ? (lriot::to_json(r) + "\n").c_str() : lriot::to_text(r).c_str(), stdout);
    if (!r.ok()) {
      std::fprintf(stderr, "lriot: verification FAILED (see 'verify' above)\n");
      return dimmap::cli::kExitFailure;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lriot: %s\n", e.what());
    return 1;
  }
}
