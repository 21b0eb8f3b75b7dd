// rmat.hpp - Graph500 Kronecker / R-MAT edge generator with counter-based randomness.
//
// Every random number is a hash of (seed, edge index, draw number), so the edge at output
// position i is a pure function of the parameters and i: any thread or rank can produce any
// slice, and the file does not depend on how many did the work. The Graph500 vertex
// permutation and edge shuffle are keyed bijections, so they need no memory either.
#pragma once

#include <graph/types.hpp>

#include <cstdint>
#include <string>

namespace graph {

enum class RmatVariant {
  graph500,  // Graph500 Kronecker: A=.57 B=C=.19 D=.05 at every level
  ssca,      // SSCA#2 / HavoqGT style: the same initiator perturbed by noise at every level
};

RmatVariant parse_rmat_variant(const std::string& text);
const char* to_string(RmatVariant variant);

struct RmatParams {
  int scale = 16;              // 2^scale vertices
  uint64_t edge_factor = 16;   // edges = edge_factor * 2^scale
  RmatVariant variant = RmatVariant::graph500;
  uint64_t seed = 1;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c
  double noise = 0.1;          // ssca: each probability scaled by a factor in [1-noise, 1+noise]
  bool permute_vertices = true;
  bool shuffle_edges = true;
};

// A keyed bijection of [0, n): a 4-round Feistel network over the smallest even number of
// bits that covers n, with cycle walking (at most ~4 rounds of the network on average).
class Bijection {
 public:
  Bijection(uint64_t n, uint64_t key);
  uint64_t operator()(uint64_t x) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t n_;
  int half_bits_;
  uint64_t half_mask_;
  uint64_t keys_[4];
  uint64_t encrypt(uint64_t x) const;
};

class RmatGenerator {
 public:
  explicit RmatGenerator(const RmatParams& params);  // throws GraphError on bad parameters

  uint64_t vertices() const { return uint64_t{1} << params_.scale; }
  uint64_t edges() const { return edges_; }
  const RmatParams& params() const { return params_; }

  // The edge written at output position `position` (0 <= position < edges()).
  Edge edge(uint64_t position) const;
  // edges [first, first + count) into out, using up to `threads` OpenMP threads.
  void generate(uint64_t first, uint64_t count, Edge* out, int threads) const;

 private:
  RmatParams params_;
  uint64_t edges_;
  Bijection vertex_perm_;
  Bijection edge_perm_;
  Edge kronecker_edge(uint64_t index) const;  // the index-th edge before shuffle/permutation
};

// 64-bit mixing function (splitmix64 finalizer): the counter-based generator's core.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace graph

#include <graph/edge_io.hpp>

namespace graph {

// Generates the whole edge list into `path` in slices of `slice_edges` (bounded memory:
// two slices), committing the file only when complete.
void write_rmat(const RmatGenerator& gen, const std::string& path, EdgeFormat format, int threads,
                bool progress, uint64_t slice_edges = 1 << 20);

}  // namespace graph
