// build_partitions.cpp - out-of-core scatter by k-mer prefix, then sort each partition.
#include "build_partitions.hpp"

#include <dimmap/support/progress.hpp>
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>
#include <kmer/sequence_reader.hpp>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace kmer {

namespace {

constexpr size_t kFlushRecords = 4096;  // per thread and partition

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

File open_file(const std::string& path, const char* mode) {
  File f(std::fopen(path.c_str(), mode));
  if (!f) fail_at(path, 0, std::string("cannot open temporary file: ") + std::strerror(errno));
  return f;
}

void write_all(FILE* f, const void* data, size_t bytes, const std::string& path) {
  if (bytes && std::fwrite(data, 1, bytes, f) != bytes)
    fail_at(path, 0, std::string("cannot write temporary file: ") + std::strerror(errno));
}

uint64_t file_size(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  std::fseek(f, 0, SEEK_END);
  const long n = std::ftell(f);
  std::fclose(f);
  return n < 0 ? 0 : static_cast<uint64_t>(n);
}

}  // namespace

PartitionFiles::PartitionFiles(std::string dir, unsigned k, unsigned bits) : dir_(std::move(dir)), k_(k), bits_(bits) {
  for (uint64_t p = 0; p < (uint64_t{1} << bits_); ++p) {
    char name[32];
    std::snprintf(name, sizeof name, "/part-%05llu.bin", static_cast<unsigned long long>(p));
    paths_.push_back(dir_ + name);
  }
}

PartitionFiles::~PartitionFiles() {
  for (const auto& p : paths_) ::unlink(p.c_str());
}

PartitionFiles::ScanStats PartitionFiles::scan(const std::vector<GenomeEntry>& genomes, unsigned threads,
                                               bool progress) {
  const size_t parts = paths_.size();
  std::vector<File> files;
  for (const auto& p : paths_) files.push_back(open_file(p, "wb"));
  std::vector<std::mutex> locks(parts);
  uint64_t total_bytes = 0;
  for (const auto& g : genomes) total_bytes += g.bytes;
  dimmap::support::ProgressReporter bar("scanning genomes", total_bytes, progress);
  const unsigned shift = 2 * k_ - bits_;
  uint64_t bases = 0, records = 0;
  std::string error;
  std::mutex error_lock;

#pragma omp parallel num_threads(threads ? threads : omp_get_max_threads()) reduction(+ : bases, records)
  {
    std::vector<std::vector<KmerRecord>> local(parts);
    auto flush = [&](size_t p) {
      std::lock_guard<std::mutex> lock(locks[p]);
      write_all(files[p].get(), local[p].data(), local[p].size() * sizeof(KmerRecord), paths_[p]);
      local[p].clear();
    };
#pragma omp for schedule(dynamic, 1)
    for (size_t g = 0; g < genomes.size(); ++g) {
      try {
        {
          std::lock_guard<std::mutex> lock(error_lock);
          if (!error.empty()) continue;
        }
        SequenceReader reader(genomes[g].path);
        SequenceRecord rec;
        while (reader.next(rec)) {
          bases += rec.sequence.size();
          for_each_canonical_kmer(rec.sequence, k_, [&](uint64_t kmer) {
            const size_t p = bits_ ? static_cast<size_t>(kmer >> shift) : 0;
            local[p].push_back({kmer, static_cast<uint32_t>(g)});
            if (local[p].size() == kFlushRecords) flush(p);
            ++records;
          });
        }
        bar.advance(genomes[g].bytes);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_lock);
        if (error.empty()) error = e.what();
      }
    }
    try {
      for (size_t p = 0; p < parts; ++p)
        if (!local[p].empty()) flush(p);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(error_lock);
      if (error.empty()) error = e.what();
    }
  }
  bar.finish();
  if (!error.empty()) throw Error(error);
  ScanStats stats;
  stats.bases = bases;
  stats.records = records;
  for (size_t p = 0; p < parts; ++p) {
    if (std::fflush(files[p].get()) != 0)
      fail_at(paths_[p], 0, std::string("cannot write temporary file: ") + std::strerror(errno));
  }
  return stats;
}

void PartitionFiles::reduce(uint64_t memory_bytes, bool progress, const Visitor& visit) {
  uint64_t total = 0;
  for (const auto& p : paths_) total += file_size(p);
  dimmap::support::ProgressReporter bar("sorting partitions", total, progress);
  for (const auto& p : paths_) {
    const uint64_t bytes = file_size(p);
    reduce_file(p, bits_, memory_bytes, visit);
    ::unlink(p.c_str());
    bar.advance(bytes);
  }
  bar.finish();
}

void PartitionFiles::reduce_file(const std::string& path, unsigned consumed_bits, uint64_t memory_bytes,
                                 const Visitor& visit) {
  const uint64_t bytes = file_size(path);
  if (bytes == 0) return;
  if (bytes % sizeof(KmerRecord) != 0) fail_at(path, 0, "temporary partition file has a partial record");
  const uint64_t n = bytes / sizeof(KmerRecord);
  const unsigned total_bits = 2 * k_;
  // Sorting needs the records once (std::sort is in place) plus slack for the genome lists.
  if (bytes + bytes / 8 > memory_bytes && consumed_bits + 4 <= total_bits) {
    // Too big: split by the next 4 bits of the prefix and reduce the pieces in order.
    const unsigned shift = total_bits - consumed_bits - 4;
    std::vector<std::string> subpaths;
    std::vector<File> subs;
    for (unsigned s = 0; s < 16; ++s) {
      subpaths.push_back(path + "." + std::to_string(s));
      subs.push_back(open_file(subpaths.back(), "wb"));
    }
    {
      File in = open_file(path, "rb");
      std::vector<KmerRecord> buf(1 << 16);
      std::vector<std::vector<KmerRecord>> out(16);
      size_t got;
      while ((got = std::fread(buf.data(), sizeof(KmerRecord), buf.size(), in.get())) > 0) {
        for (size_t i = 0; i < got; ++i) out[(buf[i].kmer >> shift) & 15].push_back(buf[i]);
        for (unsigned s = 0; s < 16; ++s) {
          write_all(subs[s].get(), out[s].data(), out[s].size() * sizeof(KmerRecord), subpaths[s]);
          out[s].clear();
        }
      }
    }
    subs.clear();  // close
    ::unlink(path.c_str());
    for (unsigned s = 0; s < 16; ++s) {
      reduce_file(subpaths[s], consumed_bits + 4, memory_bytes, visit);
      ::unlink(subpaths[s].c_str());
    }
    ++processed_;
    return;
  }
  std::vector<KmerRecord> records(n);
  {
    File in = open_file(path, "rb");
    if (std::fread(records.data(), sizeof(KmerRecord), n, in.get()) != n)
      fail_at(path, 0, "cannot read temporary partition file");
  }
  std::sort(records.begin(), records.end(), [](const KmerRecord& a, const KmerRecord& b) {
    return a.kmer != b.kmer ? a.kmer < b.kmer : a.genome < b.genome;
  });
  std::vector<uint32_t> genomes;
  for (size_t i = 0; i < n;) {
    const uint64_t kmer = records[i].kmer;
    genomes.clear();
    for (; i < n && records[i].kmer == kmer; ++i)
      if (genomes.empty() || genomes.back() != records[i].genome) genomes.push_back(records[i].genome);
    visit(kmer, genomes.data(), genomes.size());
  }
  ++processed_;
}

}  // namespace kmer
