// lookup_verify.cpp - the kernel's verifier: the same data set in a std:: container built
// here, in memory, and the file's structure must give the same answer to every query.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "containers.hpp"
#include "microbench/keys.hpp"
#include "microbench/lookup.hpp"

namespace microbench {
namespace {

template <class Reference, class Finder>
VerifyResult compare(const Reference& ref, const Finder& find, const StructureFile& file, uint64_t queries,
                     uint64_t seed) {
  VerifyResult v;
  for (uint64_t q = 0; q < queries; ++q) {
    const uint64_t key = key_of(query_index(seed, q, file.entries()), file.seed());
    uint64_t got = 0;
    const bool hit = find(key, &got);
    const std::optional<uint64_t> want = ref(key);
    v.checked++;
    if (hit == want.has_value() && (!hit || got == *want)) continue;
    if (v.mismatches++ == 0)
      v.first_mismatch = "key " + std::to_string(key) + ": file says " + (hit ? std::to_string(got) : "absent") +
                         ", " + to_string(file.structure()) + " reference says " +
                         (want ? std::to_string(*want) : "absent");
  }
  return v;
}

}  // namespace

VerifyResult verify_against_std(const StructureFile& file, uint64_t queries, uint64_t seed) {
  const uint64_t n = file.entries();
  return with_finder(file, [&](const auto& find) -> VerifyResult {
    switch (file.structure()) {
      case Structure::sorted_vector: {
        std::vector<std::pair<uint64_t, uint64_t>> vec;
        vec.reserve(n);
        for (uint64_t i = 0; i < n; ++i) vec.emplace_back(key_of(i, file.seed()), value_of(key_of(i, file.seed())));
        std::sort(vec.begin(), vec.end());
        auto ref = [&](uint64_t k) -> std::optional<uint64_t> {
          auto it = std::lower_bound(vec.begin(), vec.end(), std::make_pair(k, uint64_t(0)));
          if (it == vec.end() || it->first != k) return std::nullopt;
          return it->second;
        };
        return compare(ref, find, file, queries, seed);
      }
      case Structure::ordered_map: {
        std::map<uint64_t, uint64_t> m;
        for (uint64_t i = 0; i < n; ++i) m.emplace(key_of(i, file.seed()), value_of(key_of(i, file.seed())));
        auto ref = [&](uint64_t k) -> std::optional<uint64_t> {
          auto it = m.find(k);
          return it == m.end() ? std::nullopt : std::optional<uint64_t>(it->second);
        };
        return compare(ref, find, file, queries, seed);
      }
      case Structure::unordered_map:
        break;
    }
    std::unordered_map<uint64_t, uint64_t> m;
    m.reserve(n);
    for (uint64_t i = 0; i < n; ++i) m.emplace(key_of(i, file.seed()), value_of(key_of(i, file.seed())));
    auto ref = [&](uint64_t k) -> std::optional<uint64_t> {
      auto it = m.find(k);
      return it == m.end() ? std::nullopt : std::optional<uint64_t>(it->second);
    };
    return compare(ref, find, file, queries, seed);
  });
}

}  // namespace microbench
