// commands.hpp - what the kmer subcommands do, behind the argument parsing in tools/.
#pragma once

#include <kmer/classify.hpp>
#include <kmer/database.hpp>
#include <kmer/read_pairs.hpp>

#include <dimmap/placement_plan.hpp>

#include <memory>

#include <cstdint>
#include <string>
#include <vector>

namespace kmer {

// Where the DB lives: the runtime's placement plan with one structure, "db" (default
// full-external). in-memory copies the DB into tmpfs (--memory-dir); semi- and full-external
// keep it on storage behind --backend=mmap|dimmap (the DB is the only big structure).
struct DbPlacementOptions {
  std::shared_ptr<dimmap::PlacementPlan> plan = std::make_shared<dimmap::PlacementPlan>(
      std::vector<dimmap::Structure>{{"db"}}, dimmap::Preset::full_external);
  bool advise_random = false;  // mmap: MADV_RANDOM (no readahead)
  // The DB's placement, with a buffer of its own on dimmap so every run starts cold.
  dimmap::Placement resolve();
  std::string describe();  // "in-memory(/dev/shm)", "mmap", "dimmap(buffer 256M)"
};

// Throws kmer::Error if expected_k is set and the DB was built with another k.
void check_db_k(const Database& db, unsigned expected_k);

// The k-mers per sorted lookup batch of kmer classify (SortedBatchClassifier) when the DB fits
// in memory (choose_lookup_batch):
// 32 MiB of keys and results at SortedBatchClassifier::kBytesPerKmer.
constexpr uint64_t kDefaultLookupBatch = uint64_t{2} << 20;

struct ClassifyCommand {
  std::string db, reads, out;
  std::string mates;         // mates 2 of the pairs whose mates 1 are in reads ("" = none)
  bool interleaved = false;  // reads holds pairs, mate 2 right after mate 1
  std::string reference;     // FASTA to decode an aligned CRAM
  unsigned expected_k = 0;  // 0 = the DB's k
  unsigned threads = 0;  // 0 = OpenMP default
  size_t batch_reads = 1 << 14;
  uint64_t lookup_batch = 0;  // k-mers per sorted lookup batch (0 = from the memory limit)
  ClassifyParams params;
  DbPlacementOptions placement;
  bool progress = true;
  std::string json;  // write the run's numbers here as one JSON object ("" = no)
};
// Writes PREFIX.tsv and PREFIX.kreport (temporary names renamed at the end). Under mpirun the
// reads are split across ranks (blocks of batch_reads, round robin) and rank 0 writes both
// files in input order. Each rank's reads are classified in sorted batches of about
// lookup_batch k-mers (SortedBatchClassifier; 0 = choose_lookup_batch from the memory limit,
// printed on stderr). Returns the exit code.
int run_classify(ClassifyCommand& cmd);

struct LookupCommand {
  std::string db, reads, kmers_file;
  unsigned expected_k = 0;  // 0 = the DB's k
  std::vector<unsigned> threads{1};
  uint64_t max_kmers = 0;
  unsigned repeat = 1;
  bool cold = true;  // each run starts with the DB out of the cache
  std::string csv;   // append rows here too ("" = no)
  DbPlacementOptions placement;
  std::string json;  // write every run's numbers here as one JSON object ("" = no)
};
int run_lookup(LookupCommand& cmd);

int run_info(const std::string& db, bool verify);

}  // namespace kmer
