// classify_driver.cpp - the subcommands behind tools/kmer_main.cpp: placement of the DB,
// batching reads through the classification kernel (OpenMP, optionally MPI), output files,
// the lookup benchmark runs and `kmer info`.
#include <dimmap/support/atomic_file.hpp>
#include <dimmap/support/stats_text.hpp>
#include <kmer/classify_pipeline.hpp>
#include <kmer/commands.hpp>
#include <dimmap/memory_limit.hpp>
#include <kmer/database.hpp>
#include <kmer/error.hpp>
#include <kmer/kreport.hpp>
#include <kmer/lookup_batch_size.hpp>
#include <kmer/lookup_bench.hpp>
#include <kmer/read_pairs.hpp>
#include <kmer/run_summary.hpp>
#include <dimmap/support/json_summary.hpp>

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <unordered_map>

#ifdef KMER_HAVE_MPI
#include <mpi.h>
#endif

namespace kmer {

dimmap::Placement DbPlacementOptions::resolve() {
  plan->release_buffer();
  dimmap::Placement p = plan->placement_of("db");
  if (p.backend == dimmap::Backend::mmap) p.advise_random = advise_random;
  return p;
}

std::string DbPlacementOptions::describe() {
  if (plan->preset() == dimmap::Preset::in_memory)
    return "in-memory(" + (plan->memory_dir().empty() ? std::string("anonymous") : plan->memory_dir()) + ")";
  if (plan->backend() == dimmap::Backend::dimmap) return "dimmap(buffer " + dimmap::format_size(plan->buffer_bytes()) + ")";
  return "mmap";
}

namespace {

// Read-ahead hints of the sorted lookups, in bytes of the DB ahead of each thread. On dimmap
// all threads' hints together take up to a quarter of the buffer (what an engine takes per
// call, so that read-ahead does not flush pages in use), 1-4 MiB per thread. Measured, 10^6
// reads, 2 threads, 32M buffer, 290M cgroup, 131 MiB DB (11 sweeps), pagecache engine: 4 MiB
// 5.3/5.7/5.3 s, 1 MiB 6.1/5.5/6.2 s interleaved (userfaultfd engine 6.6-11.7 s either way).
constexpr uint64_t kMinDimmapReadahead = uint64_t{1} << 20;
constexpr uint64_t kMaxDimmapReadahead = uint64_t{4} << 20;
constexpr uint64_t kMmapRandomReadahead = uint64_t{1} << 20;

uint64_t dimmap_readahead(uint64_t buffer_bytes, unsigned threads) {
  return std::clamp<uint64_t>(buffer_bytes / 4 / std::max(1u, threads), kMinDimmapReadahead, kMaxDimmapReadahead);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Drops the file's clean pages from the Linux page cache (no root needed).
void drop_file_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct MpiContext {
  int rank = 0, size = 1;
  bool active = false;
  MpiContext() {
#ifdef KMER_HAVE_MPI
    // Only under a launcher: a plain `kmer classify` must not start an MPI runtime.
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      active = true;
    }
#endif
  }
  ~MpiContext() {
#ifdef KMER_HAVE_MPI
    if (active) MPI_Finalize();
#endif
  }
  // True if any rank failed.
  bool any(bool failed) const {
#ifdef KMER_HAVE_MPI
    if (active) {
      int mine = failed ? 1 : 0, all = 0;
      MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      return all != 0;
    }
#endif
    return failed;
  }
  // Sums the per-taxid counts of all ranks on rank 0.
  void reduce_counts(std::unordered_map<uint32_t, uint64_t>& counts) const {
#ifdef KMER_HAVE_MPI
    if (!active) return;
    std::vector<uint64_t> flat;
    for (const auto& [t, c] : counts) {
      flat.push_back(t);
      flat.push_back(c);
    }
    int n = static_cast<int>(flat.size());
    std::vector<int> sizes(size), displs(size);
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<uint64_t> all;
    if (rank == 0) {
      int total = 0;
      for (int r = 0; r < size; ++r) {
        displs[r] = total;
        total += sizes[r];
      }
      all.resize(total);
    }
    MPI_Gatherv(flat.data(), n, MPI_UINT64_T, all.data(), sizes.data(), displs.data(), MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      counts.clear();
      for (size_t i = 0; i + 1 < all.size(); i += 2) counts[static_cast<uint32_t>(all[i])] += all[i + 1];
    }
#else
    (void)counts;
#endif
  }
  // The largest value over all ranks (on every rank).
  double max(double value) const {
#ifdef KMER_HAVE_MPI
    if (active) {
      double out = value;
      MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      return out;
    }
#endif
    return value;
  }
  void barrier() const {
#ifdef KMER_HAVE_MPI
    if (active) MPI_Barrier(MPI_COMM_WORLD);
#endif
  }
};

void append_lines(std::ostream& out, std::istream& in, size_t lines, const std::string& source) {
  std::string line;
  for (size_t i = 0; i < lines; ++i) {
    if (!std::getline(in, line)) fail_at(source, 0, "rank output ended early while merging");
    out << line << '\n';
  }
}

}  // namespace

void check_db_k(const Database& db, unsigned expected_k) {
  if (expected_k && db.k() != expected_k)
    fail_at(db.path(), 0, "the DB was built with k = " + std::to_string(db.k()) + ", not the expected k = " +
                              std::to_string(expected_k));
}

int run_classify(ClassifyCommand& cmd) {
  const double wall_start = now_seconds();
  MpiContext mpi;
  const std::string tsv_path = cmd.out + ".tsv", report_path = cmd.out + ".kreport";
  // Rank files while splitting; rank 0 merges them in input order at the end.
  // With one rank, its file is the output under a temporary name.
  dimmap::support::PendingRename rank_file{
      tsv_path, mpi.size > 1 ? cmd.out + ".tsv.rank" + std::to_string(mpi.rank) + ".tmp" : ""};
  std::unordered_map<uint32_t, uint64_t> counts;
  uint64_t reads = 0, classified = 0, batches = 0, bases = 0;
  double seconds = 0, load_seconds = 0;  // classification (reads in, results out) and DB open
  std::string error;
  struct dimmap_stats dstats {};
  bool have_dstats = false;
  std::string placement_text = cmd.placement.describe();
  try {
    const double t0 = now_seconds();
    Database db = Database::open(cmd.db, cmd.placement.resolve());
    check_db_k(db, cmd.expected_k);
    const TaxonIndex index(db.taxonomy());
    const unsigned threads = cmd.threads ? cmd.threads : static_cast<unsigned>(omp_get_max_threads());
    // The sorted lookups sweep a two-level DB from its start to its end. On Linux mmap that is
    // sequential readahead (advise_sweep), unless --advise-random turned readahead off: then,
    // as on dimmap (no kernel readahead), the classifier hints the pages of its next lookups.
    uint64_t readahead = 0;
    if (db.kind() == IndexKind::two_level) {
      if (db.region().backend() == dimmap::Backend::dimmap)
        readahead = dimmap_readahead(cmd.placement.plan->buffer_bytes(), threads);
      else if (db.region().backend() == dimmap::Backend::mmap && cmd.placement.advise_random)
        readahead = kMmapRandomReadahead;
    }
    LookupBatchInputs in;
    const dimmap::MemoryLimit limit = dimmap::memory_limit();
    in.limit_bytes = limit.bytes;
    in.limit_source = limit.source;
    if (db.region().backend() == dimmap::Backend::dimmap) in.buffer_bytes = cmd.placement.plan->buffer_bytes();
    in.db_bytes = db.file_bytes();
    in.db_in_memory = db.region().backend() == dimmap::Backend::memory;
    in.threads = threads;
    // Ranks on one node share its memory (Open MPI says how many there are).
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (mpi.size > 1 && local) in.sharers = static_cast<unsigned>(std::max(1L, std::strtol(local, nullptr, 10)));
    const LookupBatchChoice choice = choose_lookup_batch(in);
    advise_sweep(db, choice.db_fits, cmd.placement.advise_random);
    if (cmd.lookup_batch == 0) {
      cmd.lookup_batch = choice.kmers;
      if (mpi.rank == 0)
        std::fprintf(stderr, "kmer classify: batch: %llu k-mers (%s) from %s\n",
                     static_cast<unsigned long long>(choice.kmers), dimmap::format_size(choice.bytes).c_str(),
                     choice.why.c_str());
    } else if (mpi.rank == 0) {
      std::fprintf(stderr, "kmer classify: batch: %llu k-mers (%s) from --lookup-batch\n",
                   static_cast<unsigned long long>(cmd.lookup_batch),
                   dimmap::format_size(cmd.lookup_batch * kBatchBytesPerKmer).c_str());
    }
    SortedBatchClassifier classifier(db, index, cmd.params, threads, cmd.lookup_batch, readahead);
    load_seconds = now_seconds() - t0;
    const double t1 = now_seconds();
    std::ofstream out(rank_file.temp_path());
    if (!out) fail_at(rank_file.temp_path(), 0, "cannot create output file");
    if (mpi.rank == 0 && mpi.size == 1) out << "read_id\ttaxid\tscore\tmatch_type\n";
    // CRAM decoding gets the classifier's threads. Where they leave a CPU free, the next reads
    // are parsed on a thread of their own while a batch is classified: a whole batch ahead when
    // the DB stays cached, a few blocks when each batch sweeps it from storage.
    ReadSource source({cmd.reads, cmd.mates, cmd.interleaved, {cmd.reference, threads}});
    const unsigned k = db.k();
    const bool spare_cpu = threads < static_cast<unsigned>(omp_get_num_procs());
    BackgroundReads reader(source, cmd.batch_reads, choice.db_fits ? cmd.lookup_batch : kSweepLookAheadKmers, k,
                           spare_cpu);
    // This rank's reads wait in `pool` until they have a lookup batch of k-mers: then as many
    // whole reads as fit are classified in one sorted batch, and the rest wait for more.
    auto kmers_of = [k](const SequenceRecord& r) -> uint64_t {
      return r.sequence.size() >= k ? r.sequence.size() - k + 1 : 0;
    };
    std::deque<SequenceRecord> pool;
    std::vector<SequenceRecord> batch;
    uint64_t pool_kmers = 0;  // at most
    std::vector<Classification> results;
    std::vector<std::string_view> sequences;
    double last_note = now_seconds();
    auto classify_first = [&](size_t n) {  // classifies and writes pool[0, n)
      sequences.resize(n);
      for (size_t i = 0; i < n; ++i) sequences[i] = pool[i].sequence;
      classifier.classify(sequences.data(), n, results);
      char score[32];
      for (size_t i = 0; i < n; ++i) {
        const Classification& c = results[i];
        std::snprintf(score, sizeof score, "%.4f", c.score);
        out << pool[i].id << '\t' << c.taxid << '\t' << score << '\t' << to_string(c.type) << '\n';
        ++counts[c.taxid];
        classified += c.taxid != 0;
        bases += pool[i].sequence.size();
        pool_kmers -= kmers_of(pool[i]);
      }
      pool.erase(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(n));
      reads += n;
      if (cmd.progress && now_seconds() - last_note > 5) {
        last_note = now_seconds();
        std::fprintf(stderr, "kmer classify: %llu reads%s\n", static_cast<unsigned long long>(reads),
                     mpi.size > 1 ? (" on rank " + std::to_string(mpi.rank)).c_str() : "");
      }
    };
    for (;;) {
      const size_t n = reader.next_batch(batch);
      if (n == 0) break;
      const bool mine = batches++ % static_cast<uint64_t>(mpi.size) == static_cast<uint64_t>(mpi.rank);
      if (!mine) continue;
      for (SequenceRecord& r : batch) {
        pool_kmers += kmers_of(r);
        pool.push_back(std::move(r));
      }
      while (pool_kmers >= cmd.lookup_batch) {
        size_t fit = 0;
        for (uint64_t sum = 0; fit < pool.size() && (fit == 0 || sum + kmers_of(pool[fit]) <= cmd.lookup_batch);)
          sum += kmers_of(pool[fit++]);
        classify_first(fit);
      }
    }
    if (!pool.empty()) classify_first(pool.size());
    // Every rank reads the whole input, so all of them see this alike.
    if (batches == 0) fail_at(cmd.reads, 0, "no reads (the file is empty)");
    out.close();
    if (!out) fail_at(rank_file.temp_path(), 0, "cannot write output file");
    seconds = now_seconds() - t1;
    if (db.region().backend() == dimmap::Backend::dimmap && dimmap_stats_for(db.region().data(), &dstats) == 0)
      have_dstats = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) std::fprintf(stderr, "kmer classify: %s\n", error.c_str());
  if (mpi.any(!error.empty())) return 1;

  mpi.reduce_counts(counts);
  seconds = mpi.max(seconds);  // the job takes as long as its slowest rank
  load_seconds = mpi.max(load_seconds);
  mpi.barrier();  // all rank files are complete
  int rc = 0;
  if (mpi.rank == 0) {
    try {
      // One rank: its file is already the complete output under a temporary name.
      dimmap::support::PendingRename tsv_tmp =
          mpi.size > 1 ? dimmap::support::PendingRename(tsv_path) : std::move(rank_file);
      if (mpi.size > 1) {
        // Batches went round robin; every batch but the last has batch_reads reads.
        uint64_t total = 0;
        for (const auto& [t, c] : counts) total += c;
        std::ofstream out(tsv_tmp.temp_path());
        out << "read_id\ttaxid\tscore\tmatch_type\n";
        std::vector<std::unique_ptr<std::ifstream>> ins;
        for (int r = 0; r < mpi.size; ++r)
          ins.push_back(std::make_unique<std::ifstream>(cmd.out + ".tsv.rank" + std::to_string(r) + ".tmp"));
        for (uint64_t b = 0, done = 0; done < total; ++b) {
          const uint64_t n = std::min<uint64_t>(cmd.batch_reads, total - done);
          append_lines(out, *ins[b % mpi.size], n, cmd.out);
          done += n;
        }
        out.close();
        if (!out) fail_at(tsv_tmp.temp_path(), 0, "cannot write output file");
        reads = total;
        classified = total - (counts.count(0) ? counts[0] : 0);
      }
      Database db = Database::open(cmd.db);  // the taxonomy for the report (header + small section)
      dimmap::support::PendingRename report_tmp{report_path};
      {
        std::ofstream rep(report_tmp.temp_path());
        write_kreport(rep, db.taxonomy(), counts);
        rep.close();
        if (!rep) fail_at(report_tmp.temp_path(), 0, "cannot write report");
      }
      tsv_tmp.commit();
      report_tmp.commit();
      std::fprintf(stderr,
                   "kmer classify: %llu reads, %.2f%% classified, %.2f s (+ %.2f s opening the DB), %.0f reads/s, "
                   "%d rank(s), DB %s\n",
                   static_cast<unsigned long long>(reads), reads ? 100.0 * classified / reads : 0.0, seconds,
                   load_seconds,
                   seconds > 0 ? reads / seconds : 0.0, mpi.size, placement_text.c_str());
      if (have_dstats)
        std::fprintf(stderr, "kmer classify: dimmap buffer: %s\n", dimmap::support::stats_text(dstats).c_str());
      std::printf("reads\t%llu\nclassified\t%llu\nseconds\t%.3f\nload_seconds\t%.3f\nreads_per_second\t%.1f\n"
                  "bases\t%llu\nranks\t%d\n",
                  static_cast<unsigned long long>(reads), static_cast<unsigned long long>(classified), seconds,
                  load_seconds,
                  seconds > 0 ? reads / seconds : 0.0, static_cast<unsigned long long>(bases), mpi.size);
      if (!cmd.json.empty())
        dimmap::json::write_file(cmd.json, classify_summary_json({reads, classified, bases, seconds, load_seconds,
                                                                  now_seconds() - wall_start, mpi.size, placement_text,
                                                                  have_dstats ? std::optional(dstats) : std::nullopt}));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "kmer classify: %s\n", e.what());
      rc = 1;
    }
  }
  mpi.barrier();  // rank files stay until rank 0 has merged them
  return rc;
}

int run_lookup(LookupCommand& cmd) {
  const double wall_start = now_seconds();
  LookupSummary summary;
  // The k from the header, without mapping the DB on the placement under test.
  const Database probe = Database::open(cmd.db);
  check_db_k(probe, cmd.expected_k);
  const unsigned k = probe.k();
  const std::string kind = to_string(probe.kind());
  const uint64_t db_bytes = probe.file_bytes();
  std::vector<uint64_t> kmers = cmd.kmers_file.empty() ? kmers_from_reads(cmd.reads, k, cmd.max_kmers)
                                                        : kmers_from_text(cmd.kmers_file, k, cmd.max_kmers);
  if (kmers.empty()) throw Error(cmd.reads + ": no k-mers of length " + std::to_string(k));
  const bool new_csv = !cmd.csv.empty() && ::access(cmd.csv.c_str(), F_OK) != 0;
  std::ofstream csv;
  if (!cmd.csv.empty()) {
    csv.open(cmd.csv, std::ios::app);
    if (!csv) fail_at(cmd.csv, 0, "cannot open CSV output");
    if (new_csv) csv << "index,placement,threads,run,lookups,hits,seconds,lookups_per_s,hit_rate,db_bytes\n";
  }
  std::printf("%-10s %-22s %7s %4s %12s %9s %12s %8s\n", "index", "placement", "threads", "run", "lookups", "seconds",
              "lookups/s", "hit_rate");
  for (unsigned threads : cmd.threads) {
    for (unsigned run = 0; run < cmd.repeat; ++run) {
      if (cmd.cold) drop_file_cache(cmd.db);
      const std::string where = cmd.placement.describe();
      Database db = Database::open(cmd.db, cmd.placement.resolve());
      const LookupResult r = run_lookups(db, kmers, threads);
      std::printf("%-10s %-22s %7u %4u %12llu %9.3f %12.0f %8.4f\n", kind.c_str(), where.c_str(), threads, run,
                  static_cast<unsigned long long>(r.lookups), r.seconds, r.lookups_per_second(), r.hit_rate());
      struct dimmap_stats ds {};
      const bool have_ds =
          db.region().backend() == dimmap::Backend::dimmap && dimmap_stats_for(db.region().data(), &ds) == 0;
      if (have_ds)
        std::fprintf(stderr, "kmer lookup: dimmap buffer: %.2f faults per lookup; %s\n",
                     r.lookups ? double(ds.faults) / r.lookups : 0.0, dimmap::support::stats_text(ds).c_str());
      summary.runs.push_back({threads, run, r, have_ds ? std::optional(ds) : std::nullopt});
      summary.placement = where;
      std::fflush(stdout);
      if (csv)
        csv << kind << ',' << where << ',' << threads << ',' << run << ',' << r.lookups << ',' << r.hits << ','
            << r.seconds << ',' << r.lookups_per_second() << ',' << r.hit_rate() << ',' << db_bytes << '\n';
    }
  }
  if (!cmd.json.empty()) {
    summary.index = kind;
    summary.db_bytes = db_bytes;
    summary.wall_seconds = now_seconds() - wall_start;
    dimmap::json::write_file(cmd.json, lookup_summary_json(summary));
  }
  return 0;
}

int run_info(const std::string& path, bool verify) {
  const Database db = Database::open(path);
  const DbHeader& h = db.header();
  std::printf("file\t%s\nformat_version\t%u\nindex\t%s\nk\t%u\nkmers\t%llu\nlists\t%llu\ninline_kmers\t%llu\n"
              "genomes\t%llu\nreference_bases\t%llu\nmax_taxa\t%u\ntaxa_in_taxonomy\t%zu\nfile_bytes\t%llu\n",
              path.c_str(), h.version, to_string(db.kind()), h.k, static_cast<unsigned long long>(h.kmer_count),
              static_cast<unsigned long long>(h.list_count), static_cast<unsigned long long>(h.inline_count),
              static_cast<unsigned long long>(h.genome_count), static_cast<unsigned long long>(h.reference_bases),
              h.max_taxa, db.taxonomy().size(), static_cast<unsigned long long>(h.file_bytes));
  if (db.kind() == IndexKind::two_level)
    std::printf("prefix_bits\t%u\nentry_bytes\t%u\n", h.prefix_bits, h.entry_bytes);
  else
    std::printf("buckets\t%llu\n", static_cast<unsigned long long>(h.bucket_count));
  for (uint32_t s = 0; s < kSectionCount; ++s)
    if (h.sections[s].bytes)
      std::printf("section.%s\t%llu bytes at %llu\n", section_name(s),
                  static_cast<unsigned long long>(h.sections[s].bytes),
                  static_cast<unsigned long long>(h.sections[s].offset));
  if (verify) {
    db.verify();
    std::printf("verify\tok (all section CRCs match)\n");
  }
  return 0;
}

}  // namespace kmer
