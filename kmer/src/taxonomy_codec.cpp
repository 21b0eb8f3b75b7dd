// taxonomy_codec.cpp - encode/decode the DB's taxonomy section.
#include "taxonomy_codec.hpp"

#include <kmer/error.hpp>

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace kmer {

namespace {
struct Record {
  uint32_t taxid, parent, rank_offset, name_offset;
};
}  // namespace

std::vector<uint8_t> encode_taxonomy(const Taxonomy& taxonomy, const std::vector<uint32_t>& taxids) {
  std::unordered_set<uint32_t> keep;
  for (uint32_t t : taxids)
    for (uint32_t a : taxonomy.lineage(t)) keep.insert(a);
  keep.insert(taxonomy.root_taxid());
  // Root first, then by depth so a decoder sees parents before children (not required, tidy).
  std::vector<uint32_t> order(keep.begin(), keep.end());
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t da = taxonomy.depth_at(taxonomy.index_of(a)), db = taxonomy.depth_at(taxonomy.index_of(b));
    return da != db ? da < db : a < b;
  });
  std::vector<Record> records;
  std::string pool;
  for (uint32_t t : order) {
    Record r{t, taxonomy.parent(t), static_cast<uint32_t>(pool.size()), 0};
    pool += taxonomy.rank(t);
    pool += '\0';
    r.name_offset = static_cast<uint32_t>(pool.size());
    pool += taxonomy.name(t);
    pool += '\0';
    records.push_back(r);
  }
  const uint64_t n = records.size();
  std::vector<uint8_t> out(sizeof(uint64_t) + n * sizeof(Record) + pool.size());
  std::memcpy(out.data(), &n, sizeof n);
  std::memcpy(out.data() + sizeof n, records.data(), n * sizeof(Record));
  std::memcpy(out.data() + sizeof n + n * sizeof(Record), pool.data(), pool.size());
  return out;
}

Taxonomy decode_taxonomy(const uint8_t* data, uint64_t bytes, const std::string& source) {
  uint64_t n = 0;
  if (bytes < sizeof n) fail_at(source, 0, "taxonomy section is too short");
  std::memcpy(&n, data, sizeof n);
  if (n == 0 || n > (bytes - sizeof n) / sizeof(Record)) fail_at(source, 0, "taxonomy section is corrupt");
  const uint8_t* pool = data + sizeof n + n * sizeof(Record);
  const uint64_t pool_bytes = bytes - sizeof n - n * sizeof(Record);
  auto str = [&](uint32_t off) {
    if (off >= pool_bytes) fail_at(source, 0, "taxonomy section has a string outside its pool");
    const void* end = std::memchr(pool + off, '\0', pool_bytes - off);
    if (!end) fail_at(source, 0, "taxonomy section has an unterminated string");
    return std::string(reinterpret_cast<const char*>(pool + off), static_cast<const uint8_t*>(end) - (pool + off));
  };
  Taxonomy tax;
  for (uint64_t i = 0; i < n; ++i) {
    Record r;
    std::memcpy(&r, data + sizeof n + i * sizeof(Record), sizeof r);
    tax.add(r.taxid, r.parent, str(r.rank_offset), str(r.name_offset));
  }
  tax.finalize(source + " (taxonomy section)");
  return tax;
}

}  // namespace kmer
