// bfs_run.cpp - roots, timed searches, Graph500 TEPS, validation and output.
#include <dimmap/support/stats_text.hpp>
#include <graph/bfs_run.hpp>
#include <graph/output_file.hpp>
#include <graph/rmat.hpp>

#include <dimmap/support/json_summary.hpp>

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <unordered_set>

namespace graph {
namespace {

class VertexFile {
 public:
  explicit VertexFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw GraphError("cannot open '" + path + "': " + std::strerror(errno));
  }
  ~VertexFile() { ::close(fd_); }
  // offsets[first .. first + count]
  void read(uint64_t first, uint64_t count, uint64_t* out) const {
    const ssize_t want = static_cast<ssize_t>(count * sizeof(uint64_t));
    if (::pread(fd_, out, static_cast<size_t>(want), static_cast<off_t>(first * sizeof(uint64_t))) != want)
      throw GraphError("cannot read '" + path_ + "'");
  }

 private:
  std::string path_;
  int fd_;
};

std::string format_teps(double teps) {
  std::ostringstream s;
  s << std::scientific << std::setprecision(3) << teps;
  return s.str();
}

}  // namespace

std::vector<RemoteVisit> SerialComm::exchange(std::vector<std::vector<RemoteVisit>>& outboxes) {
  std::vector<RemoteVisit> in;
  if (!outboxes.empty()) in.swap(outboxes[0]);
  return in;
}

std::vector<uint64_t> choose_roots(const std::string& dir, const CsrInfo& info, unsigned count, uint64_t seed) {
  std::vector<uint64_t> roots;
  if (info.vertices == 0 || count == 0) return roots;
  VertexFile offsets(vertex_file(dir));
  std::unordered_set<uint64_t> chosen;
  auto try_vertex = [&](uint64_t v) {
    uint64_t pair[2];
    offsets.read(v, 2, pair);
    if (pair[1] > pair[0] && chosen.insert(v).second) roots.push_back(v);
  };
  for (uint64_t draw = 0; roots.size() < count && draw < 64ull * count; ++draw)
    try_vertex(mix64(seed * 0x9e3779b97f4a7c15ULL + draw) % info.vertices);
  // Sparse graphs: scan from a random start for whatever is left.
  const uint64_t start = mix64(seed) % info.vertices;
  for (uint64_t i = 0; roots.size() < count && i < info.vertices; ++i) try_vertex((start + i) % info.vertices);
  return roots;
}

BfsSummary run_bfs(BfsOptions opt, Comm& comm, std::ostream& out) {
  const bool leader = comm.rank() == 0;
  const CsrInfo info = CsrInfo::read(opt.graph_dir);
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  omp_set_dynamic(0);
  const Partition part = Partition::block_partition(info.vertices, comm.size(), comm.rank());

  std::vector<uint64_t> roots;
  if (leader) {
    if (opt.source) {
      if (*opt.source >= info.vertices)
        throw GraphError("--source " + std::to_string(*opt.source) + " is not a vertex of '" + opt.graph_dir +
                         "' (" + std::to_string(info.vertices) + " vertices)");
      roots.push_back(*opt.source);
    } else {
      roots = choose_roots(opt.graph_dir, info, opt.roots, opt.seed);
    }
  }
  comm.broadcast(roots);
  if (roots.empty()) throw GraphError("'" + opt.graph_dir + "' has no vertex with an edge to start from");

  const BfsPlacements where = resolve_placements(*opt.placement, comm.rank());
  const bool graph_on_storage = where[BfsFile::vertex].backend != dimmap::Backend::memory ||
                                where[BfsFile::edge].backend != dimmap::Backend::memory;
  BfsOrder order = default_bfs_order(graph_on_storage, info.edges * sizeof(vertex_t) / static_cast<uint64_t>(comm.size()));
  if (opt.sort_batch) order.sort_batch = opt.sort_batch;
  if (opt.vertex_ranges) order.ranges = opt.vertex_ranges;
  if (where[BfsFile::queue].backend != dimmap::Backend::memory)
    order.queue_readahead = std::min(64u, order.sort_batch * static_cast<unsigned>(threads));
  BfsFiles files(opt.graph_dir, info, part, where, threads, order.ranges);
  LevelAsyncBfs bfs(part, files.graph(), files.arrays(), threads, order);
  if (leader) {
    out << "graph: " << opt.graph_dir << " (" << info.vertices << " vertices, " << info.undirected_edges()
        << " undirected edges)\n"
        << "placement: " << dimmap::to_string(opt.placement->preset()) << ": " << where.describe() << "\n"
        << "threads: " << threads << " per rank, ranks: " << comm.size() << ", sorted batches of " << order.sort_batch
        << " queue chunks, " << bfs.vertex_ranges() << " vertex ranges\n";
  }

  BfsSummary summary;
  summary.validated = opt.validate;
  const uint64_t count = part.count();
  std::vector<int64_t> levels, parents;  // global copies, only for validation and output files
  for (size_t k = 0; k < roots.size(); ++k) {
    const uint64_t root = roots[k];
    bfs.reset();
    std::vector<RemoteVisit> seeds;
    if (part.owner(root) == comm.rank())
      seeds.push_back({static_cast<vertex_t>(root), static_cast<vertex_t>(root), 0});
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      bfs.run(seeds);
      if (comm.size() == 1) break;
      auto outboxes = bfs.take_outboxes();
      seeds = comm.exchange(outboxes);
      std::vector<uint64_t> received{seeds.size()};
      comm.sum(received);
      if (received[0] == 0) break;
    }
    const double seconds =
        comm.max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

    // Untimed: levels, counts, the Graph500 edge count.
    RootResult r;
    r.root = root;
    r.seconds = seconds;
    int64_t max_level = -1;
    uint64_t degree_sum = 0;
    const LocalGraph g = files.graph();
#pragma omp parallel for num_threads(threads) reduction(max : max_level) reduction(+ : degree_sum)
    for (uint64_t i = 0; i < count; ++i) {
      const int64_t level = bfs.level(i);
      if (level >= 0) {
        max_level = std::max(max_level, level);
        degree_sum += g.offsets[i + 1] - g.offsets[i];
      }
    }
    std::vector<uint64_t> level_max{static_cast<uint64_t>(max_level + 1)};
    comm.sum(level_max);  // an upper bound is enough to size the histogram
    std::vector<uint64_t> hist(level_max[0] + 3, 0);
    for (uint64_t i = 0; i < count; ++i)
      if (const int64_t level = bfs.level(i); level >= 0) ++hist[static_cast<size_t>(level)];
    const BfsCounters& c = bfs.counters();
    hist[hist.size() - 2] = degree_sum;
    hist[hist.size() - 1] = c.visits;
    std::vector<uint64_t> counters{c.stale, c.pushes, c.remote, c.overflow};
    comm.sum(hist);
    comm.sum(counters);
    r.counters = {hist.back(), counters[0], counters[1], counters[2], counters[3]};
    r.edges = hist[hist.size() - 2] / 2;
    hist.resize(hist.size() - 2);
    while (!hist.empty() && hist.back() == 0) hist.pop_back();
    r.level_counts = hist;
    for (uint64_t h : hist) r.visited += h;
    r.teps = seconds > 0 ? static_cast<double>(r.edges) / seconds : 0;

    const bool want_files = k == 0 && (!opt.levels_out.empty() || !opt.parents_out.empty());
    if (opt.validate || want_files) {
      std::vector<int64_t> local(count);
      for (uint64_t i = 0; i < count; ++i) local[i] = bfs.level(i);
      comm.allgather(local, levels);
      for (uint64_t i = 0; i < count; ++i) local[i] = bfs.parent(i);
      comm.allgather(local, parents);
    }
    if (opt.validate) {
      const ValidationReport report = validate_bfs(part, files.graph(), levels.data(), parents.data(), root);
      if (!report.ok())
        std::cerr << "rank " << comm.rank() << ": root " << root << ": " << report.errors
                  << " validation errors, first: " << report.first_error << "\n";
      r.valid = !comm.any(!report.ok());
      summary.all_valid = summary.all_valid && r.valid;
    }
    if (want_files && leader) {
      if (!opt.levels_out.empty()) write_decimal_lines(opt.levels_out, levels.data(), levels.size());
      if (!opt.parents_out.empty()) write_decimal_lines(opt.parents_out, parents.data(), parents.size());
    }
    if (leader) {
      out << "root " << root << ": visited " << r.visited << ", levels " << r.level_counts.size() << ", edges "
          << r.edges << ", time " << std::fixed << std::setprecision(6) << r.seconds << " s, TEPS "
          << format_teps(r.teps) << (opt.validate ? (r.valid ? ", valid" : ", INVALID") : "") << "\n";
      if (k == 0 || opt.verbose) {
        out << "  vertices per level:";
        for (size_t l = 0; l < r.level_counts.size(); ++l) out << " " << l << ":" << r.level_counts[l];
        out << "\n";
      }
      if (opt.verbose)
        out << "  visits " << r.counters.visits << ", stale " << r.counters.stale << ", queued "
            << r.counters.pushes << ", remote " << r.counters.remote << ", overflow " << r.counters.overflow
            << "\n";
    }
    summary.results.push_back(std::move(r));
  }

  // The DI-MMAP buffer's counters over all searches (and the untimed resets between them).
  std::shared_ptr<dimmap::Buffer> buffer;
  for (BfsFile f : kBfsFiles)
    if (where[f].backend == dimmap::Backend::dimmap) buffer = where[f].buffer;
  if (buffer) {
    // Summed over the ranks field by field: struct dimmap_stats holds only uint64_t counters.
    const struct dimmap_stats st = buffer->stats();
    std::vector<uint64_t> v(sizeof st / sizeof(uint64_t));
    std::memcpy(v.data(), &st, sizeof st);
    comm.sum(v);
    struct dimmap_stats all {};
    std::memcpy(&all, v.data(), sizeof all);
    summary.dimmap_stats = all;
    if (leader)
      out << "dimmap buffer " << dimmap::format_size(buffer->config().buffer_bytes) << " (hot fraction "
          << buffer->config().hot_fraction << "), all ranks: " << dimmap::support::stats_text(all) << "\n";
  }

  double inverse_sum = 0, time_sum = 0;
  uint64_t usable = 0;
  for (const RootResult& r : summary.results)
    if (r.teps > 0) inverse_sum += 1.0 / r.teps, time_sum += r.seconds, ++usable;
  summary.harmonic_mean_teps = usable ? static_cast<double>(usable) / inverse_sum : 0;
  if (leader) {
    const RootResult& first_result = summary.results.front();
    out << "searches: " << summary.results.size() << ", mean time " << std::fixed << std::setprecision(6)
        << (usable ? time_sum / static_cast<double>(usable) : 0) << " s, harmonic mean TEPS "
        << format_teps(summary.harmonic_mean_teps) << "\n";
    if (opt.validate) out << "validation: " << (summary.all_valid ? "passed" : "FAILED") << "\n";
    out << "result: vertices=" << info.vertices << " undirected_edges=" << info.undirected_edges()
        << " roots=" << summary.results.size() << " threads=" << threads << " ranks=" << comm.size()
        << " placement=" << dimmap::to_string(opt.placement->preset())
        << " backend=" << dimmap::to_string(opt.placement->backend())
        << " visited_first=" << first_result.visited << " harmonic_teps=" << format_teps(summary.harmonic_mean_teps)
        << " mean_time=" << (usable ? time_sum / static_cast<double>(usable) : 0) << "\n";
  }
  summary.mean_seconds = usable ? time_sum / static_cast<double>(usable) : 0;
  summary.vertices = info.vertices;
  summary.undirected_edges = info.undirected_edges();
  summary.threads = threads;
  summary.ranks = comm.size();
  return summary;
}

std::string summary_json(const BfsOptions& opt, const BfsSummary& s, double wall_seconds) {
  dimmap::json::Object j = dimmap::json::summary("bfs", wall_seconds, s.harmonic_mean_teps, "TEPS");
  j.add("harmonic_mean_teps", s.harmonic_mean_teps)
      .add("mean_seconds", s.mean_seconds)
      .add("searches", static_cast<uint64_t>(s.results.size()))
      .add("visited_first", s.results.empty() ? uint64_t{0} : s.results.front().visited)
      .add("vertices", s.vertices)
      .add("undirected_edges", s.undirected_edges)
      .add("threads", s.threads)
      .add("ranks", s.ranks)
      .add("placement", dimmap::to_string(opt.placement->preset()))
      .add("backend", dimmap::to_string(opt.placement->backend()))
      .add("validated", s.validated);
  if (s.validated) j.add("all_valid", s.all_valid);
  if (s.dimmap_stats) j.add("dimmap_stats", dimmap::json::stats(*s.dimmap_stats));
  return j.str();
}

}  // namespace graph
