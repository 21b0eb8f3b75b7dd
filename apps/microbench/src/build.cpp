// build.cpp - building a structure file: a sorted vector, or a Boost.Interprocess map in a
// managed_external_buffer over the file's mapping.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include <dimmap/support/atomic_file.hpp>

#include "containers.hpp"
#include "header_check.hpp"
#include "microbench/keys.hpp"
#include "microbench/structure_file.hpp"

namespace microbench {
namespace {

constexpr uint64_t kMinBytes = 1ull << 20;

void report(const BuildOptions& opt, double fraction) {
  if (opt.progress) opt.progress(fraction);
}

uint64_t build_sorted_vector(char* area, uint64_t area_bytes, const BuildOptions& opt) {
  const uint64_t n = area_bytes / sizeof(Entry);
  auto* entries = reinterpret_cast<Entry*>(area);
  const uint64_t step = std::max<uint64_t>(1, n / 20);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t key = key_of(i, opt.seed);
    entries[i] = Entry{key, value_of(key)};
    if (i % step == 0) report(opt, 0.3 * i / n);
  }
  std::sort(entries, entries + n, [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return n;
}

template <class Map>
Map* construct_map(Segment& seg, uint64_t n) {
  if constexpr (std::is_same_v<Map, OrderedMap>) {
    return seg.construct<OrderedMap>(bip::anonymous_instance)(std::less<uint64_t>(), seg.get_segment_manager());
  } else {
    return seg.construct<UnorderedMap>(bip::anonymous_instance)(n, boost::hash<uint64_t>(), std::equal_to<uint64_t>(),
                                                                 seg.get_segment_manager());
  }
}

// Bytes of segment one entry costs (node, allocator header, and for the hash map its share
// of the bucket array), measured on a small build.
template <class Map>
double bytes_per_entry() {
  constexpr uint64_t n = 1 << 15;
  std::vector<char> buf(16 << 20);
  Segment seg(bip::create_only, buf.data(), buf.size());
  const uint64_t before = seg.get_free_memory();
  Map* m = construct_map<Map>(seg, n);
  for (uint64_t i = 0; i < n; ++i) m->emplace(key_of(i, 1), i);
  return static_cast<double>(before - seg.get_free_memory()) / n;
}

template <class Map>
uint64_t build_map(char* area, uint64_t area_bytes, const BuildOptions& opt, uint64_t* root_in_area) {
  const double per_entry = bytes_per_entry<Map>();
  uint64_t n = static_cast<uint64_t>((area_bytes - (64 << 10)) / per_entry * 0.98);
  for (int attempt = 0; attempt < 4 && n > 0; ++attempt) {
    try {
      Segment seg(bip::create_only, area, area_bytes);
      Map* m = construct_map<Map>(seg, n);
      const uint64_t step = std::max<uint64_t>(1, n / 100);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t key = key_of(i, opt.seed);
        m->emplace(key, value_of(key));
        if (i % step == 0) report(opt, static_cast<double>(i) / n);
      }
      *root_in_area = static_cast<uint64_t>(reinterpret_cast<char*>(m) - area);
      return n;
    } catch (const bip::bad_alloc&) {
      n = n / 100 * 95;  // the estimate was a little optimistic: start again with fewer
    }
  }
  throw dimmap::Error("cannot fit a " + std::string(to_string(opt.structure)) + " into " +
                      dimmap::format_size(area_bytes) + " of '" + opt.path + "'");
}

}  // namespace

BuildReport build_structure_file(const BuildOptions& opt) {
  if (opt.path.empty()) throw dimmap::Error("no output file given");
  if (opt.bytes < kMinBytes)
    throw dimmap::Error("a structure file of " + dimmap::format_size(opt.bytes) + " is too small (at least " +
                        dimmap::format_size(kMinBytes) + ")");
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t bytes = (opt.bytes + kHeaderBytes - 1) / kHeaderBytes * kHeaderBytes;
  dimmap::support::PendingRename output(opt.path);  // removed unless renamed into place
  BuildReport rep;
  {
    dimmap::Region region = dimmap::Region::create(opt.placement, output.temp_path(), bytes);
    char* base = region.as<char>();
    char* area = base + kHeaderBytes;
    const uint64_t area_bytes = bytes - kHeaderBytes;
    uint64_t root = kHeaderBytes;
    switch (opt.structure) {
      case Structure::sorted_vector:
        rep.entries = build_sorted_vector(area, area_bytes, opt);
        break;
      case Structure::ordered_map:
        rep.entries = build_map<OrderedMap>(area, area_bytes, opt, &root);
        root += kHeaderBytes;
        break;
      case Structure::unordered_map:
        rep.entries = build_map<UnorderedMap>(area, area_bytes, opt, &root);
        root += kHeaderBytes;
        break;
    }
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.structure = static_cast<uint32_t>(opt.structure);
    h.entries = rep.entries;
    h.seed = opt.seed;
    h.file_bytes = bytes;
    h.root_offset = root;
    h.complete = 1;
    h.header_check = header_check(h);
    region.sync();  // the data first, then the header that declares it complete
    std::memcpy(base, &h, sizeof h);
    region.close();
    output.commit();
  }
  report(opt, 1.0);
  rep.bytes = bytes;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace microbench
