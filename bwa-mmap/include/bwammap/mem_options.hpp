// mem_options.hpp - bwa mem's command-line options, with bwa mem's rules for combining them.
//
// Every option of `bwa mem` 0.7.17 is accepted with the same letter and meaning, so a
// bwa command line works after replacing "bwa mem" with "bwa-mmap mem". The rules that make
// options interact are kept: -A scales -TdBOELU unless those are given, -x presets fill in
// only what was not given, -R goes after the -H lines. --help lists them all.
#pragma once

#include <CLI/CLI.hpp>
#include <bwa/bwamem.h>

#include <memory>
#include <string>
#include <vector>

namespace bwammap {

// Everything `bwa-mmap mem` needs besides the placement.
struct MemOptions {
  std::unique_ptr<mem_opt_t, void (*)(void*)> opt{nullptr, nullptr};  // libbwa's options
  mem_pestat_t pes[4] = {};
  bool fixed_insert_size = false;  // -I given: pes is used for every batch
  int fixed_chunk_size = -1;       // -K
  bool no_mt_io = false;           // -1
  bool copy_comment = false;       // -C
  bool ignore_alt = false;         // -j
  std::string header_lines;        // -H lines then the -R line, '\n'-separated ("" = none)
  int verbosity = 3;               // -v (bwa_verbose)
  std::string output;              // -o ("" = standard output)
  std::string output_format;       // --output-fmt ("" = by -o's extension)
  std::string reference;           // --reference: FASTA for CRAM output ("" = the index prefix)
  std::string index_prefix;
  std::string reads1, reads2;
  std::string command_line;        // for the @PG line
};

class MemCli {
 public:
  // Registers bwa mem's options (group "bwa mem options") and the positionals.
  void add_to(CLI::App& app);
  // Applies bwa mem's rules. Throws dimmap::cli::UsageError for malformed values (a bad -H file: dimmap::Error).
  MemOptions resolve() const;

 private:
  bool given(const char* name) const;

  CLI::App* app_ = nullptr;
  // Values as typed; defaults come from mem_opt_init() unless given.
  int k_ = 0, w_ = 0, d_ = 0, y_ = 0, c_ = 0, W_ = 0, m_ = 0, A_ = 0, B_ = 0, U_ = 0, T_ = 0, s_ = 0,
      G_ = 0, N_ = 0, Q_ = 0, t_ = 1, K_ = -1, v_ = 3;
  double r_ = 0, D_ = 0, X_ = 0;
  bool S_ = false, P_ = false, p_ = false, j_ = false, five_ = false, q_ = false, K1_ = false, a_ = false,
       C_ = false, V_ = false, Y_ = false, M_ = false;
  std::string x_, O_, E_, L_, h_, I_, R_, o_, output_fmt_, reference_;
  std::vector<std::string> H_;
  std::vector<std::string> positionals_;
};

// "6" -> {6, 6}; "6,7" -> {6, 7} (bwa's INT[,INT]). Throws dimmap::cli::UsageError naming `flag`.
void parse_int_pair(const std::string& text, const char* flag, int* first, int* second);
// bwa's -I FLOAT[,FLOAT[,INT[,INT]]] into pes[1] (mean, std, high, low).
void parse_insert_size(const std::string& text, mem_pestat_t* pe);

}  // namespace bwammap
