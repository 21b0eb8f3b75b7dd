// genome_list.cpp - "path<TAB>taxid" lists, checked before any work starts.
#include <kmer/error.hpp>
#include <kmer/genome_list.hpp>
#include <kmer/taxonomy.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace kmer {

std::vector<GenomeEntry> read_genome_list(const std::string& list_path, const Taxonomy& taxonomy) {
  std::ifstream in(list_path);
  if (!in) fail_at(list_path, 0, std::string("cannot open genome list: ") + std::strerror(errno));
  const size_t slash = list_path.rfind('/');
  const std::string base = slash == std::string::npos ? "" : list_path.substr(0, slash + 1);
  std::vector<GenomeEntry> genomes;
  std::string line;
  uint64_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0)
      fail_at(list_path, no, "expected 'path<TAB>taxid', found '" + line + "'");
    GenomeEntry g;
    g.path = line.substr(0, tab);
    if (g.path[0] != '/') g.path = base + g.path;
    std::string tax = line.substr(tab + 1);
    while (!tax.empty() && (tax.back() == ' ' || tax.back() == '\t')) tax.pop_back();
    const auto [ptr, ec] = std::from_chars(tax.data(), tax.data() + tax.size(), g.taxid);
    if (tax.empty() || ec != std::errc() || ptr != tax.data() + tax.size() || g.taxid == 0)
      fail_at(list_path, no, "taxid '" + tax + "' is not a positive number");
    if (!taxonomy.contains(g.taxid))
      fail_at(list_path, no, "taxid " + std::to_string(g.taxid) + " is not in the taxonomy (nodes.dmp)");
    struct stat st;
    if (::stat(g.path.c_str(), &st) != 0)
      fail_at(list_path, no, "genome file '" + g.path + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode) || ::access(g.path.c_str(), R_OK) != 0)
      fail_at(list_path, no, "genome file '" + g.path + "' is not a readable regular file");
    g.bytes = static_cast<uint64_t>(st.st_size);
    genomes.push_back(std::move(g));
  }
  if (genomes.empty()) fail_at(list_path, 0, "the genome list names no genome");
  return genomes;
}

}  // namespace kmer
