// bfs_files.cpp - presets and overrides -> placements -> five mapped regions.
#include <graph/bfs_files.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace graph {
namespace {

void pread_all(const std::string& path, void* out, uint64_t bytes, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw GraphError("cannot open '" + path + "': " + std::strerror(errno));
  uint64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, static_cast<char*>(out) + done, bytes - done, static_cast<off_t>(offset + done));
    if (n <= 0) {
      ::close(fd);
      throw GraphError("cannot read '" + path + "'" + (n < 0 ? std::string(": ") + std::strerror(errno) : ""));
    }
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
}

// Anonymous memory may use transparent huge pages: the BFS touches its arrays at random,
// so 2 MiB pages save most TLB misses. Data already loaded is collapsed in place
// (MADV_COLLAPSE, Linux 6.1+); failure only costs speed.
void advise_huge_pages(const dimmap::Placement& where, void* data, size_t bytes, bool loaded) {
  if (where.backend != dimmap::Backend::memory || !where.dir.empty() || bytes < (2u << 20)) return;
  ::madvise(data, bytes, MADV_HUGEPAGE);
#ifndef MADV_COLLAPSE
  constexpr int MADV_COLLAPSE = 25;
#endif
  if (loaded) ::madvise(data, bytes, MADV_COLLAPSE);
}

}  // namespace

const char* to_string(BfsFile file) {
  switch (file) {
    case BfsFile::queue: return "queue";
    case BfsFile::progress: return "progress";
    case BfsFile::cache: return "cache";
    case BfsFile::vertex: return "vertex";
    case BfsFile::edge: return "edge";
  }
  return "?";
}

std::shared_ptr<dimmap::PlacementPlan> make_bfs_plan() {
  std::vector<dimmap::Structure> files;
  for (BfsFile f : kBfsFiles) {
    const bool is_graph = f == BfsFile::vertex || f == BfsFile::edge;
    files.push_back({to_string(f), /*memory_when_semi_external=*/!is_graph, /*read_only=*/is_graph});
  }
  return std::make_shared<dimmap::PlacementPlan>(std::move(files), dimmap::Preset::in_memory);
}

BfsPlacements resolve_placements(dimmap::PlacementPlan& plan, int rank) {
  plan.set_rank(rank);
  BfsPlacements out;
  for (BfsFile f : kBfsFiles) {
    dimmap::Placement p = plan.placement_of(to_string(f));
    // Every file is read at random: Linux readahead would only waste the budget.
    if (p.backend == dimmap::Backend::mmap) p.advise_random = true;
    out.file[static_cast<size_t>(f)] = p;
  }
  return out;
}

std::string BfsPlacements::describe() const {
  std::string text;
  for (BfsFile f : kBfsFiles) {
    if (!text.empty()) text += ' ';
    text += std::string(to_string(f)) + "=" + (*this)[f].describe();
  }
  return text;
}

const void* BfsFiles::open_slice(BfsFile f, const dimmap::Placement& where, const std::string& path, uint64_t begin,
                                 uint64_t bytes, uint64_t file_bytes) {
  auto& r = regions_[static_cast<size_t>(f)];
  if (bytes == 0) {  // an edgeless slice: nothing to map, but keep a valid pointer
    r.emplace(dimmap::Region::scratch(dimmap::Placement::anonymous(), 4096, to_string(f)));
    return r->data();
  }
  if (where.backend == dimmap::Backend::memory && bytes < file_bytes) {
    // Only this rank's slice is copied into memory.
    r.emplace(dimmap::Region::scratch(where, bytes, to_string(f)));
    advise_huge_pages(where, r->data(), r->size(), false);
    pread_all(path, r->data(), bytes, begin);
    return r->data();
  }
  r.emplace(dimmap::Region::open(where, path, dimmap::Access::read_only));
  advise_huge_pages(where, r->data(), r->size(), true);
  return static_cast<const char*>(r->data()) + begin;
}

BfsFiles::BfsFiles(const std::string& dir, const CsrInfo& info, const Partition& part, const BfsPlacements& where,
                   int threads, unsigned vertex_ranges) {
  const uint64_t first = part.first(), count = part.count();
  graph_.offsets = static_cast<const uint64_t*>(open_slice(BfsFile::vertex, where[BfsFile::vertex], vertex_file(dir),
                                                           first * 8, (count + 1) * 8, (info.vertices + 1) * 8));
  const uint64_t edge_begin = graph_.offsets[0], edge_end = graph_.offsets[count];
  graph_.edge_base = edge_begin;
  graph_.targets = static_cast<const vertex_t*>(open_slice(BfsFile::edge, where[BfsFile::edge], edge_file(dir),
                                                           edge_begin * sizeof(vertex_t),
                                                           (edge_end - edge_begin) * sizeof(vertex_t),
                                                           info.edges * sizeof(vertex_t)));
  auto scratch = [&](BfsFile f, size_t bytes) -> void* {
    auto& r = regions_[static_cast<size_t>(f)];
    r.emplace(dimmap::Region::scratch(where[f], bytes, std::string("bfs-") + to_string(f)));
    // Not the queue: it is read and written a chunk at a time, and huge pages would make
    // its memory 2 MiB per chunk in use rather than 4 KiB (peaks then varied by 8 MiB).
    if (f != BfsFile::queue) advise_huge_pages(where[f], r->data(), r->size(), false);
    return r->data();
  };
  arrays_.progress = static_cast<uint64_t*>(scratch(BfsFile::progress, progress_bytes(count)));
  arrays_.cache = static_cast<uint8_t*>(scratch(BfsFile::cache, cache_bytes(count)));
  arrays_.queue_bytes = queue_bytes(count, threads, vertex_ranges);
  arrays_.queue = scratch(BfsFile::queue, arrays_.queue_bytes);
}

}  // namespace graph
