// sequence.cpp - keyed permutations and the per-process page sequences of LRIOT.
#include <dimmap/placement.hpp>
#include <lriot/sequence.hpp>

#include <cmath>
#include <string>

namespace lriot {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// A draw below the threshold happens with probability p. p >= 1 is handled by the callers'
// always_* flags; clamp here so 2^64 never reaches the cast (undefined behaviour).
uint64_t threshold_for(double p) {
  if (p <= 0.0) return 0;
  if (p >= 1.0) return UINT64_MAX;
  return static_cast<uint64_t>(std::ldexp(p, 64));
}

// Checks before any member is built from the parameters.
const SequenceParams& checked(const SequenceParams& p, unsigned proc) {
  check_sequence_params(p);
  if (proc >= p.procs) throw dimmap::Error("process index out of range");
  return p;
}

}  // namespace

uint64_t mix64(uint64_t x) {
  x += kGolden;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Permutation::Permutation(uint64_t n, uint64_t key) : n_(n) {
  if (n == 0) throw dimmap::Error("a permutation needs at least one element");
  unsigned bits = 0;
  while (bits < 64 && (n - 1) >> bits) ++bits;
  half_bits_ = bits < 2 ? 1 : (bits + 1) / 2;
  half_mask_ = (1ull << half_bits_) - 1;
  for (unsigned i = 0; i < 4; ++i) round_keys_[i] = mix64(key ^ (kGolden * (i + 1)));
}

uint64_t Permutation::feistel(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (uint64_t k : round_keys_) {
    const uint64_t next = left ^ (mix64(right ^ k) & half_mask_);
    left = right;
    right = next;
  }
  return left << half_bits_ | right;
}

uint64_t Permutation::operator()(uint64_t x) const {
  // Cycle walking: the network permutes [0, 4^half_bits); follow x's cycle back into [0, n).
  uint64_t y = feistel(x);
  while (y >= n_) y = feistel(y);
  return y;
}

uint64_t hot_pages(const SequenceParams& p) {
  if (p.pattern == Pattern::uniform || p.pages < 2) return 0;
  double h = std::round(static_cast<double>(p.pages) * p.partition_space);
  if (h < 1) h = 1;
  if (h > static_cast<double>(p.pages - 1)) h = static_cast<double>(p.pages - 1);
  return static_cast<uint64_t>(h);
}

void check_sequence_params(const SequenceParams& p) {
  if (p.procs == 0) throw dimmap::Error("at least one process is needed");
  if (!(p.write_fraction >= 0.0 && p.write_fraction <= 1.0))
    throw dimmap::Error("--write-fraction must be between 0 and 1");
  if (p.pages < p.procs)
    throw dimmap::Error("the file has " + std::to_string(p.pages) + " pages, fewer than the " +
                        std::to_string(p.procs) + " processes that each need their own");
  if (p.pattern == Pattern::uniform) return;
  if (!(p.partition_ops >= 0.0 && p.partition_ops <= 1.0))
    throw dimmap::Error("--partition-ops must be between 0 and 1");
  if (!(p.partition_space > 0.0 && p.partition_space < 1.0))
    throw dimmap::Error("--partition-space must be strictly between 0 and 1");
  const uint64_t hot = hot_pages(p);
  if (p.pages < 2 || hot < p.procs || p.pages - hot < p.procs)
    throw dimmap::Error("the file's " + std::to_string(p.pages) + " pages cannot be split into hot and cold " +
                        "ranges that give each of the " + std::to_string(p.procs) +
                        " processes its own pages: use a bigger file");
}

PageSequence::PageSequence(const SequenceParams& params, unsigned proc)
    : params_(checked(params, proc)),
      proc_(proc),
      hot_pages_(hot_pages(params)),
      hot_(params.pattern == Pattern::uniform ? params.pages : hot_pages_, mix64(params.seed ^ 0x686f74)),
      cold_(params.pattern == Pattern::uniform ? 1 : params.pages - hot_pages_, mix64(params.seed ^ 0x636f6c64)),
      hot_threshold_(threshold_for(params.partition_ops)),
      write_threshold_(threshold_for(params.write_fraction)),
      always_hot_(params.partition_ops >= 1.0),
      always_write_(params.write_fraction >= 1.0),
      proc_key_(mix64(mix64(params.seed) ^ (kGolden * (proc + 1)))) {
}

uint64_t PageSequence::pick(const Permutation& perm, uint64_t base, uint64_t k) const {
  // Process p owns the permutation's elements p, p + P, p + 2P, ...: disjoint from the others.
  const uint64_t share = perm.size() / params_.procs;
  return base + perm((k % share) * params_.procs + proc_);
}

Op PageSequence::operator()(uint64_t k) const {
  const uint64_t draw = mix64(proc_key_ ^ k);
  Op op;
  op.write = always_write_ || mix64(draw ^ 0x7772) < write_threshold_;
  if (params_.pattern == Pattern::uniform) {
    op.page = pick(hot_, 0, k);
  } else if (always_hot_ || mix64(draw ^ 0x686f) < hot_threshold_) {
    op.page = pick(hot_, 0, k);
  } else {
    op.page = pick(cold_, hot_pages_, k);
  }
  return op;
}

}  // namespace lriot
