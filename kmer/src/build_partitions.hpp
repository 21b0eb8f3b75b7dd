// build_partitions.hpp - passes 1 and 2 of kmer build: scatter (k-mer, genome) records into
// prefix partitions on disk, then visit every distinct k-mer in sorted order with its genomes,
// never holding more than the memory budget of records.
#pragma once

#include <kmer/genome_list.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kmer {

#pragma pack(push, 1)
struct KmerRecord {
  uint64_t kmer;
  uint32_t genome;
};
#pragma pack(pop)
static_assert(sizeof(KmerRecord) == 12);

class PartitionFiles {
 public:
  // 2^bits partition files under dir (removed by the destructor).
  PartitionFiles(std::string dir, unsigned k, unsigned bits);
  ~PartitionFiles();
  PartitionFiles(const PartitionFiles&) = delete;
  PartitionFiles& operator=(const PartitionFiles&) = delete;

  struct ScanStats {
    uint64_t bases = 0, records = 0;
  };
  // Pass 1: every canonical k-mer of every genome (genomes in parallel).
  ScanStats scan(const std::vector<GenomeEntry>& genomes, unsigned threads, bool progress);

  // Pass 2: calls visit(kmer, genomes) for every distinct k-mer in increasing order;
  // genomes is sorted and unique. Partitions bigger than memory_bytes are split further.
  using Visitor = std::function<void(uint64_t kmer, const uint32_t* genomes, size_t n)>;
  void reduce(uint64_t memory_bytes, bool progress, const Visitor& visit);

  unsigned bits() const { return bits_; }
  uint64_t partitions_processed() const { return processed_; }

 private:
  std::string dir_;
  unsigned k_, bits_;
  std::vector<std::string> paths_;
  uint64_t processed_ = 0;

  void reduce_file(const std::string& path, unsigned consumed_bits, uint64_t memory_bytes, const Visitor& visit);
};

}  // namespace kmer
