// rmat-gen: Graph500 Kronecker / SSCA#2 R-MAT edge lists (Graph500 binary int64 pairs).
#include <graph/rmat.hpp>

#include <dimmap/command_line.hpp>
#include <dimmap/placement.hpp>

#include <CLI/CLI.hpp>
#include <omp.h>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"Generates an R-MAT edge list. The output is the same for any --threads."};
  graph::RmatParams p;
  std::string out, format = "auto", variant = "graph500";
  int threads = omp_get_max_threads();
  bool quiet = false;
  app.add_option("--scale", p.scale, "log2 of the number of vertices")->required()->check(CLI::Range(1, 32));
  app.add_option("--edge-factor", p.edge_factor, "edges per vertex")->capture_default_str();
  app.add_option("--variant", variant, "graph500 (Kronecker) or ssca (SSCA#2 / HavoqGT noisy R-MAT)")
      ->check(CLI::IsMember({"graph500", "ssca"}))
      ->capture_default_str();
  app.add_option("--seed", p.seed, "random seed")->capture_default_str();
  app.add_option("--noise", p.noise, "ssca: noise on the initiator at each level")->capture_default_str();
  app.add_option("--out", out, "output file")->required();
  app.add_option("--format", format, "bin (Graph500 int64 pairs), text or hdf5; auto = from the extension")
      ->check(CLI::IsMember({"auto", "bin", "text", "hdf5"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "generator threads (the output does not depend on it)")
      ->check(dimmap::cli::thread_count())
      ->capture_default_str();
  app.add_flag("--no-permute", [&](int64_t) { p.permute_vertices = false; }, "keep R-MAT vertex ids (no permutation)");
  app.add_flag("--no-shuffle", [&](int64_t) { p.shuffle_edges = false; }, "keep generation order (no edge shuffle)");
  app.add_flag("--quiet", quiet, "no progress on stderr");
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;
  try {
    p.variant = graph::parse_rmat_variant(variant);
    const graph::RmatGenerator gen(p);
    const auto fmt = format == "auto" ? graph::guess_edge_format(out) : graph::parse_edge_format(format);
    graph::write_rmat(gen, out, fmt, threads, !quiet);
    if (!quiet)
      std::cerr << "rmat-gen: wrote " << gen.edges() << " edges on " << gen.vertices() << " vertices (scale "
                << p.scale << ", edge factor " << p.edge_factor << ", " << graph::to_string(p.variant) << ") to "
                << out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "rmat-gen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
