// keys.hpp - the data sets of the micro-benchmarks: keys, values and query streams.
//
// Key i of a data set is mix64(i ^ seed). mix64 (the splitmix64 finaliser) is a bijection on
// 64-bit words, so keys are distinct, look random (a structure built in key order is laid out
// in random order), and any j >= N gives a key that is certainly absent from a set of N.
// Query q of a run draws j uniformly from [0, 2N) as a function of q alone (counter-based),
// so the answers do not depend on how the queries are split over threads: half the lookups
// hit, half miss, and every answer can be checked without a reference container.
#pragma once

#include <cstdint>

namespace microbench {

inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t key_of(uint64_t i, uint64_t seed) { return mix64(i ^ seed); }
inline uint64_t value_of(uint64_t key) { return mix64(key ^ 0x5851F42D4C957F2Dull); }

// A splitmix64 stream: cheap, and independent streams from different starting points.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    return mix64(state_);
  }
  // Uniform in [0, n) (Lemire's multiply-shift; bias below 2^-32 for the sizes used here).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

 private:
  uint64_t state_;
};

// Index j in [0, 2 * entries) of query q of a run.
inline uint64_t query_index(uint64_t run_seed, uint64_t q, uint64_t entries) {
  const uint64_t x = mix64(q ^ mix64(run_seed));
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * (2 * entries)) >> 64);
}

}  // namespace microbench
