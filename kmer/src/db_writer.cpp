// db_writer.cpp - DB layout: header, taxonomy, value store, then the two-level or gnu-hash
// index, written through a shared mapping of a temporary file that is renamed at the end.
#include "db_writer.hpp"

#include <kmer/error.hpp>
#include <dimmap/support/atomic_file.hpp>
#include <dimmap/support/progress.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

namespace kmer {

namespace {

uint64_t align_page(uint64_t x) { return (x + kDbPage - 1) / kDbPage * kDbPage; }

bool is_prime(uint64_t n) {
  if (n < 2) return false;
  for (uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}
uint64_t next_prime(uint64_t n) {
  while (!is_prime(n)) ++n;
  return n;
}

uint32_t crc_of(const uint8_t* data, uint64_t bytes) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  return static_cast<uint32_t>(crc32_z(crc, data, bytes));
}

// Reads a file of fixed-size records sequentially in big chunks.
template <typename T>
class RecordReader {
 public:
  explicit RecordReader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) fail_at(path, 0, std::string("cannot open temporary file: ") + std::strerror(errno));
  }
  ~RecordReader() { std::fclose(f_); }
  // Next chunk of records (empty at the end).
  const std::vector<T>& next() {
    buf_.resize(1 << 16);
    const size_t got = std::fread(buf_.data(), sizeof(T), buf_.size(), f_);
    if (got == 0 && std::ferror(f_)) fail_at(path_, 0, "cannot read temporary file");
    buf_.resize(got);
    return buf_;
  }

 private:
  std::string path_;
  FILE* f_;
  std::vector<T> buf_;
};

// The output file: created under a temporary name, mapped read-write, renamed on commit().
class OutputFile {
 public:
  OutputFile(const std::string& final_path, uint64_t bytes) : file_(final_path, 1), bytes_(bytes) {
    if (::ftruncate(file_.fd(), static_cast<off_t>(bytes)) != 0)
      fail_at(final_path, 0, std::string("cannot size output file: ") + std::strerror(errno));
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, file_.fd(), 0);
    if (p == MAP_FAILED) fail_at(final_path, 0, std::string("cannot map output file: ") + std::strerror(errno));
    data_ = static_cast<uint8_t*>(p);
  }
  ~OutputFile() {
    if (data_) ::munmap(data_, bytes_);
  }
  uint8_t* data() { return data_; }

  void commit() {
    if (::msync(data_, bytes_, MS_SYNC) != 0) fail_at(file_.path(), 0, std::string("msync: ") + std::strerror(errno));
    ::munmap(data_, bytes_);
    data_ = nullptr;
    file_.commit(dimmap::support::Durability::sync);
  }

 private:
  dimmap::support::AtomicFile file_;  // removes the temporary file unless committed
  uint64_t bytes_;
  uint8_t* data_ = nullptr;
};

void copy_file_into(const std::string& path, uint8_t* dest, uint64_t bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail_at(path, 0, "cannot open temporary file");
  const size_t got = bytes ? std::fread(dest, 1, bytes, f) : 0;
  std::fclose(f);
  if (got != bytes) fail_at(path, 0, "temporary file is shorter than expected");
}

// The distinct values of the stream, sorted; stops counting past kValueCodes + 1 (too many
// for compact entries).
std::vector<uint32_t> distinct_values(const WriterInput& in) {
  std::unordered_set<uint32_t> seen;
  RecordReader<StreamRecord> reader(in.stream_path);
  for (;;) {
    const auto& chunk = reader.next();
    if (chunk.empty()) break;
    for (const StreamRecord& r : chunk) seen.insert(r.value);
    if (seen.size() > kValueCodes) break;
  }
  std::vector<uint32_t> values(seen.begin(), seen.end());
  std::sort(values.begin(), values.end());
  return values;
}

// Stores a record's value in an entry: as is, or, for compact entries, as its code: its
// index in the sorted distinct values (which the value-code table holds in that order).
struct ValueEncoder {
  const std::vector<uint32_t>& values;  // empty unless compact
  uint32_t operator()(uint32_t value) const {
    if (values.empty()) return value;
    return static_cast<uint32_t>(std::lower_bound(values.begin(), values.end(), value) - values.begin());
  }
};

template <typename Entry>
void fill_two_level(const WriterInput& in, const std::vector<uint64_t>& first, unsigned suffix_bits,
                    const ValueEncoder& encode, uint8_t* out, dimmap::support::ProgressReporter& bar) {
  auto* entries = reinterpret_cast<Entry*>(out);
  const uint64_t mask = suffix_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << suffix_bits) - 1;
  uint64_t current_prefix = ~uint64_t{0}, cursor = 0;
  RecordReader<StreamRecord> reader(in.stream_path);
  for (;;) {
    const auto& chunk = reader.next();
    if (chunk.empty()) break;
    for (const StreamRecord& r : chunk) {
      const uint64_t prefix = suffix_bits >= 64 ? 0 : r.kmer >> suffix_bits;
      if (prefix != current_prefix) {
        current_prefix = prefix;
        cursor = first[prefix] & ((uint64_t{1} << kFirstLevelStartBits) - 1);
      }
      Entry& e = entries[cursor++];
      e.suffix = static_cast<decltype(e.suffix)>(r.kmer & mask);
      e.value = static_cast<decltype(e.value)>(encode(r.value));
    }
    bar.advance(chunk.size());
  }
}

}  // namespace

TwoLevelShape choose_two_level_shape(uint64_t kmers, unsigned k, uint64_t distinct_values, CompactEntries compact) {
  const unsigned total_bits = 2 * k;
  unsigned target = 0;
  while (target < total_bits && (kmers >> target) > 64) ++target;  // ~64 entries per list
  if (compact != CompactEntries::never) {
    const unsigned prefix = std::max(target, total_bits > 16 ? total_bits - 16 : 0);
    // A first level up to 4x the usual (>= 16 entries per list on average) costs at most
    // 0.5 byte per k-mer; compact entries save 4.
    const bool pays = prefix <= target + 2;
    const bool fits = distinct_values <= kValueCodes && prefix <= std::max(target + 2, 24u);
    if (fits && (pays || compact == CompactEntries::always)) return {prefix, sizeof(TwoLevelEntry16)};
    if (compact == CompactEntries::always)
      throw Error(distinct_values > kValueCodes
                      ? "--compact=always: the DB has more than " + std::to_string(kValueCodes) +
                            " distinct taxa values, compact entries code at most that many"
                      : "--compact=always: 16-bit suffixes of " + std::to_string(k) + "-mers need a first level of 2^" +
                            std::to_string(prefix) + " entries (at most 2^24 allowed)");
  }
  const unsigned min_for_32 = total_bits > 32 ? total_bits - 32 : 0;
  if (target >= min_for_32) return {target, sizeof(TwoLevelEntry32)};
  // Suffixes need more than 32 bits: take a bigger first level if it costs at most 16x,
  // else 16-byte entries.
  if (min_for_32 - target <= 4) return {min_for_32, sizeof(TwoLevelEntry32)};
  return {target, sizeof(TwoLevelEntry64)};
}

uint64_t write_database(const WriterInput& in, const std::string& out_path) {
  DbHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kDbMagic, sizeof h.magic);
  h.version = kDbVersion;
  h.header_bytes = sizeof(DbHeader);
  h.index_kind = static_cast<uint32_t>(in.kind);
  h.k = in.k;
  h.max_taxa = in.max_taxa;
  h.kmer_count = in.kmers;
  h.list_count = in.lists;
  h.inline_count = in.inline_kmers;
  h.genome_count = in.genomes;
  h.reference_bases = in.bases;

  uint64_t offset = kDbPage;  // the header owns the first page
  auto place = [&](DbSection s, uint64_t bytes) {
    h.sections[s].offset = offset;
    h.sections[s].bytes = bytes;
    offset = align_page(offset + bytes);
  };
  place(kSectionTaxonomy, in.taxonomy.size());
  place(kSectionValues, in.value_words * sizeof(uint32_t));

  std::vector<uint64_t> first;  // two-level first level, built in memory (n/8 bytes)
  unsigned suffix_bits = 0;
  std::vector<uint32_t> values;  // compact entries: the value of each code, sorted
  if (in.kind == IndexKind::two_level) {
    // Distinct values are counted (one more pass over the stream) only where compact entries
    // would be chosen if they fit.
    const bool candidate = in.compact != CompactEntries::never &&
                           choose_two_level_shape(in.kmers, in.k, 0, in.compact).entry_bytes == sizeof(TwoLevelEntry16);
    if (candidate) values = distinct_values(in);
    TwoLevelShape shape = choose_two_level_shape(in.kmers, in.k, candidate ? values.size() : ~uint64_t{0}, in.compact);
    if (shape.entry_bytes != sizeof(TwoLevelEntry16)) values.clear();
    for (;;) {
      suffix_bits = 2 * in.k - shape.prefix_bits;
      first.assign(uint64_t{1} << shape.prefix_bits, 0);
      RecordReader<StreamRecord> reader(in.stream_path);
      for (;;) {
        const auto& chunk = reader.next();
        if (chunk.empty()) break;
        for (const StreamRecord& r : chunk) ++first[suffix_bits >= 64 ? 0 : r.kmer >> suffix_bits];
      }
      bool fits = true;
      for (uint64_t c : first) fits = fits && c <= kMaxBucketEntries;
      if (fits || shape.prefix_bits >= 2 * in.k) break;
      ++shape.prefix_bits;  // a list too long for its 24-bit count: split the prefixes finer
    }
    h.prefix_bits = shape.prefix_bits;
    h.entry_bytes = shape.entry_bytes;
    // Pack the lists into 4 KiB pages: a list that does not fit in what is left of the
    // current page starts on the next one; a list longer than a page starts on a boundary.
    const uint64_t per_page = kDbPage / shape.entry_bytes;
    uint64_t cursor = 0;
    for (uint64_t& f : first) {
      const uint64_t count = f;
      const uint64_t in_page = cursor % per_page;
      if (count > 0 && in_page != 0 && in_page + count > per_page) cursor += per_page - in_page;
      f = cursor | (count << kFirstLevelStartBits);
      cursor += count;
    }
    place(kSectionFirstLevel, first.size() * sizeof(uint64_t));
    place(kSectionSecondLevel, cursor * shape.entry_bytes);
    if (shape.entry_bytes == sizeof(TwoLevelEntry16)) place(kSectionValueCodes, kValueCodes * sizeof(uint32_t));
  } else {
    h.bucket_count = next_prime(in.kmers > 0 ? in.kmers : 1);
    place(kSectionBuckets, h.bucket_count * sizeof(uint64_t));
    place(kSectionNodes, in.kmers * sizeof(HashNode));
  }
  h.file_bytes = offset;

  OutputFile out(out_path, h.file_bytes);
  uint8_t* base = out.data();
  std::memcpy(base + h.sections[kSectionTaxonomy].offset, in.taxonomy.data(), in.taxonomy.size());
  copy_file_into(in.values_path, base + h.sections[kSectionValues].offset, h.sections[kSectionValues].bytes);

  dimmap::support::ProgressReporter bar("writing index", in.kmers, in.progress);
  if (in.kind == IndexKind::two_level) {
    std::memcpy(base + h.sections[kSectionFirstLevel].offset, first.data(), first.size() * sizeof(uint64_t));
    uint8_t* second = base + h.sections[kSectionSecondLevel].offset;
    const ValueEncoder encode{values};
    if (h.entry_bytes == sizeof(TwoLevelEntry16)) {
      auto* codes = reinterpret_cast<uint32_t*>(base + h.sections[kSectionValueCodes].offset);
      std::fill(codes, codes + kValueCodes, kInlineTaxon);  // unused codes: no taxa
      std::copy(values.begin(), values.end(), codes);
      fill_two_level<TwoLevelEntry16>(in, first, suffix_bits, encode, second, bar);
    } else if (h.entry_bytes == sizeof(TwoLevelEntry32)) {
      fill_two_level<TwoLevelEntry32>(in, first, suffix_bits, encode, second, bar);
    } else {
      fill_two_level<TwoLevelEntry64>(in, first, suffix_bits, encode, second, bar);
    }
  } else {
    auto* buckets = reinterpret_cast<uint64_t*>(base + h.sections[kSectionBuckets].offset);
    auto* nodes = reinterpret_cast<HashNode*>(base + h.sections[kSectionNodes].offset);
    uint64_t i = 0;
    RecordReader<StreamRecord> reader(in.stream_path);
    for (;;) {
      const auto& chunk = reader.next();
      if (chunk.empty()) break;
      for (const StreamRecord& r : chunk) {
        // Chaining as a node-based hash map inserts: the new node becomes the chain head.
        const uint64_t b = r.kmer % h.bucket_count;
        nodes[i] = HashNode{r.kmer, buckets[b], r.value};
        buckets[b] = ++i;
      }
      bar.advance(chunk.size());
    }
  }
  bar.finish();
  for (uint32_t s = 0; s < kSectionCount; ++s)
    h.sections[s].crc32 = crc_of(base + h.sections[s].offset, h.sections[s].bytes);
  h.header_crc32 = header_crc(h);
  std::memcpy(base, &h, sizeof h);
  out.commit();
  return h.file_bytes;
}

}  // namespace kmer
