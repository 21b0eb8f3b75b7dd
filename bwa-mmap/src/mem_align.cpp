// mem_align.cpp - the mem kernel: bwa mem's three-step pipeline over a MappedIndex.
//
// The batching decides the output: paired-end insert-size statistics are estimated per batch
// and reads get their random seeds from their position in the input. So the pipeline is bwa
// mem's: step 0 reads a batch with libbwa's bseq_read() (actual_chunk_size bases, whole
// pairs), step 1 aligns it with mem_process_seqs() on opt->n_threads threads, step 2 writes
// the SAM records in input order (as SAM, BAM or CRAM: sam_output.cpp); kt_pipeline() overlaps step 0 of one batch with the others.
#include <bwammap/input_check.hpp>
#include <bwammap/mapped_index.hpp>
#include <bwammap/mem_align.hpp>
#include <bwammap/output_file.hpp>
#include <bwammap/sam_output.hpp>
#include <bwammap/reads_watch.hpp>
#include <bwammap/run_stats.hpp>
#include <zlib.h>

#include <bwa/bwa.h>
#include <bwa/kseq.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
KSEQ_DECLARE(gzFile)
void kt_pipeline(int n_threads, void* (*func)(void*, int, void*), void* shared_data, int n_steps);
}

namespace bwammap {
namespace {

struct Shared {
  kseq_t* ks1 = nullptr;
  kseq_t* ks2 = nullptr;
  const mem_opt_t* opt = nullptr;
  const mem_pestat_t* pes0 = nullptr;
  const bwaidx_t* idx = nullptr;
  SamOutput* out = nullptr;
  int64_t n_processed = 0;
  int chunk_size = 0;
  bool copy_comment = false;
  int verbosity = 3;
  MemReport* report = nullptr;
};

struct Batch {
  int n_seqs = 0;
  bseq1_t* seqs = nullptr;
};

Batch* read_batch(Shared* s) {
  Batch* b = new Batch;
  b->seqs = bseq_read(s->chunk_size, &b->n_seqs, s->ks1, s->ks2);
  if (!b->seqs) {
    delete b;
    return nullptr;
  }
  int64_t bases = 0;
  for (int i = 0; i < b->n_seqs; ++i) {
    if (!s->copy_comment) {
      std::free(b->seqs[i].comment);
      b->seqs[i].comment = nullptr;
    }
    bases += b->seqs[i].l_seq;
  }
  s->report->reads += b->n_seqs;
  s->report->bases += bases;
  ++s->report->batches;
  if (s->verbosity >= 3)
    std::fprintf(stderr, "[bwa-mmap mem] read %d sequences (%lld bp)...\n", b->n_seqs, static_cast<long long>(bases));
  return b;
}

void align_batch(Shared* s, Batch* b) {
  const bwaidx_t* idx = s->idx;
  if (s->opt->flag & MEM_F_SMARTPE) {
    // Smart pairing: single reads and pairs are aligned separately, as bwa mem does.
    bseq1_t* sep[2];
    int n_sep[2];
    mem_opt_t tmp = *s->opt;
    bseq_classify(b->n_seqs, b->seqs, n_sep, sep);
    if (s->verbosity >= 3)
      std::fprintf(stderr, "[bwa-mmap mem] %d single-end sequences; %d paired-end sequences\n", n_sep[0], n_sep[1]);
    if (n_sep[0]) {
      tmp.flag &= ~MEM_F_PE;
      mem_process_seqs(&tmp, idx->bwt, idx->bns, idx->pac, s->n_processed, n_sep[0], sep[0], nullptr);
      for (int i = 0; i < n_sep[0]; ++i) b->seqs[sep[0][i].id].sam = sep[0][i].sam;
    }
    if (n_sep[1]) {
      tmp.flag |= MEM_F_PE;
      mem_process_seqs(&tmp, idx->bwt, idx->bns, idx->pac, s->n_processed + n_sep[0], n_sep[1], sep[1], s->pes0);
      for (int i = 0; i < n_sep[1]; ++i) b->seqs[sep[1][i].id].sam = sep[1][i].sam;
    }
    std::free(sep[0]);
    std::free(sep[1]);
  } else {
    mem_process_seqs(s->opt, idx->bwt, idx->bns, idx->pac, s->n_processed, b->n_seqs, b->seqs, s->pes0);
  }
  s->n_processed += b->n_seqs;
}

void write_batch(Shared* s, Batch* b) {
  for (int i = 0; i < b->n_seqs; ++i) {
    bseq1_t& q = b->seqs[i];
    if (q.sam) s->out->write(q.sam);
    std::free(q.name);
    std::free(q.comment);
    std::free(q.seq);
    std::free(q.qual);
    std::free(q.sam);
  }
  std::free(b->seqs);
  delete b;
}

extern "C" void* pipeline_step(void* shared, int step, void* data) {
  Shared* s = static_cast<Shared*>(shared);
  Batch* b = static_cast<Batch*>(data);
  switch (step) {
    case 0: return read_batch(s);
    case 1: align_batch(s, b); return b;
    case 2: write_batch(s, b); return nullptr;
  }
  return nullptr;
}

struct KseqCloser {
  kseq_t* ks;
  ~KseqCloser() {
    if (ks) kseq_destroy(ks);
  }
};

}  // namespace

MemReport run_mem(MemOptions& options, IndexPlacement& plan) {
  RunClock clock;
  MemReport report;
  bwa_verbose = options.verbosity;
  mem_opt_t* opt = options.opt.get();

  // Reads and the output's format first: a typo should not cost an index load.
  const SamFormat format = choose_sam_format(options.output, options.output_format);
  const std::string reference =
      format == SamFormat::cram ? cram_reference(options.reference, options.index_prefix) : std::string();
  ReadsFile reads1(options.reads1);
  std::unique_ptr<ReadsFile> reads2;
  if (!options.reads2.empty()) {
    if (opt->flag & MEM_F_PE) {
      if (bwa_verbose >= 2)
        std::fprintf(stderr, "[W::bwa-mmap mem] when '-p' is in use, the second query file is ignored.\n");
    } else {
      reads2 = std::make_unique<ReadsFile>(options.reads2);
      opt->flag |= MEM_F_PE;
    }
  }
  if (reads1.empty() && bwa_verbose >= 2)
    std::fprintf(stderr, "[W::bwa-mmap mem] '%s' holds no reads: the %s file has a header only\n",
                 reads1.path().c_str(), to_string(format));

  MappedIndex index(options.index_prefix, plan);
  if (options.ignore_alt)
    for (int i = 0; i < index.bns()->n_seqs; ++i) index.bns()->anns[i].is_alt = 0;
  report.load_seconds = clock.wall_seconds();
  if (bwa_verbose >= 3)
    std::fprintf(stderr, "[bwa-mmap mem] index %s mapped in %.3f s: bwt %s on %s, sa %s on %s, pac %s on %s\n",
                 options.index_prefix.c_str(), report.load_seconds,
                 dimmap::format_size(index.region(Structure::bwt).size()).c_str(),
                 dimmap::to_string(index.region(Structure::bwt).backend()),
                 dimmap::format_size(index.region(Structure::sa).size()).c_str(),
                 dimmap::to_string(index.region(Structure::sa).backend()),
                 dimmap::format_size(index.region(Structure::pac).size()).c_str(),
                 dimmap::to_string(index.region(Structure::pac).backend()));

  KseqCloser ks1{kseq_init(reads1.gz())};
  KseqCloser ks2{reads2 ? kseq_init(reads2->gz()) : nullptr};
  ReadsWatch watch1(reads1.gz(), reads1.path(), reads1.fastq());
  std::unique_ptr<ReadsWatch> watch2;
  if (reads2) watch2 = std::make_unique<ReadsWatch>(reads2->gz(), reads2->path(), reads2->fastq());

  // BAM/CRAM compression shares the aligner's threads (-t).
  SamOutput out(options.output, format, reference, opt->n_threads);
  out.write_header(index.bns(), options.header_lines.empty() ? nullptr : options.header_lines.c_str(),
                   "@PG\tID:bwa-mmap\tPN:bwa-mmap\tVN:" DIMMAP_VERSION_STRING "\tCL:" + options.command_line);

  Shared shared;
  shared.ks1 = ks1.ks;
  shared.ks2 = ks2.ks;
  shared.opt = opt;
  shared.pes0 = options.fixed_insert_size ? options.pes : nullptr;
  shared.idx = index.idx();
  shared.out = &out;
  shared.chunk_size = options.fixed_chunk_size > 0 ? options.fixed_chunk_size : opt->chunk_size * opt->n_threads;
  shared.copy_comment = options.copy_comment;
  shared.verbosity = bwa_verbose;
  shared.report = &report;
  const double align_start = clock.wall_seconds();
  kt_pipeline(options.no_mt_io ? 1 : 2, pipeline_step, &shared, 3);
  report.align_seconds = clock.wall_seconds() - align_start;

  // A truncated read file fails the run; the output file (a temporary so far) is removed.
  const std::string no_sam = options.output.empty() || options.output == "-"
                                 ? std::string()
                                 : std::string("; no ") + to_string(format) + " file written";
  for (const ReadsWatch* watch : {&watch1, watch2.get()})
    if (watch && !watch->problem().empty()) throw dimmap::Error(watch->problem() + no_sam);
  if (watch2 && watch1.records() != watch2->records())
    throw dimmap::Error("'" + reads1.path() + "' holds " + std::to_string(watch1.records()) + " reads but '" +
                        reads2->path() + "' " + std::to_string(watch2->records()) +
                        ": one of the pair files is truncated" + no_sam);
  out.commit();
  report.cpu_seconds = clock.cpu_seconds();
  report.peak_rss = peak_rss_bytes();
  return report;
}

}  // namespace bwammap
