// placement_checksum.cpp - the same code on three placements.
//
// A dimmap::Region is a memory-mapped data structure; a dimmap::Placement says who holds its
// bytes: anonymous memory (the file copied into RAM), Linux mmap (the page cache) or a
// DI-MMAP buffer of a fixed size. checksum_on() below is written once and runs on each, which
// is how the applications of this repository compare placements on equal memory budgets.
//
// usage: example-placement-checksum FILE [BUFFER_SIZE]
//   FILE: an existing, non-empty file whose size is a multiple of 8 bytes (opened read-only).
//   BUFFER_SIZE: the DI-MMAP buffer, e.g. 1M (the default), 256M, 4G.
// Prints one checksum per placement; exits 1 unless all three are equal.
#include <dimmap/placement.hpp>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>

#include "checksum.h"

namespace {

// Application code: knows nothing of where the bytes are.
uint64_t checksum_on(const dimmap::Placement& placement, const std::string& path) {
  dimmap::Region region = dimmap::Region::open(placement, path, dimmap::Access::read_only);
  if (region.size() % sizeof(uint64_t) != 0)
    throw dimmap::Error(path + ": size is not a multiple of 8 bytes");
  uint64_t sum = example_checksum(region.as<const uint64_t>(), region.size() / sizeof(uint64_t));
  region.close();  // unmaps; errors throw (the destructor would only log them)
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: example-placement-checksum FILE [BUFFER_SIZE]\n");
    return 2;
  }
  const std::string path = argv[1];
  try {
    const uint64_t buffer_bytes = dimmap::parse_size(argc == 3 ? argv[2] : "1M", "BUFFER_SIZE");
    // Scratch files of mmap and dimmap placements go to a storage directory; this program
    // makes none, but a placement names one all the same: the file's own.
    const std::string dir = std::filesystem::absolute(path).parent_path().string();

    // One buffer is a budget that every region placed on it shares. The environment's
    // DIMMAP_* settings apply; only the size is ours.
    std::shared_ptr<dimmap::Buffer> buffer = dimmap::Buffer::create(buffer_bytes);
    const dimmap::Placement placements[] = {
        dimmap::Placement::anonymous(),
        dimmap::Placement::mmap(dir),
        dimmap::Placement::dimmap(dir, buffer),
    };

    uint64_t first = 0;
    bool all_equal = true;
    for (size_t i = 0; i < std::size(placements); i++) {
      const uint64_t sum = checksum_on(placements[i], path);
      std::printf("%-7s checksum %016" PRIx64 "  (%s)\n", dimmap::to_string(placements[i].backend), sum,
                  placements[i].describe().c_str());
      if (i == 0) first = sum;
      all_equal = all_equal && sum == first;
    }

    const dimmap_stats_t s = buffer->stats();
    std::printf("dimmap buffer: %" PRIu64 " pages, %" PRIu64 " misses, %" PRIu64 " pages read ahead, %" PRIu64
                " evictions, %" PRIu64 " bytes read\n",
                s.buffer_pages, s.misses, s.prefetched, s.evictions, s.bytes_read);
    if (!all_equal) {
      std::fprintf(stderr, "example-placement-checksum: %s: the placements read different bytes\n", path.c_str());
      return 1;
    }
    return 0;
  } catch (const dimmap::Error& e) {  // messages name the file and the problem
    std::fprintf(stderr, "example-placement-checksum: %s\n", e.what());
    return 1;
  }
}
