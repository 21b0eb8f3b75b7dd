// index_check.cpp - the index verifier: headers and sizes of .amb .ann .bwt .pac .sa agree.
//
// The relations come from bwa's file formats (bntseq.c's bns_dump, bwt.c's bwt_dump_*):
//   .ann  "l_pac n_seqs seed", then two lines per sequence: "gi name[ anno]", "offset len n_ambs"
//   .amb  "l_pac n_seqs n_holes", then one line per hole: "offset len char"
//   .pac  l_pac/4 + 1 bytes of 2-bit bases, a 0 byte when l_pac%4 == 0, then the byte l_pac%4
//   .bwt  primary, L2[1..4] (8 bytes each), then the BWT with Occ counts every 128 bases
//   .sa   primary, L2[1..4], sa_intv, seq_len, then sa[1..n_sa-1] (8 bytes each)
#include <bwammap/index_check.hpp>
#include <dimmap/placement.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace bwammap {

const char* const kIndexSuffixes[5] = {".amb", ".ann", ".bwt", ".pac", ".sa"};

namespace {

enum { kAmb, kAnn, kBwt, kPac, kSa };

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw dimmap::Error("index file '" + path + "': " + problem);
}

uint64_t size_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) fail(path, "missing (build the index with 'bwa-mmap index' or 'bwa index')");
    fail(path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  if (st.st_size == 0) fail(path, "empty");
  return static_cast<uint64_t>(st.st_size);
}

void read_words(const std::string& path, uint64_t* words, size_t n) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(path, std::strerror(errno));
  const size_t got = std::fread(words, 8, n, f);
  std::fclose(f);
  if (got != n) fail(path, "truncated header");
}

std::string count(uint64_t n, const char* what) { return std::to_string(n) + " " + what; }

// Parses the text files; returns l_pac and fills n_seqs / n_holes.
void check_ann(const std::string& path, IndexLayout* x) {
  std::ifstream in(path);
  std::string line;
  long long l_pac = -1;
  long long n_seqs = -1;
  unsigned long long seed = 0;
  if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %llu", &l_pac, &n_seqs, &seed) != 3 ||
      l_pac <= 0 || n_seqs <= 0 || n_seqs > INT32_MAX)
    fail(path, "bad header line (expected 'length sequences seed')");
  long long end = 0;
  for (long long i = 0; i < n_seqs; ++i) {
    long long offset = -1, len = -1, n_ambs = -1;
    if (!std::getline(in, line) || line.empty())
      fail(path, "truncated: " + count(static_cast<uint64_t>(i), "of") + " " + std::to_string(n_seqs) +
                     " sequences described");
    if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %lld", &offset, &len, &n_ambs) != 3)
      fail(path, "truncated or damaged record of sequence " + std::to_string(i + 1));
    if (offset < end || offset > l_pac || len < 0 || len > l_pac - offset)  // no overflow
      fail(path, "sequence " + std::to_string(i + 1) + " lies outside the packed sequence");
    end = offset + len;
  }
  x->l_pac = l_pac;
  x->n_seqs = static_cast<int32_t>(n_seqs);
}

void check_amb(const std::string& path, IndexLayout* x) {
  std::ifstream in(path);
  std::string line;
  long long l_pac = -1, n_seqs = -1, n_holes = -1;
  if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %lld", &l_pac, &n_seqs, &n_holes) != 3 ||
      n_holes < 0 || n_holes > INT32_MAX)
    fail(path, "bad header line (expected 'length sequences holes')");
  if (l_pac != x->l_pac || n_seqs != x->n_seqs)
    fail(path, "describes " + std::to_string(l_pac) + " bases in " + std::to_string(n_seqs) +
                   " sequences but the .ann file " + std::to_string(x->l_pac) + " in " + std::to_string(x->n_seqs));
  for (long long i = 0; i < n_holes; ++i) {
    long long offset = -1, len = -1;
    char amb = 0;
    if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %c", &offset, &len, &amb) != 3)
      fail(path, "truncated: " + std::to_string(i) + " of " + std::to_string(n_holes) + " holes listed");
    if (offset < 0 || offset > l_pac || len <= 0 || len > l_pac - offset) fail(path, "hole " + std::to_string(i + 1) + " out of range");
  }
  x->n_holes = static_cast<int32_t>(n_holes);
}

}  // namespace

uint64_t expected_bwt_words(uint64_t seq_len) {
  const uint64_t occ_interval = 128;
  const uint64_t n_occ = (seq_len + occ_interval - 1) / occ_interval + 1;
  // 2-bit BWT in uint32 words, plus 4 uint64 counts (8 words) per Occ block.
  return (seq_len + 15) / 16 + n_occ * 8;
}

uint64_t expected_pac_bytes(int64_t l_pac) { return static_cast<uint64_t>(l_pac) / 4 + 2; }

IndexLayout check_index(const std::string& prefix) {
  IndexLayout x;
  x.prefix = prefix;
  std::string path[5];
  for (int i = 0; i < 5; ++i) {
    path[i] = prefix + kIndexSuffixes[i];
    x.bytes[i] = size_of(path[i]);
  }
  check_ann(path[kAnn], &x);
  check_amb(path[kAmb], &x);

  // .pac: size and the trailing length byte.
  if (x.bytes[kPac] != expected_pac_bytes(x.l_pac))
    fail(path[kPac], count(x.bytes[kPac], "bytes") + ", expected " + count(expected_pac_bytes(x.l_pac), "bytes") +
                         " for " + std::to_string(x.l_pac) + " bases (truncated or from another index)");
  {
    std::FILE* f = std::fopen(path[kPac].c_str(), "rb");
    if (!f) fail(path[kPac], std::strerror(errno));
    int last = -1;
    if (std::fseek(f, -1, SEEK_END) == 0) last = std::fgetc(f);
    std::fclose(f);
    if (last != static_cast<int>(x.l_pac % 4)) fail(path[kPac], "damaged: the final length byte does not match");
  }

  // .bwt header and size.
  uint64_t head[7];
  if (x.bytes[kBwt] < kBwtHeaderBytes) fail(path[kBwt], "truncated header");
  read_words(path[kBwt], head, 5);
  x.primary = head[0];
  x.L2[0] = 0;
  for (int i = 1; i <= 4; ++i) x.L2[i] = head[i];
  x.seq_len = x.L2[4];
  for (int i = 1; i <= 4; ++i)
    if (x.L2[i] < x.L2[i - 1]) fail(path[kBwt], "damaged header (base counts decrease)");
  if (x.seq_len != 2 * static_cast<uint64_t>(x.l_pac))
    fail(path[kBwt], "indexes " + std::to_string(x.seq_len) + " bases but the .ann file says " +
                         std::to_string(2 * x.l_pac) + " (both strands): files from different indexes?");
  if (x.primary > x.seq_len) fail(path[kBwt], "damaged header (primary index out of range)");
  x.bwt_words = (x.bytes[kBwt] - kBwtHeaderBytes) / 4;
  const uint64_t want_words = expected_bwt_words(x.seq_len);
  if ((x.bytes[kBwt] - kBwtHeaderBytes) % 4 != 0 || x.bwt_words != want_words)
    fail(path[kBwt], count(x.bytes[kBwt], "bytes") + ", expected " +
                         count(kBwtHeaderBytes + 4 * want_words, "bytes") + " (truncated, or not updated with Occ)");

  // .sa header and size.
  if (x.bytes[kSa] < kSaHeaderBytes) fail(path[kSa], "truncated header");
  read_words(path[kSa], head, 7);
  if (head[0] != x.primary || head[1] != x.L2[1] || head[2] != x.L2[2] || head[3] != x.L2[3] || head[4] != x.L2[4])
    fail(path[kSa], "does not belong to the .bwt file beside it (different BWT header)");
  const uint64_t intv = head[5];
  if (intv == 0 || intv > (1u << 30) || (intv & (intv - 1)) != 0)
    fail(path[kSa], "damaged header (sampling interval " + std::to_string(intv) + " is not a power of two)");
  if (head[6] != x.seq_len) fail(path[kSa], "damaged header (sequence length differs from the .bwt file)");
  x.sa_intv = static_cast<int>(intv);
  x.n_sa = (x.seq_len + intv) / intv;
  const uint64_t want_sa = kSaHeaderBytes + 8 * (x.n_sa - 1);
  if (x.bytes[kSa] != want_sa)
    fail(path[kSa], count(x.bytes[kSa], "bytes") + ", expected " + count(want_sa, "bytes") + " (truncated?)");
  return x;
}

}  // namespace bwammap
