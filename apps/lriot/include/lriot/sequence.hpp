// sequence.hpp - LRIOT's repeatable page sequences.
//
// The sequence of a run is a pure function of (seed, pattern, pages, processes): operation k
// of process p is PageSequence(params, p)(k), so any thread can compute any operation and a run
// can be repeated exactly. As in the papers, sequences are unique per process: uniform runs walk
// one keyed permutation of the file's pages, and process p takes every P-th element of it, so
// no page is fetched twice (by anyone) until a process has gone through its whole share.
// Partitioned runs do the same inside a hot range (the first `partition_space` of the file) and
// a cold range (the rest), choosing the hot range for a `partition_ops` share of operations.
#pragma once

#include <cstdint>

namespace lriot {

enum class Pattern { uniform, partitioned };

// A keyed bijection of [0, n): a balanced Feistel network over the smallest even number of
// bits covering n, with cycle walking (fewer than 4 network passes on average).
class Permutation {
 public:
  Permutation(uint64_t n, uint64_t key);
  uint64_t operator()(uint64_t x) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t feistel(uint64_t x) const;
  uint64_t n_;
  unsigned half_bits_;
  uint64_t half_mask_;
  uint64_t round_keys_[4];
};

struct SequenceParams {
  uint64_t pages = 0;           // pages in the file
  unsigned procs = 1;           // processes sharing the file
  Pattern pattern = Pattern::partitioned;
  double partition_ops = 0.95;  // partitioned: share of operations that go to the hot range
  double partition_space = 0.10;  // partitioned: share of the file that is hot (at its start)
  double write_fraction = 0.0;  // share of operations that are read-modify-writes
  uint64_t seed = 1;
};

struct Op {
  uint64_t page;
  bool write;
};

// Pages in the hot range of a partitioned run (0 for uniform runs).
uint64_t hot_pages(const SequenceParams& params);

// Throws dimmap::Error if the parameters cannot give every process its own pages (e.g. fewer
// pages than processes, or a hot or cold range smaller than the number of processes).
void check_sequence_params(const SequenceParams& params);

class PageSequence {
 public:
  PageSequence(const SequenceParams& params, unsigned proc);
  Op operator()(uint64_t k) const;

 private:
  // The k-th page of this process's share of a range permuted by perm, starting at base.
  uint64_t pick(const Permutation& perm, uint64_t base, uint64_t k) const;
  SequenceParams params_;
  unsigned proc_;
  uint64_t hot_pages_;
  Permutation hot_;   // the hot range (the whole file for uniform runs)
  Permutation cold_;  // partitioned: the rest of the file
  uint64_t hot_threshold_;    // an op is hot if its draw is below this
  uint64_t write_threshold_;  // an op writes if its draw is below this
  bool always_hot_;
  bool always_write_;
  uint64_t proc_key_;  // seeds the per-operation draws of this process
};

// 64-bit mixing of several words (splitmix64 finalizer); the randomness behind sequences.
uint64_t mix64(uint64_t x);

}  // namespace lriot
