// rmat.cpp - the R-MAT recursion, keyed bijections and parallel slice generation.
#include <graph/rmat.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace graph {
namespace {

// A uniform double in [0, 1) from the top 53 bits of a hash.
double unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Draw number `draw` of edge `index`: independent streams per (seed, index, draw).
uint64_t draw_bits(uint64_t seed, uint64_t index, uint64_t draw) {
  return mix64(mix64(seed ^ mix64(index)) + draw * 0xd1b54a32d192ed03ULL);
}

}  // namespace

RmatVariant parse_rmat_variant(const std::string& text) {
  if (text == "graph500" || text == "kronecker") return RmatVariant::graph500;
  if (text == "ssca" || text == "ssca2" || text == "havoqgt") return RmatVariant::ssca;
  throw GraphError("unknown R-MAT variant '" + text + "' (expected graph500 or ssca)");
}

const char* to_string(RmatVariant variant) {
  return variant == RmatVariant::graph500 ? "graph500" : "ssca";
}

Bijection::Bijection(uint64_t n, uint64_t key) : n_(n) {
  int bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int r = 0; r < 4; ++r) keys_[r] = mix64(key * 4 + static_cast<uint64_t>(r) + 0x5851f42d4c957f2dULL);
}

uint64_t Bijection::encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (uint64_t k : keys_) {
    const uint64_t next = left ^ (mix64(right ^ k) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t Bijection::operator()(uint64_t x) const {
  // Cycle walking: the network permutes [0, 2^bits); repeat until the value lands in [0, n).
  do x = encrypt(x);
  while (x >= n_);
  return x;
}

RmatGenerator::RmatGenerator(const RmatParams& p)
    : params_(p),
      edges_(0),
      vertex_perm_(uint64_t{1} << std::clamp(p.scale, 1, 40), p.seed ^ 0x76657274ULL),
      edge_perm_(1, 0) {
  if (p.scale < 1 || p.scale > 32)
    throw GraphError("--scale must be between 1 and 32 (got " + std::to_string(p.scale) + ")");
  if (p.edge_factor < 1 || p.edge_factor > 1024)
    throw GraphError("--edge-factor must be between 1 and 1024 (got " + std::to_string(p.edge_factor) + ")");
  const double d = 1.0 - p.a - p.b - p.c;
  if (p.a <= 0 || p.b < 0 || p.c < 0 || d < 0)
    throw GraphError("R-MAT probabilities must be positive and sum to at most 1");
  if (p.noise < 0 || p.noise >= 1) throw GraphError("--noise must be in [0, 1)");
  edges_ = p.edge_factor << p.scale;
  edge_perm_ = Bijection(edges_, p.seed ^ 0x65646765ULL);
}

Edge RmatGenerator::kronecker_edge(uint64_t index) const {
  const RmatParams& p = params_;
  uint64_t u = 0, v = 0;
  for (int level = 0; level < p.scale; ++level) {
    double a = p.a, b = p.b, c = p.c, d = 1.0 - p.a - p.b - p.c;
    if (p.variant == RmatVariant::ssca) {
      // SSCA#2: perturb the initiator at every level, then renormalise.
      const uint64_t h = draw_bits(p.seed, index, 2 * static_cast<uint64_t>(level) + 1);
      auto factor = [&](int k) { return 1.0 - p.noise + 2.0 * p.noise * unit(mix64(h + static_cast<uint64_t>(k))); };
      a *= factor(0), b *= factor(1), c *= factor(2), d *= factor(3);
      const double sum = a + b + c + d;
      a /= sum, b /= sum, c /= sum;
    }
    const double r = unit(draw_bits(p.seed, index, 2 * static_cast<uint64_t>(level)));
    const uint64_t bit = uint64_t{1} << level;
    if (r < a) {
    } else if (r < a + b) {
      v |= bit;
    } else if (r < a + b + c) {
      u |= bit;
    } else {
      u |= bit;
      v |= bit;
    }
  }
  return {static_cast<int64_t>(u), static_cast<int64_t>(v)};
}

Edge RmatGenerator::edge(uint64_t position) const {
  const uint64_t index = params_.shuffle_edges ? edge_perm_(position) : position;
  Edge e = kronecker_edge(index);
  if (params_.permute_vertices) {
    e.u = static_cast<int64_t>(vertex_perm_(static_cast<uint64_t>(e.u)));
    e.v = static_cast<int64_t>(vertex_perm_(static_cast<uint64_t>(e.v)));
  }
  return e;
}

void RmatGenerator::generate(uint64_t first, uint64_t count, Edge* out, int threads) const {
#pragma omp parallel for schedule(static, 4096) num_threads(std::max(threads, 1))
  for (uint64_t i = 0; i < count; ++i) out[i] = edge(first + i);
}

}  // namespace graph
