// test_util.hpp - temporary directories, small files and placements for bwa-mmap's unit tests.
#pragma once

#include <dimmap/placement.hpp>
#include <dimmap/testing/temp_dir.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bwammap::testing {

// A fresh directory on real disk, removed with its contents.
using TempDir = dimmap::testing::TempDir;

void write_file(const std::string& path, const std::string& content);
std::string read_file(const std::string& path);

// Random bases (seeded), as one FASTA record per contig length, 60 bases a line.
std::string random_fasta(const std::vector<size_t>& contig_lengths, uint32_t seed);

// Runs a shell command; returns its exit status (-1 if it could not run).
int run(const std::string& command);

// The placements the tests cover, by name: "memory" (anonymous), "tmpfs" (under /dev/shm),
// "mmap" and "dimmap" (files in `storage_dir`; dimmap with a 1 MiB buffer, so that
// anything bigger is evicted and read back).
dimmap::Placement test_placement(const std::string& name, const std::string& storage_dir,
                                 const std::string& tmpfs_dir);
extern const std::vector<std::string> kPlacementNames;

}  // namespace bwammap::testing
