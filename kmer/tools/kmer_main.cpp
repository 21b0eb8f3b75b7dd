// kmer - LMAT-style k-mer classifier on memory-mapped databases.
//   kmer build     reference genomes + NCBI taxonomy -> DB (two-level or gnu-hash index)
//   kmer classify  reads -> PREFIX.tsv + PREFIX.kreport (OpenMP; mpirun splits reads)
//   kmer lookup    raw k-mer lookup benchmark over a thread sweep
//   kmer info      DB header (and --verify: every section CRC)
// This file only parses arguments; the work is in libkmer.
#include <kmer/commands.hpp>
#include <kmer/db_builder.hpp>
#include <kmer/error.hpp>
#include <kmer/lookup_batch_size.hpp>

#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/dimmap.h>

#include <cstdio>

namespace {

void add_placement(CLI::App* app, kmer::DbPlacementOptions& p) {
  using namespace dimmap::cli;
  add_placement_options(*app, *p.plan, kAllPlacementOptions & ~kPlaceEach);
  app->add_flag("--advise-random", p.advise_random, "mmap backend: MADV_RANDOM on the DB (no readahead)");
}

// --lookup-batch: a count with an optional binary suffix (K, M, G as in sizes), 1..2^31;
// rewrites the text to the plain number. Returns "" or the error.
std::string parse_lookup_batch(std::string& text) {
  uint64_t value = 0;
  if (dimmap_parse_size(text.c_str(), &value) != 0 || value == 0 ||
      value > kmer::SortedBatchClassifier::kMaxLookupBatch)
    return "'" + text + "' is not a number of k-mers from 1 to " +
           std::to_string(kmer::SortedBatchClassifier::kMaxLookupBatch) +
           " (a whole number, optionally with K, M or G = 2^10, 2^20, 2^30)";
  text = std::to_string(value);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kmer: LMAT-style metagenomic classifier on a memory-mapped k-mer database"};
  app.require_subcommand(1);

  kmer::BuildOptions build;
  std::string index = "two-level", memory = "1G", compact = "auto";
  bool quiet = false;
  auto* b = app.add_subcommand("build", "Build a k-mer DB from genomes (path<TAB>taxid) and an NCBI taxonomy");
  b->add_option("--k", build.k, "k-mer length (1..32)")->check(CLI::Range(1, 32))->capture_default_str();
  b->add_option("--taxonomy", build.taxonomy_dir, "Directory with nodes.dmp and names.dmp")->required();
  b->add_option("--genomes", build.genome_list, "Genome list: path<TAB>taxid per line")->required();
  b->add_option("--index", index, "Index: two-level or gnu-hash")
      ->check(CLI::IsMember({"two-level", "gnu-hash"}))
      ->capture_default_str();
  b->add_option("--compact", compact,
                "Two-level entries of 4 bytes (16-bit suffix, 16-bit value code) instead of 8: auto (when the "
                "first level stays <= 4x its usual size and <= 65536 distinct values), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  b->add_option("--out", build.out, "Output DB file (written under a temporary name, renamed at the end)")->required();
  b->add_option("--memory", memory, "Memory budget for sorting partitions (e.g. 512M, 4G)")
      ->check(dimmap::cli::size_check())
      ->capture_default_str();
  b->add_option("--max-taxa", build.max_taxa, "Longer taxa lists are reduced toward their LCA (0 = no limit)")
      ->capture_default_str();
  b->add_option("--temp-dir", build.temp_dir, "Scratch directory (default: the output's directory)");
  b->add_option("--threads", build.threads, "Threads for scanning genomes [one per core]")
      ->check(dimmap::cli::thread_count());
  b->add_flag("--quiet", quiet, "No progress bar");

  kmer::ClassifyCommand cls;
  auto* c = app.add_subcommand("classify", "Classify reads (FASTA/FASTQ, SAM/BAM/CRAM) -> PREFIX.tsv, PREFIX.kreport");
  c->add_option("--db", cls.db, "k-mer DB (kmer build)")->required();
  c->add_option("--reads", cls.reads,
                "Reads (mates 1 of pairs): FASTA or FASTQ (plain, gzip, bgzip), SAM, BAM or CRAM "
                "(unaligned or aligned: primary records), told apart by their bytes")
      ->required();
  auto* mates_opt = c->add_option("--mates", cls.mates,
                                  "Mates 2 of the pairs in --reads, in the same order: each pair is "
                                  "classified as one read, named after mate 1");
  c->add_flag("--interleaved", cls.interleaved,
              "--reads holds pairs, mate 2 right after mate 1 (interleaved FASTQ, samtools import -1 -2)")
      ->excludes(mates_opt);
  c->add_option("--reference", cls.reference, "FASTA to decode an aligned CRAM (default: htslib's search, REF_PATH)");
  c->add_option("--out", cls.out, "Output prefix")->required();
  c->add_option("--json", cls.json, "Also write the run's numbers as one JSON object to this file");
  c->add_option("--threads", cls.threads, "OpenMP threads [one per core]")->check(dimmap::cli::thread_count());
  c->add_option("--k", cls.expected_k, "Fail unless the DB was built with this k (0 = any)");
  c->add_option("--min-support", cls.params.min_support, "Share of a read's k-mers the chosen taxon needs")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  c->add_option("--min-hits", cls.params.min_hits, "k-mers the chosen taxon needs at least")->capture_default_str();
  c->add_option("--margin", cls.params.margin, "Best child must beat the runner-up by this share")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  c->add_option("--batch", cls.batch_reads, "Reads read at a time (and per MPI block); see --lookup-batch")
      ->check(CLI::PositiveNumber);
  c->add_option("--lookup-batch", cls.lookup_batch,
                 "k-mers per sorted lookup batch (K, M, G = 2^10, 2^20, 2^30): reads are gathered until "
                 "their k-mers fill a batch, whose k-mers are then looked up in ascending order (one sweep "
                 "over the DB per batch). Memory: about " +
                     std::to_string(kmer::kBatchBytesPerKmer) +
                     " bytes per k-mer with the waiting reads [from the memory limit: what the DI-MMAP buffer "
                     "and the process leave, or " +
                     std::to_string(kmer::kDefaultLookupBatch >> 20) + "M when the DB fits in memory]")
      ->transform(CLI::Validator(parse_lookup_batch, "1..2G"));
  bool cls_quiet = false;
  c->add_flag("--quiet", cls_quiet, "No progress lines");
  add_placement(c, cls.placement);

  kmer::LookupCommand look;
  std::string threads_list = "1";
  bool warm = false;
  auto* l = app.add_subcommand("lookup", "Raw k-mer lookup benchmark (lookups/s and hit rate over a thread sweep)");
  l->add_option("--db", look.db, "k-mer DB")->required();
  auto* reads_opt = l->add_option("--reads", look.reads, "Take every k-mer of these reads (FASTA/FASTQ, SAM/BAM/CRAM)");
  auto* kmers_opt = l->add_option("--kmers", look.kmers_file, "Text file, one k-mer per line");
  reads_opt->excludes(kmers_opt);
  l->add_option("--threads", threads_list, "Thread counts to sweep, e.g. 1,2,4")
      ->check(dimmap::cli::thread_list())
      ->capture_default_str();
  l->add_option("--max-kmers", look.max_kmers, "Use at most this many k-mers (0 = all)");
  l->add_option("--k", look.expected_k, "Fail unless the DB was built with this k (0 = any)");
  l->add_option("--repeat", look.repeat, "Runs per thread count")->check(CLI::PositiveNumber);
  l->add_flag("--warm", warm, "Do not drop the DB from the cache before each run");
  l->add_option("--csv", look.csv, "Append results to this CSV file");
  l->add_option("--json", look.json, "Also write every run's numbers as one JSON object to this file");
  add_placement(l, look.placement);

  std::string info_db;
  bool verify = false;
  auto* i = app.add_subcommand("info", "Print a DB's header; --verify checks every section's CRC");
  i->add_option("--db", info_db, "k-mer DB")->required();
  i->add_flag("--verify", verify, "Read the whole DB and check its CRCs");

  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;
  try {
    if (*b) {
      build.index = kmer::parse_index_kind(index.c_str());
      build.memory_bytes = dimmap::parse_size(memory, "--memory");
      build.compact = kmer::parse_compact_entries(compact.c_str());
      build.progress = !quiet;
      const kmer::BuildStats s = kmer::build_database(build);
      std::fprintf(stderr,
                   "kmer build: %llu genomes, %llu bases, %llu distinct %u-mers, %llu taxa lists (%llu reduced), "
                   "%llu inline, %.1f MiB, %.1f s -> %s\n",
                   (unsigned long long)s.genomes, (unsigned long long)s.bases, (unsigned long long)s.kmers, build.k,
                   (unsigned long long)s.lists, (unsigned long long)s.reduced_lists,
                   (unsigned long long)s.inline_kmers, s.file_bytes / 1048576.0, s.seconds, build.out.c_str());
      return 0;
    }
    if (*c) {
      cls.progress = !cls_quiet;
      return kmer::run_classify(cls);
    }
    if (*l) {
      if (look.reads.empty() && look.kmers_file.empty())
        throw dimmap::cli::UsageError("kmer lookup needs --reads or --kmers");
      dimmap::cli::read_thread_list(threads_list, look.threads);  // checked while parsing
      look.cold = !warm;
      return kmer::run_lookup(look);
    }
    if (*i) return kmer::run_info(info_db, verify);
  } catch (const dimmap::cli::UsageError& e) {
    return dimmap::cli::report_usage_error(app, e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kmer %s: %s\n", app.get_subcommands().front()->get_name().c_str(), e.what());
    return 1;
  }
  return 0;
}
