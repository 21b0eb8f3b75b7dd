// db_builder.cpp - kmer build: taxonomy + genome list -> partitions -> taxa lists -> DB file.
#include <kmer/db_builder.hpp>
#include <kmer/error.hpp>
#include <kmer/genome_list.hpp>
#include <kmer/kmer_codec.hpp>
#include <kmer/taxa_list.hpp>
#include <kmer/taxonomy.hpp>

#include "build_partitions.hpp"
#include "db_writer.hpp"
#include "taxonomy_codec.hpp"

#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>

namespace kmer {

TaxonCounts reduce_toward_lca(TaxonCounts taxa, const Taxonomy& taxonomy, unsigned max_taxa) {
  while (max_taxa > 0 && taxa.size() > max_taxa) {
    uint32_t deepest = 0;
    for (const auto& [t, c] : taxa) deepest = std::max(deepest, taxonomy.depth_at(taxonomy.index_of(t)));
    for (auto& [t, c] : taxa)
      if (taxonomy.depth_at(taxonomy.index_of(t)) == deepest) t = taxonomy.parent(t);
    std::sort(taxa.begin(), taxa.end());
    TaxonCounts merged;
    for (const auto& [t, c] : taxa) {
      if (!merged.empty() && merged.back().first == t)
        merged.back().second = std::min<uint32_t>(65535, merged.back().second + c);
      else
        merged.emplace_back(t, c);
    }
    taxa.swap(merged);
  }
  return taxa;
}

namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A scratch directory removed (with what is left in it) on scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& parent) {
    path_ = parent + "/.kmer-build.XXXXXX";
    if (!::mkdtemp(path_.data()))
      fail_at(parent, 0, std::string("cannot create a scratch directory: ") + std::strerror(errno));
  }
  ~ScratchDir() {
    for (const char* f : {"/stream.bin", "/values.bin"}) ::unlink((path_ + f).c_str());
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class BinaryWriter {
 public:
  explicit BinaryWriter(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail_at(path, 0, std::string("cannot create temporary file: ") + std::strerror(errno));
  }
  ~BinaryWriter() {
    if (f_) std::fclose(f_);
  }
  void write(const void* data, size_t bytes) {
    if (bytes == 0) return;  // data may be null then (an empty vector's), which fwrite does not allow
    if (std::fwrite(data, 1, bytes, f_) != bytes)
      fail_at(path_, 0, std::string("cannot write temporary file: ") + std::strerror(errno));
  }
  void close() {
    if (std::fclose(f_) != 0) fail_at(path_, 0, "cannot write temporary file");
    f_ = nullptr;
  }

 private:
  std::string path_;
  FILE* f_;
};

// Deduplicated value store: each distinct list is written once.
class ValueStore {
 public:
  explicit ValueStore(const std::string& path) : out_(path) {}
  uint32_t add(const TaxonCounts& taxa) {
    key_.assign(reinterpret_cast<const char*>(taxa.data()), taxa.size() * sizeof(taxa[0]));
    auto it = offsets_.find(key_);
    if (it != offsets_.end()) return it->second;
    const uint64_t n = taxa.size();
    if (words_ + list_words(n) >= kInlineTaxon)
      throw Error("the value store would exceed 8 GiB (2^31 words): too many distinct taxa lists");
    std::vector<uint32_t> words(list_words(n), 0);
    words[0] = static_cast<uint32_t>(n);
    auto* counts = reinterpret_cast<uint16_t*>(words.data() + 1 + n);
    for (uint64_t i = 0; i < n; ++i) {
      words[1 + i] = taxa[i].first;
      counts[i] = static_cast<uint16_t>(std::min<uint32_t>(taxa[i].second, 65535));
    }
    out_.write(words.data(), words.size() * sizeof(uint32_t));
    const auto offset = static_cast<uint32_t>(words_);
    words_ += words.size();
    offsets_.emplace(key_, offset);
    return offset;
  }
  uint64_t words() const { return words_; }
  uint64_t lists() const { return offsets_.size(); }
  void close() { out_.close(); }

 private:
  BinaryWriter out_;
  std::unordered_map<std::string, uint32_t> offsets_;
  std::string key_;
  uint64_t words_ = 0;
};

}  // namespace

BuildStats build_database(const BuildOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.k < 1 || o.k > kMaxK) throw Error("--k must be between 1 and 32 (got " + std::to_string(o.k) + ")");
  if (o.out.empty()) throw Error("no output path (--out)");
  // Everything that can be wrong with the input is checked before any work or output.
  const Taxonomy taxonomy = Taxonomy::load_dir(o.taxonomy_dir);
  const std::vector<GenomeEntry> genomes = read_genome_list(o.genome_list, taxonomy);
  if (genomes.size() > 0xFFFFFFFEu) throw Error(o.genome_list + ": too many genomes");

  BuildStats stats;
  stats.genomes = genomes.size();
  ScratchDir scratch(o.temp_dir.empty() ? dir_of(o.out) : o.temp_dir);
  const unsigned threads = o.threads ? o.threads : static_cast<unsigned>(omp_get_max_threads());

  // Pass 1: scatter. 256 prefix partitions (fewer for tiny k); big ones split in pass 2.
  const unsigned bits = std::min(8u, 2 * o.k);
  PartitionFiles parts(scratch.path(), o.k, bits);
  const auto scan = parts.scan(genomes, threads, o.progress);
  stats.bases = scan.bases;
  stats.records = scan.records;

  // Pass 2: per k-mer taxa lists, deduplicated into the value store, k-mers in order.
  const bool inline_singles = o.index == IndexKind::two_level;
  ValueStore values(scratch.path() + "/values.bin");
  BinaryWriter stream(scratch.path() + "/stream.bin");
  std::vector<StreamRecord> pending;
  TaxonCounts taxa;
  std::set<uint32_t> db_taxa;
  for (const auto& g : genomes) db_taxa.insert(g.taxid);
  parts.reduce(o.memory_bytes, o.progress, [&](uint64_t kmer, const uint32_t* gs, size_t n) {
    taxa.clear();
    for (size_t i = 0; i < n; ++i) taxa.emplace_back(genomes[gs[i]].taxid, 1);
    std::sort(taxa.begin(), taxa.end());
    size_t w = 0;
    for (size_t i = 0; i < taxa.size(); ++i) {
      if (w > 0 && taxa[w - 1].first == taxa[i].first)
        taxa[w - 1].second = std::min<uint32_t>(65535, taxa[w - 1].second + 1);
      else
        taxa[w++] = taxa[i];
    }
    taxa.resize(w);
    if (o.max_taxa && taxa.size() > o.max_taxa) {
      taxa = reduce_toward_lca(std::move(taxa), taxonomy, o.max_taxa);
      ++stats.reduced_lists;
      for (const auto& tc : taxa) db_taxa.insert(tc.first);
    }
    StreamRecord r{kmer, 0};
    if (inline_singles && taxa.size() == 1 && taxa[0].second == 1 && taxa[0].first < kInlineTaxon) {
      r.value = kInlineTaxon | taxa[0].first;
      ++stats.inline_kmers;
    } else {
      r.value = values.add(taxa);
    }
    pending.push_back(r);
    if (pending.size() == 1 << 14) {
      stream.write(pending.data(), pending.size() * sizeof(StreamRecord));
      pending.clear();
    }
    ++stats.kmers;
  });
  stream.write(pending.data(), pending.size() * sizeof(StreamRecord));
  stream.close();
  values.close();
  // A DB without k-mers classifies nothing: genomes shorter than k, or without k A/C/G/T bases
  // in a row. Refused before any output is written.
  if (stats.kmers == 0)
    fail_at(o.genome_list, 0, "no " + std::to_string(o.k) + "-mers in its " + std::to_string(genomes.size()) +
                                  " genome(s) of " + std::to_string(stats.bases) + " bases in all (a k-mer needs " +
                                  std::to_string(o.k) + " A/C/G/T bases in a row)");
  stats.partitions = parts.partitions_processed();
  stats.lists = values.lists();

  // Pass 3: the index.
  WriterInput in;
  in.kind = o.index;
  in.k = o.k;
  in.max_taxa = o.max_taxa;
  in.stream_path = scratch.path() + "/stream.bin";
  in.kmers = stats.kmers;
  in.values_path = scratch.path() + "/values.bin";
  in.value_words = values.words();
  in.lists = values.lists();
  in.inline_kmers = stats.inline_kmers;
  in.genomes = genomes.size();
  in.bases = stats.bases;
  in.taxonomy = encode_taxonomy(taxonomy, std::vector<uint32_t>(db_taxa.begin(), db_taxa.end()));
  in.compact = o.compact;
  in.progress = o.progress;
  stats.file_bytes = write_database(in, o.out);
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace kmer
