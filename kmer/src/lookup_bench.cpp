// lookup_bench.cpp - the raw lookup kernel and its inputs.
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>
#include <kmer/lookup_bench.hpp>
#include <kmer/sequence_reader.hpp>

#include <omp.h>

#include <chrono>
#include <fstream>

namespace kmer {

std::vector<uint64_t> kmers_from_reads(const std::string& path, unsigned k, uint64_t max_kmers) {
  std::vector<uint64_t> kmers;
  SequenceReader reader(path);
  SequenceRecord rec;
  while ((max_kmers == 0 || kmers.size() < max_kmers) && reader.next(rec)) {
    for_each_canonical_kmer(rec.sequence, k, [&](uint64_t kmer) {
      if (max_kmers == 0 || kmers.size() < max_kmers) kmers.push_back(kmer);
    });
  }
  return kmers;
}

std::vector<uint64_t> kmers_from_text(const std::string& path, unsigned k, uint64_t max_kmers) {
  std::ifstream in(path);
  if (!in) fail_at(path, 0, "cannot open k-mer file");
  std::vector<uint64_t> kmers;
  std::string line;
  uint64_t no = 0;
  while ((max_kmers == 0 || kmers.size() < max_kmers) && std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    try {
      kmers.push_back(canonical(encode_kmer(line, k), k));
    } catch (const Error& e) {
      fail_at(path, no, e.what());
    }
  }
  if (kmers.empty()) fail_at(path, 0, "no k-mers in the file");
  return kmers;
}

LookupResult run_lookups(const Database& db, const std::vector<uint64_t>& kmers, unsigned threads) {
  LookupResult r;
  r.lookups = kmers.size();
  uint64_t hits = 0, taxa = 0;
  const auto start = std::chrono::steady_clock::now();
  const int64_t n = static_cast<int64_t>(kmers.size());
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : hits, taxa)
  for (int64_t i = 0; i < n; ++i) {
    const TaxaList list = db.lookup(kmers[i]);
    if (!list.empty()) {
      ++hits;
      taxa += list.size();
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.hits = hits;
  r.taxa = taxa;
  return r;
}

}  // namespace kmer
