// test_util.cpp - helpers for bwa-mmap's unit tests.
#include "test_util.hpp"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace bwammap::testing {

const std::vector<std::string> kPlacementNames = {"memory", "tmpfs", "mmap", "dimmap"};

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string random_fasta(const std::vector<size_t>& contig_lengths, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  for (size_t c = 0; c < contig_lengths.size(); ++c) {
    out += ">contig" + std::to_string(c + 1) + " test sequence\n";
    for (size_t i = 0; i < contig_lengths[c]; ++i) {
      out += "ACGT"[rng() & 3];
      if (i % 60 == 59 || i + 1 == contig_lengths[c]) out += '\n';
    }
  }
  return out;
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

dimmap::Placement test_placement(const std::string& name, const std::string& storage_dir,
                                 const std::string& tmpfs_dir) {
  if (name == "memory") return dimmap::Placement::anonymous();
  if (name == "tmpfs") return dimmap::Placement::memory(tmpfs_dir);
  if (name == "mmap") return dimmap::Placement::mmap(storage_dir);
  if (name == "dimmap") return dimmap::Placement::dimmap(storage_dir, dimmap::Buffer::create(1 << 20));
  throw std::runtime_error("unknown test placement " + name);
}

}  // namespace bwammap::testing
