// mem_options.cpp - bwa mem 0.7.17's options and the rules that combine them.
#include <bwammap/mem_options.hpp>
#include <dimmap/command_line.hpp>
#include <dimmap/placement.hpp>

#include <bwa/bwa.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace bwammap {
namespace {

// Splits "A<punct>B..." into numeric fields, as bwa does (any punctuation separates).
std::vector<std::string> split_fields(const std::string& text) {
  std::vector<std::string> fields(1);
  for (char ch : text) {
    if (std::ispunct(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-' && ch != '+' && !fields.back().empty())
      fields.emplace_back();
    else
      fields.back() += ch;
  }
  return fields;
}

double to_number(const std::string& field, const char* flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(field.c_str(), &end);
  if (field.empty() || *end != '\0' || errno != 0)
    throw dimmap::cli::UsageError(std::string(flag) + ": cannot read '" + text + "' as numbers");
  return v;
}

int to_int(const std::string& field, const char* flag, const std::string& text) {
  const double v = to_number(field, flag, text);
  if (v != std::floor(v) || std::fabs(v) > 1e9)
    throw dimmap::cli::UsageError(std::string(flag) + ": '" + text + "' needs integers");
  return static_cast<int>(v);
}

}  // namespace

void parse_int_pair(const std::string& text, const char* flag, int* first, int* second) {
  const std::vector<std::string> f = split_fields(text);
  if (f.size() > 2) throw dimmap::cli::UsageError(std::string(flag) + ": expected INT or INT,INT, got '" + text + "'");
  *first = *second = to_int(f[0], flag, text);
  if (f.size() == 2) *second = to_int(f[1], flag, text);
}

void parse_insert_size(const std::string& text, mem_pestat_t* pe) {
  const std::vector<std::string> f = split_fields(text);
  if (f.size() > 4) throw dimmap::cli::UsageError("-I: expected FLOAT[,FLOAT[,INT[,INT]]], got '" + text + "'");
  pe->failed = 0;
  pe->avg = to_number(f[0], "-I", text);
  pe->std = f.size() > 1 ? to_number(f[1], "-I", text) : pe->avg * .1;
  // bwa's defaults: 4 standard deviations around the mean, rounded, low at least 1.
  pe->high = static_cast<int>(pe->avg + 4. * pe->std + .499);
  pe->low = static_cast<int>(pe->avg - 4. * pe->std + .499);
  if (pe->low < 1) pe->low = 1;
  if (f.size() > 2) pe->high = static_cast<int>(to_number(f[2], "-I", text) + .499);
  if (f.size() > 3) pe->low = static_cast<int>(to_number(f[3], "-I", text) + .499);
}

void MemCli::add_to(CLI::App& app) {
  app_ = &app;
  const char* alg = "bwa mem: algorithm";
  const char* sco = "bwa mem: scoring";
  const char* io = "bwa mem: input/output";
  auto opt = [&](const char* name, auto& value, const char* help, const char* group) {
    return app.add_option(name, value, help)->group(group)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  auto flag = [&](const char* name, bool& value, const char* help, const char* group) {
    return app.add_flag(name, value, help)->group(group);
  };
  opt("-t,--threads", t_, "number of threads [1]", alg)->check(dimmap::cli::thread_count());
  opt("-k", k_, "minimum seed length [19]", alg);
  opt("-w", w_, "band width for banded alignment [100]", alg);
  opt("-d", d_, "off-diagonal X-dropoff [100]", alg);
  opt("-r", r_, "look for internal seeds inside a seed longer than {-k} * FLOAT [1.5]", alg);
  opt("-y", y_, "seed occurrence for the 3rd round seeding [20]", alg);
  opt("-c", c_, "skip seeds with more than INT occurrences [500]", alg);
  opt("-D", D_, "drop chains shorter than FLOAT fraction of the longest overlapping chain [0.50]", alg);
  opt("-W", W_, "discard a chain if seeded bases shorter than INT [0]", alg);
  opt("-m", m_, "perform at most INT rounds of mate rescues for each read [50]", alg);
  flag("-S", S_, "skip mate rescue", alg);
  flag("-P", P_, "skip pairing; mate rescue performed unless -S also in use", alg);
  opt("-s", s_, "split a seed if its occurrence is below INT [10]", alg);
  opt("-G", G_, "do not chain seeds more than INT bp apart [10000]", alg);
  opt("-N", N_, "extend at most INT chains [50]", alg);
  opt("-X", X_, "mask level for redundant hits [0.50]", alg);
  opt("-A", A_, "score for a sequence match, which scales options -TdBOELU unless overridden [1]", sco);
  opt("-B", B_, "penalty for a mismatch [4]", sco);
  opt("-O", O_, "INT[,INT] gap open penalties for deletions and insertions [6,6]", sco);
  opt("-E", E_, "INT[,INT] gap extension penalty; a gap of size k cost '{-O} + {-E}*k' [1,1]", sco);
  opt("-L", L_, "INT[,INT] penalty for 5'- and 3'-end clipping [5,5]", sco);
  opt("-U", U_, "penalty for an unpaired read pair [17]", sco);
  opt("-x", x_, "read type: pacbio, ont2d or intractg; changes several parameters unless overridden", sco)
      ->check(CLI::IsMember({"pacbio", "pbref", "ont2d", "intractg"}));
  flag("-p", p_, "smart pairing (ignoring in2.fq)", io);
  opt("-R", R_, "read group header line such as '@RG\\tID:foo\\tSM:bar'", io);
  app.add_option("-H", H_, "insert STR to header if it starts with @; or insert lines in FILE (repeatable)")
      ->group(io);
  opt("-o", o_,
      "output file [standard output]: SAM, or BAM/CRAM by its extension (.bam, .cram) or --output-fmt; "
      "written under a temporary name until complete",
      io);
  opt("--output-fmt", output_fmt_, "sam, bam or cram, whatever -o's extension [by the extension; SAM]", io)
      ->check(CLI::IsMember({"sam", "bam", "cram", "SAM", "BAM", "CRAM"}));
  opt("--reference", reference_, "reference FASTA for CRAM output [the index prefix, when it is the FASTA]", io);
  flag("-j", j_, "treat ALT contigs as part of the primary assembly (i.e. ignore <idxbase>.alt file)", io);
  flag("-5", five_, "for split alignment, take the alignment with the smallest coordinate as primary", io);
  flag("-q", q_, "don't modify mapQ of supplementary alignments", io);
  opt("-K", K_, "process INT input bases in each batch regardless of nThreads (for reproducibility)", io);
  flag("-1", K1_, "read input and compute in one thread (no I/O overlap)", io);
  opt("-v", v_, "verbosity level: 1=error, 2=warning, 3=message, 4+=debugging [3]", io);
  opt("-T", T_, "minimum score to output [30]", io);
  opt("-h", h_, "INT[,INT] if there are <INT hits with score >80% of the max score, output all in XA [5,200]", io);
  flag("-a", a_, "output all alignments for SE or unpaired PE", io);
  flag("-C", C_, "append FASTA/FASTQ comment to SAM output", io);
  flag("-V", V_, "output the reference FASTA header in the XR tag", io);
  flag("-Y", Y_, "use soft clipping for supplementary alignments", io);
  flag("-M", M_, "mark shorter split hits as secondary", io);
  opt("-Q", Q_, "mapQ length coefficient [50]", io);
  opt("-I", I_, "FLOAT[,FLOAT[,INT[,INT]]] mean, standard deviation, max and min of the insert size [inferred]",
      io);
  app.add_option("idxbase_reads", positionals_, "index prefix, reads (FASTQ/FASTA, gz ok, - = stdin), optional mates")
      ->required()
      ->expected(2, 3);
}

bool MemCli::given(const char* name) const { return app_->get_option(name)->count() > 0; }

MemOptions MemCli::resolve() const {
  MemOptions m;
  m.opt = std::unique_ptr<mem_opt_t, void (*)(void*)>(mem_opt_init(), std::free);
  mem_opt_t* o = m.opt.get();
  mem_opt_t o0;  // which fields the user set, as bwa's opt0
  std::memset(&o0, 0, sizeof o0);

  if (given("-k")) o->min_seed_len = k_, o0.min_seed_len = 1;
  if (given("-w")) o->w = w_, o0.w = 1;
  if (given("-A")) o->a = A_, o0.a = 1;
  if (given("-B")) o->b = B_, o0.b = 1;
  if (given("-T")) o->T = T_, o0.T = 1;
  if (given("-U")) o->pen_unpaired = U_, o0.pen_unpaired = 1;
  if (given("-t")) o->n_threads = t_;  // 1..4096, checked while parsing
  if (P_) o->flag |= MEM_F_NOPAIRING;
  if (a_) o->flag |= MEM_F_ALL;
  if (p_) o->flag |= MEM_F_PE | MEM_F_SMARTPE;
  if (M_) o->flag |= MEM_F_NO_MULTI;
  if (S_) o->flag |= MEM_F_NO_RESCUE;
  if (Y_) o->flag |= MEM_F_SOFTCLIP;
  if (V_) o->flag |= MEM_F_REF_HDR;
  if (five_) o->flag |= MEM_F_PRIMARY5 | MEM_F_KEEP_SUPP_MAPQ;  // -5 implies -q, as in bwa
  if (q_) o->flag |= MEM_F_KEEP_SUPP_MAPQ;
  if (given("-c")) o->max_occ = c_, o0.max_occ = 1;
  if (given("-d")) o->zdrop = d_, o0.zdrop = 1;
  if (given("-r")) o->split_factor = static_cast<float>(r_), o0.split_factor = 1.f;
  if (given("-D")) o->drop_ratio = static_cast<float>(D_), o0.drop_ratio = 1.f;
  if (given("-m")) o->max_matesw = m_, o0.max_matesw = 1;
  if (given("-s")) o->split_width = s_, o0.split_width = 1;
  if (given("-G")) o->max_chain_gap = G_, o0.max_chain_gap = 1;
  if (given("-N")) o->max_chain_extend = N_, o0.max_chain_extend = 1;
  if (given("-W")) o->min_chain_weight = W_, o0.min_chain_weight = 1;
  if (given("-y")) o->max_mem_intv = static_cast<uint64_t>(y_), o0.max_mem_intv = 1;
  if (given("-X")) o->mask_level = static_cast<float>(X_);
  if (given("-h")) {
    parse_int_pair(h_, "-h", &o->max_XA_hits, &o->max_XA_hits_alt);
    o0.max_XA_hits = o0.max_XA_hits_alt = 1;
  }
  if (given("-Q")) {
    o0.mapQ_coef_len = 1;
    o->mapQ_coef_len = static_cast<float>(Q_);
    o->mapQ_coef_fac = Q_ > 0 ? static_cast<int>(std::log(static_cast<double>(Q_))) : 0;
  }
  if (given("-O")) parse_int_pair(O_, "-O", &o->o_del, &o->o_ins), o0.o_del = o0.o_ins = 1;
  if (given("-E")) parse_int_pair(E_, "-E", &o->e_del, &o->e_ins), o0.e_del = o0.e_ins = 1;
  if (given("-L")) parse_int_pair(L_, "-L", &o->pen_clip5, &o->pen_clip3), o0.pen_clip5 = o0.pen_clip3 = 1;
  for (int i = 0; i < 4; ++i) m.pes[i].failed = 1;
  if (given("-I")) {
    parse_insert_size(I_, &m.pes[1]);
    m.fixed_insert_size = true;
  }
  m.fixed_chunk_size = K_;
  m.no_mt_io = K1_;
  m.copy_comment = C_;
  m.ignore_alt = j_;
  m.verbosity = v_;
  m.output = o_;
  m.output_format = output_fmt_;
  m.reference = reference_;

  // Header lines: every -H (a line, or a file of lines), then the read group, as bwa orders them.
  char* hdr = nullptr;
  for (const std::string& h : H_) {
    if (!h.empty() && h[0] == '@') {
      hdr = bwa_insert_header(h.c_str(), hdr);
      continue;
    }
    std::ifstream in(h);
    if (!in) throw dimmap::Error("-H: '" + h + "' is neither a header line (starting with @) nor a readable file");
    for (std::string line; std::getline(in, line);) hdr = bwa_insert_header(line.c_str(), hdr);
  }
  if (given("-R")) {
    if (R_.rfind("@RG", 0) != 0)
      throw dimmap::cli::UsageError("-R: the read group line must start with @RG, got '" + R_ + "'");
    if (R_.find("\\tID:") == std::string::npos && R_.find("\tID:") == std::string::npos)
      throw dimmap::cli::UsageError("-R: the read group line has no ID field ('\\tID:...')");
    char* rg = bwa_set_rg(R_.c_str());  // also sets the RG:Z: tag libbwa adds to each record
    if (!rg) throw dimmap::cli::UsageError("-R: libbwa rejected the read group line '" + R_ + "'");
    hdr = bwa_insert_header(rg, hdr);
    std::free(rg);
  }
  if (hdr) {
    m.header_lines = hdr;
    std::free(hdr);
  }

  if (given("-x")) {
    if (x_ == "intractg") {
      if (!o0.o_del) o->o_del = 16;
      if (!o0.o_ins) o->o_ins = 16;
      if (!o0.b) o->b = 9;
      if (!o0.pen_clip5) o->pen_clip5 = 5;
      if (!o0.pen_clip3) o->pen_clip3 = 5;
    } else {  // pacbio, pbref, ont2d
      if (!o0.o_del) o->o_del = 1;
      if (!o0.e_del) o->e_del = 1;
      if (!o0.o_ins) o->o_ins = 1;
      if (!o0.e_ins) o->e_ins = 1;
      if (!o0.b) o->b = 1;
      if (o0.split_factor == 0.f) o->split_factor = 10.f;
      const bool ont = x_ == "ont2d";
      if (!o0.min_chain_weight) o->min_chain_weight = ont ? 20 : 40;
      if (!o0.min_seed_len) o->min_seed_len = ont ? 14 : 17;
      if (!o0.pen_clip5) o->pen_clip5 = 0;
      if (!o0.pen_clip3) o->pen_clip3 = 0;
    }
  } else if (o0.a) {  // a new match score scales the other scores not given
    if (!o0.b) o->b *= o->a;
    if (!o0.T) o->T *= o->a;
    if (!o0.o_del) o->o_del *= o->a;
    if (!o0.e_del) o->e_del *= o->a;
    if (!o0.o_ins) o->o_ins *= o->a;
    if (!o0.e_ins) o->e_ins *= o->a;
    if (!o0.zdrop) o->zdrop *= o->a;
    if (!o0.pen_clip5) o->pen_clip5 *= o->a;
    if (!o0.pen_clip3) o->pen_clip3 *= o->a;
    if (!o0.pen_unpaired) o->pen_unpaired *= o->a;
  }
  bwa_fill_scmat(o->a, o->b, o->mat);

  m.index_prefix = positionals_.at(0);
  m.reads1 = positionals_.at(1);
  if (positionals_.size() > 2) m.reads2 = positionals_[2];
  return m;
}

}  // namespace bwammap
