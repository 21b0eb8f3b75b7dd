// bfs: level-asynchronous BFS over five placeable memory-mapped files; under mpirun the
// vertices are partitioned across ranks.
#include <graph/bfs_run.hpp>
#include <graph/mpi_comm.hpp>

#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/support/json_summary.hpp>

#include <chrono>
#include <iostream>
#include <memory>

int main(int argc, char** argv) {
  std::unique_ptr<graph::MpiComm> mpi;
  if (graph::launched_by_mpi()) mpi = std::make_unique<graph::MpiComm>(&argc, &argv);
  graph::SerialComm serial;
  graph::Comm& comm = mpi ? static_cast<graph::Comm&>(*mpi) : serial;

  CLI::App app{"Level-asynchronous BFS (HavoqGT style). Prints visited vertices, vertices per level,\n"
               "time and TEPS (Graph500 counting, harmonic mean over the roots). Run under\n"
               "mpirun -np P for the distributed version."};
  graph::BfsOptions opt;
  uint64_t source = 0;
  app.add_option("--graph", opt.graph_dir, "graph directory from graph-ingest")->required();
  dimmap::cli::add_placement_options(app, *opt.placement);
  app.add_option("--threads", opt.threads, "OpenMP threads per rank; more than cores is fine [one per core]")
      ->check(dimmap::cli::thread_count());
  app.add_option("--sort-batch", opt.sort_batch,
                 "queue chunks (1022 visitors each) a thread expands at once in vertex order "
                 "(0 = 4 when the graph is on storage, else 1)")
      ->capture_default_str();
  app.add_option("--vertex-ranges", opt.vertex_ranges,
                 "the queue hands out each level by vertex range in this many ranges, so a level reads the "
                 "graph front to back (0 = ranges of ~512 KiB of edges, at most 256, when the graph is on storage, "
                 "else 1)")
      ->capture_default_str();
  auto* src = app.add_option("--source", source, "search once from this vertex");
  app.add_option("--roots", opt.roots, "number of random roots of degree >= 1")->capture_default_str()->excludes(src);
  app.add_option("--seed", opt.seed, "seed for choosing roots")->capture_default_str();
  app.add_flag("--validate", opt.validate, "check every search with the five Graph500 rules");
  app.add_option("--levels-out", opt.levels_out, "levels of the first search, one per line (-1 = unreached)");
  app.add_option("--parents-out", opt.parents_out, "parents of the first search, one per line (-1 = unreached)");
  app.add_flag("--verbose", opt.verbose, "per-level counts and visitor counters for every root");
  std::string json_out;
  app.add_option("--json", json_out, "also write the run's numbers as one JSON object to this file");
  int code = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same arguments; only rank 0 prints.
    if (comm.rank() == 0) return dimmap::cli::exit_status(app, e);
    return e.get_exit_code() ? dimmap::cli::kExitUsage : 0;
  }
  try {
    if (*src) opt.source = source;
    const auto start = std::chrono::steady_clock::now();
    const graph::BfsSummary s = graph::run_bfs(opt, comm, std::cout);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!json_out.empty() && comm.rank() == 0) dimmap::json::write_file(json_out, graph::summary_json(opt, s, wall));
    if (opt.validate && !s.all_valid) code = dimmap::cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "bfs" << (comm.size() > 1 ? " (rank " + std::to_string(comm.rank()) + ")" : "") << ": " << e.what()
              << "\n";
    if (mpi && comm.size() > 1) mpi->abort(1);
    return 1;
  }
  return code;
}
