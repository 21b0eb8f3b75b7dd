// test_util.hpp - fixtures for the kmer tests: a scratch directory on real disk, small
// NCBI-format taxonomies, random genomes.
#pragma once

#include <dimmap/testing/temp_dir.hpp>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace kmer_test {

// A directory on real disk (not tmpfs), removed with its files.
using TempDir = dimmap::testing::TempDir;

// nodes.dmp/names.dmp lines for (taxid, parent, rank, name) rows.
struct Node {
  uint32_t taxid, parent;
  std::string rank, name;
};
inline void write_taxonomy(const TempDir& dir, const std::vector<Node>& nodes, const std::string& sub = "tax") {
  ::mkdir(dir.file(sub).c_str(), 0755);
  std::ofstream n(dir.file(sub + "/nodes.dmp")), m(dir.file(sub + "/names.dmp"));
  for (const auto& x : nodes) {
    n << x.taxid << "\t|\t" << x.parent << "\t|\t" << x.rank << "\t|\t\t|\t0\t|\t0\t|\t11\t|\t0\t|\t0\t|\t0\t|\t0\t|\t0\t|\t\t|\n";
    m << x.taxid << "\t|\t" << x.name << "\t|\t\t|\tscientific name\t|\n";
    m << x.taxid << "\t|\tsynonym of " << x.name << "\t|\t\t|\tsynonym\t|\n";
  }
}

// root(1) - Bacteria(2) - {genus 10: species 100 {strains 1001, 1002}, species 101};
//                         genus 20: species 200; and Viruses(3) - species 300.
inline std::vector<Node> small_tree() {
  return {{1, 1, "no rank", "root"},          {2, 1, "superkingdom", "Bacteria"},
          {3, 1, "superkingdom", "Viruses"},  {10, 2, "genus", "Alpha"},
          {20, 2, "genus", "Beta"},           {100, 10, "species", "Alpha one"},
          {101, 10, "species", "Alpha two"},  {1001, 100, "no rank", "Alpha one A"},
          {1002, 100, "no rank", "Alpha one B"}, {200, 20, "species", "Beta one"},
          {300, 3, "species", "Gamma virus"}};
}

inline std::string random_dna(std::mt19937_64& rng, size_t n) {
  static const char kBases[] = "ACGT";
  std::string s(n, 'A');
  for (auto& c : s) c = kBases[rng() & 3];
  return s;
}

// A copy of seq with a share of substitutions.
inline std::string mutate(std::mt19937_64& rng, std::string seq, double rate) {
  static const char kBases[] = "ACGT";
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& c : seq)
    if (u(rng) < rate) c = kBases[rng() & 3];
  return seq;
}

inline std::string fasta(const std::string& id, const std::string& seq) {
  std::string out = ">" + id + " test sequence\n";
  for (size_t i = 0; i < seq.size(); i += 60) out += seq.substr(i, 60) + "\n";
  return out;
}

}  // namespace kmer_test
