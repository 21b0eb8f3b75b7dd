// index_build.cpp - the index kernel: libbwa's bwa_idx_build() on a placed heap.
//
// bwa_idx_build() is exactly what `bwa index` runs (pack the FASTA, build the BWT with the
// chosen algorithm, add Occ counts, sample the suffix array), so the files come out
// byte-identical. What changes is where its big buffers live: while the PlacedHeap is armed,
// every allocation of at least --min-alloc is a scratch Region on the placement (see
// placed_alloc.hpp). Its file I/O (fread of .pac and .bwt, fwrite of all outputs) is unchanged.
#include <bwammap/index_build.hpp>
#include <bwammap/index_progress.hpp>
#include <bwammap/input_check.hpp>
#include <bwammap/output_file.hpp>
#include <bwammap/run_stats.hpp>
#include <unistd.h>

#include <bwa/bwa.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bwammap {
namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

int algorithm_code(const std::string& name) {
  if (name == "auto" || name.empty()) return BWTALGO_AUTO;
  if (name == "bwtsw") return BWTALGO_BWTSW;
  if (name == "is") return BWTALGO_IS;
  if (name == "rb2") return BWTALGO_RB2;
  throw dimmap::Error("unknown BWT construction algorithm '" + name + "' (expected bwtsw, is or rb2)");
}

int choose_algorithm(const IndexOptions& options, std::string* why) {
  const int code = algorithm_code(options.algorithm);
  if (code != BWTALGO_AUTO || options.memory_limit == 0) return code;
  // bwa picks bwtsw above 50M bases itself; below, IS holds both strands' text (2 bytes per
  // base) and a 4-byte suffix array over it (8).
  constexpr uint64_t kIsLimitBases = 50000000, kIsBytesPerBase = 10;
  if (options.memory_limit >= kIsLimitBases * kIsBytesPerBase) return code;
  const uint64_t bases = reference_text_bytes(options.fasta);
  if (bases > kIsLimitBases || bases * kIsBytesPerBase <= options.memory_limit) return code;
  *why = "-a bwtsw: the IS algorithm would keep about " + dimmap::format_size(bases * kIsBytesPerBase) +
         " (10 bytes per base) of arrays it accesses at random, more than the memory limit of " +
         dimmap::format_size(options.memory_limit) + "; the index files are the same";
  return BWTALGO_BWTSW;
}

IndexReport build_index(const IndexOptions& options, IndexPlacement& plan) {
  RunClock clock;
  algorithm_code(options.algorithm);  // a bad name fails before the FASTA is looked at
  if (options.block_size <= 0) throw dimmap::Error("-b: the block size must be positive");
  const double progress_interval = progress_interval_from_env();
  check_reference_fasta(options.fasta);
  std::string algorithm_why;
  const int algo = choose_algorithm(options, &algorithm_why);
  if (!algorithm_why.empty()) std::fprintf(stderr, "[bwa-mmap index] %s\n", algorithm_why.c_str());

  IndexReport report;
  report.prefix = options.prefix.empty() ? options.fasta : options.prefix;
  if (options.is_64) report.prefix += ".64";
  const std::string dir = directory_of(report.prefix);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw dimmap::Error("cannot write the index into '" + dir + "': " + std::strerror(errno));

  const dimmap::Placement placement = plan.for_index(dir);
  report.placement = placement.describe();
  std::fprintf(stderr, "[bwa-mmap index] %s -> %s.*; arrays of %s or more on %s\n", options.fasta.c_str(),
               report.prefix.c_str(), dimmap::format_size(options.min_alloc).c_str(), report.placement.c_str());

  // libbwa writes <tmp>.amb .ann .bwt .pac .sa; each is renamed to <prefix>.* at the end.
  const std::string tmp_prefix = temporary_name(report.prefix);
  PendingFiles outputs;
  for (const char* suffix : kIndexSuffixes) outputs.add(report.prefix + suffix, tmp_prefix + suffix);

  {
    PlacedHeap heap(placement, options.min_alloc);
    IndexProgress progress(progress_interval);
    bwa_idx_build(options.fasta.c_str(), tmp_prefix.c_str(), algo, options.block_size);
    report.heap = heap.stats();
  }
  report.layout = check_index(tmp_prefix);
  report.layout.prefix = report.prefix;
  outputs.commit();  // kIndexSuffixes ends with .sa: the file that completes an index
  report.wall_seconds = clock.wall_seconds();
  report.cpu_seconds = clock.cpu_seconds();
  report.peak_rss = peak_rss_bytes();
  return report;
}

}  // namespace bwammap
