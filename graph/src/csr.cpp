// csr.cpp - graph.info and loading CSR files.
#include <graph/csr.hpp>
#include <graph/output_file.hpp>

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace graph {
namespace {

constexpr const char* kFormat = "dimmap-csr-1";

uint64_t file_bytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw GraphError("missing graph file '" + path + "'");
  return static_cast<uint64_t>(st.st_size);
}

template <typename T>
std::vector<T> read_array(const std::string& path, uint64_t count) {
  if (file_bytes(path) != count * sizeof(T))
    throw GraphError("'" + path + "' has " + std::to_string(file_bytes(path)) + " bytes, graph.info says " +
                     std::to_string(count * sizeof(T)));
  std::vector<T> out(count);
  std::ifstream in(path, std::ios::binary);
  if (count && !in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * sizeof(T))))
    throw GraphError("cannot read '" + path + "'");
  return out;
}

}  // namespace

std::string vertex_file(const std::string& dir) { return dir + "/vertex.dat"; }
std::string edge_file(const std::string& dir) { return dir + "/edge.dat"; }
std::string info_file(const std::string& dir) { return dir + "/graph.info"; }

CsrInfo CsrInfo::read(const std::string& dir) {
  const std::string path = info_file(dir);
  std::ifstream in(path);
  if (!in) throw GraphError("'" + dir + "' is not a graph directory (no graph.info; run graph-ingest first)");
  CsrInfo info;
  bool have_format = false, have_vertices = false, have_edges = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, value;
    if (!(fields >> key)) continue;
    std::getline(fields >> std::ws, value);
    auto number = [&] {
      try {
        size_t used = 0;
        const uint64_t x = std::stoull(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
        return x;
      } catch (const std::exception&) {
        throw GraphError("'" + path + "': bad value for " + key + ": '" + value + "'");
      }
    };
    if (key == "format") {
      if (value != kFormat) throw GraphError("'" + path + "': unknown format '" + value + "'");
      have_format = true;
    } else if (key == "vertices") {
      info.vertices = number(), have_vertices = true;
    } else if (key == "edges") {
      info.edges = number(), have_edges = true;
    } else if (key == "input_edges") {
      info.input_edges = number();
    } else if (key == "self_loops") {
      info.self_loops = number();
    } else if (key == "source") {
      info.source = value;
    }
  }
  if (!have_format || !have_vertices || !have_edges)
    throw GraphError("'" + path + "' lacks format, vertices or edges");
  if (info.vertices > kMaxVertices) throw GraphError("'" + path + "': too many vertices");
  if (file_bytes(vertex_file(dir)) != (info.vertices + 1) * sizeof(uint64_t))
    throw GraphError("'" + vertex_file(dir) + "' does not match graph.info (" + std::to_string(info.vertices) +
                     " vertices)");
  if (file_bytes(edge_file(dir)) != info.edges * sizeof(vertex_t))
    throw GraphError("'" + edge_file(dir) + "' does not match graph.info (" + std::to_string(info.edges) + " edges)");
  return info;
}

void CsrInfo::write(const std::string& dir) const {
  std::ostringstream text;
  text << "format " << kFormat << "\nvertices " << vertices << "\nedges " << edges << "\nundirected_edges "
       << undirected_edges() << "\ninput_edges " << input_edges << "\nself_loops " << self_loops
       << "\nduplicates " << duplicates() << "\nsource " << source << "\n";
  OutputFile out(info_file(dir), 1 << 12);
  out.write_text(text.str());
  out.commit();
}

CsrGraph CsrGraph::load(const std::string& dir) {
  CsrGraph g;
  g.info = CsrInfo::read(dir);
  g.offsets = read_array<uint64_t>(vertex_file(dir), g.info.vertices + 1);
  g.targets = read_array<vertex_t>(edge_file(dir), g.info.edges);
  check_csr(g.view(), dir);
  return g;
}

void check_csr(const CsrView& g, const std::string& dir) {
  if (g.offsets[0] != 0 || g.offsets[g.vertices] != g.edges)
    throw GraphError("'" + dir + "': vertex offsets do not span the edge data");
  for (uint64_t v = 0; v < g.vertices; ++v)
    if (g.offsets[v] > g.offsets[v + 1]) throw GraphError("'" + dir + "': offsets decrease at vertex " + std::to_string(v));
  for (uint64_t e = 0; e < g.edges; ++e)
    if (g.targets[e] >= g.vertices) throw GraphError("'" + dir + "': edge " + std::to_string(e) + " leaves the graph");
}

}  // namespace graph
