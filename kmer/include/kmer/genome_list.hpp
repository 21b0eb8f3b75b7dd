// genome_list.hpp - the reference genomes of a DB: one "path<TAB>taxid" per line.
//
// Blank lines and lines starting with '#' are skipped; a relative path is relative to the
// list's directory. Errors name the list file and line: a malformed line, a taxid that is not
// a number or not in the taxonomy, a genome file that is missing or unreadable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kmer {

class Taxonomy;

struct GenomeEntry {
  std::string path;
  uint32_t taxid = 0;
  uint64_t bytes = 0;  // file size, for progress
};

std::vector<GenomeEntry> read_genome_list(const std::string& list_path, const Taxonomy& taxonomy);

}  // namespace kmer
