// db_fixture.hpp - a small synthetic reference on real disk: related strains, a species-level
// genome, two genomes of one taxon, an unrelated genus, a virus with N runs and lowercase.
#pragma once

#include <kmer/db_builder.hpp>
#include <kmer/genome_list.hpp>
#include <kmer/taxonomy.hpp>

#include "test_util.hpp"

namespace kmer_test {

struct SmallReference {
  TempDir dir;
  std::vector<std::pair<std::string, uint32_t>> genomes;  // sequence, taxid
  std::string list;

  SmallReference() {
    write_taxonomy(dir, small_tree());
    std::mt19937_64 rng(42);
    const std::string base = random_dna(rng, 6000);
    const std::string other = random_dna(rng, 5000);
    std::string virus = random_dna(rng, 3000);
    for (size_t i = 1000; i < 1010; ++i) virus[i] = 'N';
    for (size_t i = 2000; i < 2100; ++i) virus[i] = static_cast<char>(std::tolower(virus[i]));
    genomes = {{base, 1001},
               {mutate(rng, base, 0.02), 1002},
               {mutate(rng, base, 0.02), 100},
               {mutate(rng, base, 0.10), 101},
               {other, 200},
               {mutate(rng, other, 0.01), 200},
               {virus, 300}};
    std::string text;
    for (size_t i = 0; i < genomes.size(); ++i) {
      const std::string name = "g" + std::to_string(i) + ".fa";
      // Genome 0 in two records, to check records of one genome count once.
      if (i == 0)
        dir.write(name, fasta("g0a", genomes[i].first.substr(0, 3000)) + fasta("g0b", genomes[i].first.substr(2983)));
      else
        dir.write(name, fasta("g" + std::to_string(i), genomes[i].first));
      text += name + "\t" + std::to_string(genomes[i].second) + "\n";
    }
    list = dir.write("genomes.tsv", "# test genomes\n" + text);
  }

  kmer::BuildOptions options(unsigned k, kmer::IndexKind kind, const std::string& out) const {
    kmer::BuildOptions o;
    o.k = k;
    o.index = kind;
    o.taxonomy_dir = dir.file("tax");
    o.genome_list = list;
    o.out = dir.file(out);
    o.progress = false;
    o.threads = 2;
    return o;
  }
};

}  // namespace kmer_test
