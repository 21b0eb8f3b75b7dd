// classify_pipeline.hpp - the stages of `kmer classify` that overlap: reading and parsing the
// next reads on a thread of their own while the OpenMP team classifies the current batch
// (BackgroundReads), and how the DB's pages are advised for the sweeps (advise_sweep).
//
// A sorted batch's sweep of the DB waits on storage when the DB is not cached; parsing the
// next block of reads meanwhile keeps a CPU busy that would otherwise wait too. The reads of
// the next batch cost memory beside the current batch's: lookup_batch_size.hpp counts them
// in kBatchBytesPerKmer.
#pragma once

#include <kmer/database.hpp>
#include <kmer/read_pairs.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kmer {

// Reads `source` on a thread of its own, in blocks of `block_reads` reads, in file order,
// keeping at most about `ahead_kmers` k-mers of reads (at least one block) ready for the
// caller. A reader error is rethrown by next_batch after the blocks read before it.
// With `own_thread` false the caller's next_batch reads the block itself: the overlap needs a
// CPU the classifying threads leave free. Measured, 2-core VM, 2 threads, 10^6 reads, 290M
// cgroup: with the reading thread beside them 5.3-6.8 s (mmap) and 7.9-8.5 s (dimmap) against
// 5.9-6.1 s and 7.5-8.2 s reading in turn (3 runs each, interleaved): it only preempts the
// team, whose threads then wait for the one preempted at the next barrier.
class BackgroundReads {
 public:
  BackgroundReads(ReadSource& source, size_t block_reads, uint64_t ahead_kmers, unsigned k, bool own_thread = true);
  ~BackgroundReads();
  BackgroundReads(const BackgroundReads&) = delete;
  BackgroundReads& operator=(const BackgroundReads&) = delete;

  // The next block into `block` (its old records are recycled); returns its size, 0 at the end.
  size_t next_batch(std::vector<SequenceRecord>& block);

 private:
  void run();
  uint64_t kmers_of(const std::vector<SequenceRecord>& block) const;

  ReadSource& source_;
  const size_t block_reads_;
  const uint64_t ahead_kmers_;
  const unsigned k_;
  const bool own_thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::vector<SequenceRecord>> ready_;  // blocks read, oldest first
  std::deque<uint64_t> ready_kmers_;               // the k-mers of each
  uint64_t waiting_kmers_ = 0;                     // their sum
  std::vector<std::vector<SequenceRecord>> spare_; // blocks handed back, for reuse
  bool at_end_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the rest is ready
};

// Advises the kernel how the sorted batches will read a two-level DB on Linux mmap. When the
// DB stays cached beside the batch (`db_fits`), all of it is requested now (MADV_WILLNEED)
// and the mapping keeps the default policy, so its pages age like any used page and one read
// serves every batch; MADV_SEQUENTIAL would let the kernel drop each page once a sweep has
// passed it, and read the DB again for the next batch. A DB that does not fit is swept from
// storage once per batch: MADV_SEQUENTIAL, for the bigger readahead and so that the pages
// passed go first. Nothing for other backends or kinds, or with `advise_random` (then the
// classifier hints its pages itself).
void advise_sweep(const Database& db, bool db_fits, bool advise_random);

}  // namespace kmer
