// lookup_batch_size.hpp - how many k-mers a sorted lookup batch of `kmer classify` holds,
// chosen from the memory the run may use.
//
// Every sorted batch sweeps a two-level DB once, so a DB larger than the memory left for its
// pages is read from storage once per batch: the fewer batches, the fewer reads of the DB. A
// batch costs SortedBatchClassifier::kBytesPerKmer per k-mer plus its waiting reads, so it
// takes what memory the process has left after
//   - the DI-MMAP buffer (dimmap backend), which holds the DB's pages, and
//   - a reserve for the process itself (taxonomy, read blocks, stacks, output buffers) and,
//     on Linux mmap, room in the page cache for the readahead of the sweep.
// A DB that fits in memory beside a default-sized batch is read once whatever the batch,
// so then the batch stays at kDefaultLookupBatch (or less, when even that does not fit).
#pragma once

#include <cstdint>
#include <string>

namespace kmer {

struct LookupBatchChoice {
  uint64_t kmers = 0;
  uint64_t bytes = 0;  // estimated memory of a batch of that many k-mers (keys and waiting reads)
  bool db_fits = false;  // the DB stays cached beside a default batch: one read serves every batch
  std::string why;     // e.g. "the memory limit of 124M (cgroup v1 limit in ...)"
};

struct LookupBatchInputs {
  uint64_t limit_bytes = 0;   // the memory the process may use (dimmap::memory_limit())
  std::string limit_source;   // where that number came from, for the message
  uint64_t buffer_bytes = 0;  // the DI-MMAP buffer caching the DB (0 on Linux mmap / in memory)
  uint64_t db_bytes = 0;      // the DB file
  bool db_in_memory = false;  // --placement=in-memory: the DB is already resident
  unsigned sharers = 1;       // processes sharing the limit (MPI ranks on this node)
  unsigned threads = 1;       // classifying threads of each
};

// Estimated bytes per k-mer of a batch: the sorted keys and results (16), the waiting reads
// (a 100-base read: its sequence, name and record, about 250 bytes for 83 k-mers) and the
// allocator's slack. Measured peaks of 100,000 reads under dimmap (16M buffer, 2 threads),
// reading and classifying in turn: 35M, 49M, 72M, 102M at batches of 256K, 1M, 2M, 4M k-mers:
// 19-23 bytes per k-mer over a base of about 14M (the program, taxonomy, the block of reads
// being parsed and the read file's page cache, which the cgroup charges).
constexpr uint64_t kBatchBytesPerKmer = 24;
// The reads parsed ahead while a batch is classified (BackgroundReads), per k-mer of theirs.
// When the DB stays cached, a whole batch of them, so that the next batch is ready when this
// one ends: the batch then costs kBatchBytesPerKmer + this. When it does not, memory goes to
// the batch instead (each batch is a sweep of the DB from storage): kSweepLookAheadKmers.
constexpr uint64_t kLookAheadBytesPerKmer = 4;
constexpr uint64_t kSweepLookAheadKmers = uint64_t{1} << 18;
// Reserved for the process besides the batch and the DB's pages (the base above), and per
// thread (its sorting scratch, vote arrays, stack and malloc arena). Measured, 80M cgroup,
// 131M DB, 200,000 reads, 16 threads, mmap: a batch of 1M k-mers (1 MiB per thread) was
// OOM-killed, 512K (what 2 MiB per thread leaves) ran.
constexpr uint64_t kProcessReserveBytes = uint64_t{16} << 20;
constexpr uint64_t kThreadReserveBytes = uint64_t{2} << 20;
// On Linux mmap, page cache kept for the sweep's readahead besides the batch: the program's
// text, the read file and the output's dirty pages live in the same page cache, and near the
// limit the kernel evicts them and readahead pages before they are used.
constexpr uint64_t kReadaheadReserveBytes = uint64_t{16} << 20;
// The batch takes only this share of what is left: near the limit, runs stall or are killed
// at batches the estimate says fit. Measured, 64M cgroup, 60M DB, 100,000 reads, 2 threads,
// mmap: batches of 1M k-mers 1.5-2.6 s (3 runs); 1.4M 1.6 s once, then stalled past 30 s
// twice (once OOM-killed after 170 s); 2M 20 s. 122M cgroup, 131M DB, 200,000 reads, 16
// threads, dimmap with a 32M buffer: 2M k-mers ran (peak 96M), 2.5M was OOM-killed (3 of 3).
constexpr double kBatchShare = 0.75;
// The smallest batch chosen from a limit (a smaller limit gets this and may not fit it).
constexpr uint64_t kMinChosenLookupBatch = uint64_t{1} << 18;

LookupBatchChoice choose_lookup_batch(const LookupBatchInputs& in);

}  // namespace kmer
