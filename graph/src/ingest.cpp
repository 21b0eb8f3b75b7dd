// ingest.cpp - chunked sort, sorted runs, k-way merge, streaming CSR writer.
#include <graph/ingest.hpp>
#include <graph/output_file.hpp>
#include <dimmap/support/progress.hpp>

#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <vector>

namespace graph {
namespace {

constexpr uint64_t kLowMask = 0xffffffffULL;

// Sorts keys with up to `threads` threads (sorted pieces, then pairwise merges), then
// drops duplicates. Returns the new size.
size_t sort_unique(std::vector<uint64_t>& keys, size_t count, int threads) {
  const int pieces = std::max(1, std::min<int>(threads, static_cast<int>(count / 65536) + 1));
  std::vector<size_t> bounds(static_cast<size_t>(pieces) + 1);
  for (int p = 0; p <= pieces; ++p) bounds[static_cast<size_t>(p)] = count * static_cast<size_t>(p) / static_cast<size_t>(pieces);
#pragma omp parallel for num_threads(pieces) schedule(static, 1)
  for (int p = 0; p < pieces; ++p)
    std::sort(keys.begin() + static_cast<ptrdiff_t>(bounds[static_cast<size_t>(p)]),
              keys.begin() + static_cast<ptrdiff_t>(bounds[static_cast<size_t>(p) + 1]));
  for (size_t width = 1; width < static_cast<size_t>(pieces); width *= 2)
    for (size_t p = 0; p + width < static_cast<size_t>(pieces); p += 2 * width)
      std::inplace_merge(keys.begin() + static_cast<ptrdiff_t>(bounds[p]),
                         keys.begin() + static_cast<ptrdiff_t>(bounds[p + width]),
                         keys.begin() + static_cast<ptrdiff_t>(bounds[std::min(p + 2 * width, static_cast<size_t>(pieces))]));
  return static_cast<size_t>(std::unique(keys.begin(), keys.begin() + static_cast<ptrdiff_t>(count)) - keys.begin());
}

// A sorted run of keys in a temporary file, deleted when the object goes away.
class Run {
 public:
  Run(const std::string& dir, unsigned index) {
    std::string name = dir + "/.ingest-run-" + std::to_string(::getpid()) + "-" + std::to_string(index) + "-XXXXXX";
    std::vector<char> buf(name.begin(), name.end());
    buf.push_back('\0');
    const int fd = ::mkstemp(buf.data());
    if (fd < 0) throw GraphError("cannot create a sort run in '" + dir + "': " + std::strerror(errno));
    path_ = buf.data();
    file_ = ::fdopen(fd, "w+b");
  }
  ~Run() {
    if (file_) std::fclose(file_);
    ::unlink(path_.c_str());
  }
  void write(const uint64_t* keys, size_t count) {
    if (std::fwrite(keys, sizeof(uint64_t), count, file_) != count || std::fflush(file_) != 0)
      throw GraphError("cannot write sort run '" + path_ + "' (disk full?)");
    std::rewind(file_);
  }
  // Refills buf; returns the number of keys read.
  size_t read(uint64_t* buf, size_t max) {
    const size_t n = std::fread(buf, sizeof(uint64_t), max, file_);
    if (n < max && std::ferror(file_)) throw GraphError("cannot read sort run '" + path_ + "'");
    return n;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// Streams sorted, unique keys into vertex.dat and edge.dat.
class CsrWriter {
 public:
  CsrWriter(const std::string& dir, uint64_t vertices)
      : vertices_(vertices), offsets_(vertex_file(dir)), targets_(edge_file(dir)) {}

  void add(uint64_t key) {
    const uint64_t u = key >> 32;
    while (next_vertex_ <= u) write_offset();
    const vertex_t v = static_cast<vertex_t>(key & kLowMask);
    targets_.write(&v, sizeof v);
    ++edges_;
  }
  uint64_t finish() {
    while (next_vertex_ <= vertices_) write_offset();
    offsets_.commit();
    targets_.commit();
    return edges_;
  }

 private:
  uint64_t vertices_, next_vertex_ = 0, edges_ = 0;
  OutputFile offsets_, targets_;
  void write_offset() {
    offsets_.write(&edges_, sizeof edges_);
    ++next_vertex_;
  }
};

// Returns true when it created the directory (false: it was already there).
bool make_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return true;
  if (errno != EEXIST) throw GraphError("cannot create directory '" + dir + "': " + std::strerror(errno));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw GraphError("'" + dir + "' is not a directory");
  return false;
}

// A graph with no edges is no use to BFS (no root to start from): name the input and why.
void check_has_edges(const std::string& path, const CsrInfo& info) {
  if (info.input_edges == 0) throw GraphError("'" + path + "': no edges (the edge list is empty)");
  throw GraphError("'" + path + "': no edges besides self-loops (all " + std::to_string(info.input_edges) +
                   " input edges are self-loops, which are dropped)");
}

// k-way merge of the runs with duplicate removal.
void merge_runs(std::vector<std::unique_ptr<Run>>& runs, uint64_t memory_bytes, CsrWriter& out) {
  const size_t per_run = std::max<size_t>(4096, memory_bytes / sizeof(uint64_t) / 2 / runs.size());
  struct Cursor {
    std::vector<uint64_t> buf;
    size_t pos = 0, end = 0;
  };
  std::vector<Cursor> cursors(runs.size());
  using Item = std::pair<uint64_t, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  auto refill = [&](size_t r) {
    Cursor& c = cursors[r];
    c.pos = 0;
    c.end = runs[r]->read(c.buf.data(), c.buf.size());
    return c.end > 0;
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    cursors[r].buf.resize(per_run);
    if (refill(r)) heap.push({cursors[r].buf[0], r});
  }
  bool have_last = false;
  uint64_t last = 0;
  while (!heap.empty()) {
    const auto [key, r] = heap.top();
    heap.pop();
    if (!have_last || key != last) out.add(key);
    have_last = true, last = key;
    Cursor& c = cursors[r];
    if (++c.pos < c.end || refill(r)) heap.push({c.buf[c.pos], r});
  }
}

// The ingest itself; ingest_edges made the output directory and cleans up if this throws.
IngestReport ingest_into(const IngestOptions& opt) {
  const std::string tmp_dir = opt.tmp_dir.empty() ? opt.out_dir : opt.tmp_dir;

  auto reader = open_edge_reader(opt.edges_path, opt.format);
  const uint64_t limit = opt.vertices ? opt.vertices : kMaxVertices;
  const size_t capacity = std::max<size_t>(1 << 12, opt.memory_bytes / 16) & ~size_t{1};
  std::vector<uint64_t> keys(capacity);
  std::vector<Edge> batch(std::min<size_t>(1 << 16, capacity / 2));
  std::vector<std::unique_ptr<Run>> runs;

  IngestReport report;
  CsrInfo& info = report.info;
  info.source = opt.edges_path;
  uint64_t max_id = 0;
  size_t used = 0;
  dimmap::support::ProgressReporter progress("ingest: reading " + opt.edges_path, reader->size_hint(), opt.progress && reader->size_hint() > 0);
  for (;;) {
    const size_t n = reader->read(batch.data(), std::min(batch.size(), (capacity - used) / 2));
    for (size_t i = 0; i < n; ++i) {
      const Edge& e = batch[i];
      const uint64_t u = static_cast<uint64_t>(e.u), v = static_cast<uint64_t>(e.v);
      if (u >= limit || v >= limit)
        throw GraphError("'" + opt.edges_path + "': edge " + std::to_string(info.input_edges + i) + " (" +
                         std::to_string(u) + ", " + std::to_string(v) + ") has a vertex id beyond " +
                         (opt.vertices ? "--vertices=" + std::to_string(opt.vertices)
                                       : std::string("the 32-bit id range")));
      max_id = std::max({max_id, u, v});
      if (u == v) {
        ++info.self_loops;
        continue;
      }
      keys[used++] = u << 32 | v;
      keys[used++] = v << 32 | u;
    }
    info.input_edges += n;
    progress.advance(n);
    const bool done = n == 0;
    if (used + 2 > capacity || (done && !runs.empty() && used > 0)) {
      used = sort_unique(keys, used, opt.threads);
      runs.push_back(std::make_unique<Run>(tmp_dir, static_cast<unsigned>(runs.size())));
      runs.back()->write(keys.data(), used);
      used = 0;
    }
    if (done) break;
  }
  progress.finish();
  if (runs.empty() && used == 0) check_has_edges(opt.edges_path, info);
  info.vertices = opt.vertices ? opt.vertices : (info.input_edges ? max_id + 1 : 0);

  CsrWriter writer(opt.out_dir, info.vertices);
  if (runs.empty()) {
    used = sort_unique(keys, used, opt.threads);
    for (size_t i = 0; i < used; ++i) writer.add(keys[i]);
  } else {
    std::vector<uint64_t>().swap(keys);
    merge_runs(runs, opt.memory_bytes, writer);
  }
  info.edges = writer.finish();
  report.runs = static_cast<unsigned>(runs.size());
  runs.clear();
  info.write(opt.out_dir);
  return report;
}

}  // namespace

IngestReport ingest_edges(const IngestOptions& opt) {
  if (opt.vertices > kMaxVertices)
    throw GraphError("--vertices " + std::to_string(opt.vertices) + " is more than this CSR supports (2^32 - 1)");
  const bool created = make_dir(opt.out_dir);
  ::unlink(info_file(opt.out_dir).c_str());  // the directory is not a valid graph until we finish
  try {
    return ingest_into(opt);
  } catch (...) {
    // A failed ingest leaves no output: its temporary files are gone already (OutputFile, Run);
    // this removes CSR files it may have committed and the directory if this run made it.
    ::unlink(vertex_file(opt.out_dir).c_str());
    ::unlink(edge_file(opt.out_dir).c_str());
    if (created) ::rmdir(opt.out_dir.c_str());
    throw;
  }
}

}  // namespace graph
