// containers.hpp - the Boost.Interprocess containers the map files hold, and one lookup
// function per structure (shared by the benchmark kernel and its verifier).
#pragma once

#include <boost/interprocess/allocators/allocator.hpp>
#include <boost/interprocess/containers/map.hpp>
#include <boost/interprocess/managed_external_buffer.hpp>
#include <boost/unordered_map.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "microbench/structure_file.hpp"

namespace microbench {

namespace bip = boost::interprocess;
using Segment = bip::managed_external_buffer;
using MapAllocator = bip::allocator<std::pair<const uint64_t, uint64_t>, Segment::segment_manager>;
// Red-black tree (Boost.Intrusive rbtree) with offset pointers.
using OrderedMap = bip::map<uint64_t, uint64_t, std::less<uint64_t>, MapAllocator>;
// Hash map with offset pointers. boost::hash of an integer is the integer: our keys are
// already well mixed.
using UnorderedMap =
    boost::unordered_map<uint64_t, uint64_t, boost::hash<uint64_t>, std::equal_to<uint64_t>, MapAllocator>;

// Finders: bool operator()(key, &value), read-only, safe from many threads at once.
struct SortedVectorFinder {
  const Entry* begin;
  const Entry* end;
  bool operator()(uint64_t key, uint64_t* value) const {
    const Entry* it = std::lower_bound(begin, end, key, [](const Entry& e, uint64_t k) { return e.key < k; });
    if (it == end || it->key != key) return false;
    *value = it->value;
    return true;
  }
};

template <class Map>
struct MapFinder {
  const Map* map;
  bool operator()(uint64_t key, uint64_t* value) const {
    auto it = map->find(key);
    if (it == map->end()) return false;
    *value = it->second;
    return true;
  }
};

// Calls fn(finder) with the finder for the file's structure.
template <class Fn>
auto with_finder(const StructureFile& file, Fn&& fn) {
  switch (file.structure()) {
    case Structure::ordered_map:
      return fn(MapFinder<OrderedMap>{static_cast<const OrderedMap*>(file.root())});
    case Structure::unordered_map:
      return fn(MapFinder<UnorderedMap>{static_cast<const UnorderedMap*>(file.root())});
    case Structure::sorted_vector:
      break;
  }
  const auto* entries = static_cast<const Entry*>(file.root());
  return fn(SortedVectorFinder{entries, entries + file.entries()});
}

}  // namespace microbench
