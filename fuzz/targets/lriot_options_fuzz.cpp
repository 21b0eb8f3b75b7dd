// Fuzz target: LRIOT's option values (the checks behind its command line: mode and pattern
// names, --buffer sizes, the numeric ranges of validate(), and the page-sequence parameters).
// One input line per option. Properties: bad values end in dimmap::Error; for accepted
// parameters on a small file, every operation of every process lands on a page of the file,
// and a uniform sequence gives each process distinct pages until its share is used up.
//
// The CLI11 wiring itself (tools/lriot.cpp's main) is not a library function and is not
// fuzzed here.
#include <dimmap/placement.hpp>
#include <lriot/lriot.hpp>
#include <lriot/sequence.hpp>

#include <cstdlib>
#include <set>
#include <string>

#include "fuzz_input.hpp"

namespace {

double to_double(const std::string& s) { return std::strtod(s.c_str(), nullptr); }
unsigned long long to_u64(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  auto f = dimmap::fuzz::split_lines(data, size, 12);
  f.resize(12);
  for (auto& s : f) s = s.substr(0, s.find('\0'));
  lriot::Config c;
  c.file = "/nonexistent/lriot-fuzz";
  try {
    c.mode = lriot::parse_mode(f[0]);
    c.sequence.pattern = lriot::parse_pattern(f[1]);
    if (!f[2].empty()) c.buffer_bytes = dimmap::parse_size(f[2], "--buffer");
    c.procs = static_cast<unsigned>(to_u64(f[3]));
    c.threads = static_cast<unsigned>(to_u64(f[4]));
    c.seconds = to_double(f[5]);
    c.ops = to_u64(f[6]);
    c.sequence.write_fraction = to_double(f[7]);
    c.sequence.partition_ops = to_double(f[8]);
    c.sequence.partition_space = to_double(f[9]);
    c.hot_fraction = f[10].empty() ? -1 : to_double(f[10]);
    c.sequence.seed = to_u64(f[11]);
    lriot::validate(c);
  } catch (const dimmap::Error&) {
    return 0;
  }
  // A small file, as run() would describe it to the sequences.
  lriot::SequenceParams p = c.sequence;
  p.procs = c.procs;
  p.pages = 16 + (p.seed % 4096);
  try {
    lriot::check_sequence_params(p);
  } catch (const dimmap::Error&) {
    return 0;
  }
  const unsigned procs = std::min(p.procs, 8u);
  for (unsigned proc = 0; proc < procs; ++proc) {
    lriot::PageSequence seq(p, proc);
    std::set<uint64_t> seen;
    const uint64_t share = p.pages / p.procs;
    for (uint64_t k = 0; k < 64; ++k) {
      const lriot::Op op = seq(k);
      if (op.page >= p.pages) property_failed("operation " + std::to_string(k) + " leaves the file");
      if (p.pattern == lriot::Pattern::uniform && k < share && !seen.insert(op.page).second)
        property_failed("a uniform sequence repeats a page before its share is used up");
    }
  }
  return 0;
}
