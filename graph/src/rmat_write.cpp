// rmat_write.cpp - streams generated slices to disk; generation of the next slice overlaps
// the write of the previous one.
#include <dimmap/support/progress.hpp>
#include <graph/rmat.hpp>

#include <algorithm>
#include <future>
#include <vector>

namespace graph {

void write_rmat(const RmatGenerator& gen, const std::string& path, EdgeFormat format, int threads, bool progress,
                uint64_t slice_edges) {
  auto writer = create_edge_writer(path, format);
  const uint64_t total = gen.edges();
  dimmap::support::ProgressReporter bar("rmat-gen: " + path, total, progress);
  std::vector<Edge> ready(std::min(slice_edges, total)), next(ready.size());
  uint64_t done = 0;
  uint64_t n = std::min<uint64_t>(ready.size(), total);
  gen.generate(0, n, ready.data(), threads);
  while (n > 0) {
    const uint64_t next_first = done + n;
    const uint64_t next_n = std::min<uint64_t>(next.size(), total - next_first);
    auto writing = std::async(std::launch::async, [&, n] { writer->write(ready.data(), n); });
    if (next_n) gen.generate(next_first, next_n, next.data(), threads);
    writing.get();
    bar.advance(n);
    done = next_first;
    n = next_n;
    ready.swap(next);
  }
  bar.finish();
  writer->commit();
}

}  // namespace graph
