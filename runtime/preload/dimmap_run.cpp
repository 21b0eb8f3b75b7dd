// dimmap-run - run an unmodified program with its big heap allocations on a placement.
//
//   dimmap-run [--placement=mmap|dimmap|memory|hpmmap] [--dir=DIR] [--files=DIR]... [--buffer=SIZE]
//              [--min-alloc=SIZE] [--huge-pages=auto|hugetlb|thp|small] [--reserve-huge-pages]
//              [--stats] -- CMD ARGS...
#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "launcher.hpp"

int main(int argc, char** argv) {
  using dimmap::preload::LaunchOptions;
  LaunchOptions opt;
  CLI::App app{
      "Runs CMD with every heap allocation of at least --min-alloc bytes (malloc, calloc, realloc,\n"
      "posix_memalign, aligned_alloc, memalign, valloc, C++ new) on a placement, through\n"
      "libdimmap-preload.so; smaller ones stay on the normal heap. Placements:\n"
      "  mmap    an unlinked file in DIR, mapped by Linux (page cache)\n"
      "  dimmap  an unlinked file in DIR, cached by a DI-MMAP buffer of --buffer bytes\n"
      "  memory  anonymous memory, or an unlinked file in DIR if DIR (tmpfs) is given\n"
      "  hpmmap  an HPMMAP arena of --buffer bytes: 2 MiB pages, populated and locked when CMD\n"
      "          starts, so its accesses take no page faults\n"
      "--files=DIR (repeatable): CMD's read-only mappings of files under DIR (mmap with PROT_READ\n"
      "of a file opened O_RDONLY) go through a DI-MMAP buffer of --buffer bytes instead of the\n"
      "Linux page cache; munmap, msync, mremap and mprotect of them too. Writable mappings, and\n"
      "mappings of files opened for writing, stay Linux's, with one line on stderr: the program's\n"
      "write()/pwrite() then stay coherent with what it maps. Without --placement, --files leaves\n"
      "heap allocations alone.\n"
      "Exit status: CMD's, 128+N if signal N killed it, 127/126 if it cannot run, 2 for bad options,\n"
      "125 if dimmap-run itself failed.",
      "dimmap-run"};
  // The runtime's placement vocabulary (one structure: the big heap blocks), plus hpmmap.
  dimmap::PlacementPlan heap_plan({{"heap"}}, dimmap::Preset::full_external);
  app.add_option("--placement", opt.placement,
                 "mmap, dimmap, memory or hpmmap; or the runtime's in-memory, full-external with --backend "
                 "[mmap; none with --files] {DIMMAP_PLACEMENT}")
      ->check(CLI::Validator(
          [](std::string& text) {
            return text == "hpmmap" ? std::string() : dimmap::check_setting(dimmap::Setting::placement, text);
          },
          ""));
  dimmap::cli::add_placement_options(app, heap_plan, dimmap::cli::kBackend | dimmap::cli::kBuffer);
  app.add_option("--files", opt.files,
                 "Directory whose files CMD maps read-only are cached by the DI-MMAP buffer (repeatable)")
      ->expected(1)
      ->take_all();  // one directory per --files, every occurrence kept
  app.add_option("--dir", opt.dir,
                 "Directory for the backing files (default: current directory for mmap/dimmap, "
                 "anonymous memory for memory)");
  app.add_option("--min-alloc", opt.min_alloc,
                 "Smallest allocation that leaves the normal heap [1/32 of the memory limit, between 1M and 64M]");
  app.add_option("--huge-pages", opt.huge_pages, "hpmmap: auto, hugetlb, thp or small")->capture_default_str();
  app.add_flag("--reserve-huge-pages", opt.reserve_huge_pages,
               "hpmmap: let the hugetlb pool grow by the arena's pages for this run (root)");
  app.add_flag("--stats", opt.stats,
               "Print the command's time, faults and peak memory, and each process's placement statistics");
  app.footer(
      "Children: programs CMD execs are preloaded too (the settings travel in DIMMAP_RUN_*). In a\n"
      "child made by fork() without exec, dimmap blocks of the parent are not mapped (touching them\n"
      "faults; free() is fine) and its new big allocations use mmap in DIR; mmap/memory-on-tmpfs blocks\n"
      "stay shared with the parent (MAP_SHARED files); anonymous and hpmmap memory is copy-on-write.\n"
      "--buffer is the DRAM of the placement: the DI-MMAP buffer (dimmap, --files) or the arena (hpmmap).\n"
      "Examples: dimmap-run --placement=dimmap --dir=/data --buffer=1G -- ./bfs graph.bin\n"
      "          dimmap-run --files=/data/k2db --buffer=512M -- kraken2 --memory-mapping --db /data/k2db r.fq");
  // Options end at "--" (or, without it, at the first word that is not an option).
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      split = i;
      break;
    }
  }
  if (split == argc) app.prefix_command();
  if (const auto status = dimmap::cli::parse(app, split, argv)) return *status;
  if (split < argc) {
    opt.command.assign(argv + split + 1, argv + argc);
  } else {
    opt.command = app.remaining();
    if (!opt.command.empty() && opt.command.front().rfind("-", 0) == 0)
      return dimmap::cli::report_usage_error(app, "unknown option '" + opt.command.front() + "'");
  }

  // plan_launch checks every option value (and --dir) before anything runs: its refusals are
  // usage errors. What fails after that is dimmap-run's own failure, told apart from CMD's status.
  constexpr int kOwnFailure = 125;
  dimmap::preload::LaunchPlan plan;
  opt.backend = heap_plan.settings().backend;
  opt.buffer = heap_plan.settings().buffer;
  opt.hot_fraction = heap_plan.hot_fraction();
  try {
    plan = dimmap::preload::plan_launch(opt);
  } catch (const std::exception& e) {
    return dimmap::cli::report_usage_error(app, e.what());
  }
  try {
    dimmap::preload::apply_environment(plan, dimmap::preload::find_preload_library());
    return dimmap::preload::run_command(plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dimmap-run: %s\n", e.what());
    return kOwnFailure;
  }
}
