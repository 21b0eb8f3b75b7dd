// graph-ingest: edge list (binary, text, HDF5) -> undirected CSR graph directory.
#include <graph/ingest.hpp>

#include <dimmap/cli.hpp>
#include <dimmap/placement.hpp>

#include <CLI/CLI.hpp>
#include <omp.h>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"Builds the undirected CSR files (vertex.dat, edge.dat, graph.info) from an edge list,\n"
               "dropping self-loops and duplicates. Works out of core: input beyond --memory is\n"
               "sorted in runs and merged."};
  graph::IngestOptions opt;
  std::string format = "auto", memory = "1G";
  opt.threads = omp_get_max_threads();
  bool quiet = false;
  app.add_option("--edges", opt.edges_path, "input edge list")->required()->check(CLI::ExistingFile);
  app.add_option("--format", format, "bin (Graph500 int64 pairs), text ('u v' lines) or hdf5; auto = from the extension")
      ->check(CLI::IsMember({"auto", "bin", "text", "hdf5"}))
      ->capture_default_str();
  app.add_option("--vertices", opt.vertices, "number of vertices; ids must be below it (default: largest id + 1)");
  app.add_option("--out", opt.out_dir, "output graph directory")->required();
  app.add_option("--memory", memory, "memory for sorting; larger inputs go through sorted runs on disk")
      ->check(dimmap::cli::size_check())
      ->capture_default_str();
  app.add_option("--tmp-dir", opt.tmp_dir, "directory for sorted runs (default: --out)");
  app.add_option("--threads", opt.threads, "sorting threads")->check(dimmap::cli::thread_count())->capture_default_str();
  app.add_flag("--quiet", quiet, "no progress on stderr");
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;
  try {
    opt.format = format == "auto" ? graph::guess_edge_format(opt.edges_path) : graph::parse_edge_format(format);
    opt.memory_bytes = dimmap::parse_size(memory, "--memory");
    opt.progress = !quiet;
    const graph::IngestReport r = graph::ingest_edges(opt);
    if (!quiet)
      std::cerr << "graph-ingest: " << r.info.vertices << " vertices, " << r.info.undirected_edges()
                << " undirected edges (" << r.info.input_edges << " input edges, " << r.info.self_loops
                << " self-loops, " << r.info.duplicates() << " duplicates dropped"
                << (r.runs ? ", " + std::to_string(r.runs) + " sorted runs" : std::string()) << ") -> " << opt.out_dir
                << "\n";
  } catch (const std::exception& e) {
    std::cerr << "graph-ingest: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
