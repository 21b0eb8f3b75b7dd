// libbwa_hooks.cpp - two calls inside libbwa that bwa-mmap observes (via --wrap at link time).
//
// bwt_sa: the zero-copy .sa leaves sa[0] = seq_len where bwa's loader writes -1 (see
//   mapped_index.cpp). bwt_sa() walks to a sampled row and adds the sample; only a walk ending
//   on row 0 sees sa[0], and there seq_len and -1 agree modulo seq_len + 1, the length of the
//   text with its sentinel. Every true suffix-array value is below seq_len + 1, so the modulo
//   leaves all other results alone. (mem never asks for row 0 itself: its intervals start at 1.)
// kseq_read: libbwa's bseq_read() stops at the first record it cannot parse as if the file had
//   ended (-2: quality string shorter than the sequence). We remember that, so the mem driver
//   can fail instead of writing a silently shortened SAM.
#include <bwammap/libbwa_hooks.hpp>

#include <atomic>

extern "C" {
bwtint_t __real_bwt_sa(const bwt_t* bwt, bwtint_t k);
bwtint_t __wrap_bwt_sa(const bwt_t* bwt, bwtint_t k);
int __real_kseq_read(void* seq);
int __wrap_kseq_read(void* seq);
}

namespace bwammap {
namespace {
std::atomic<int> g_truncated_records{0};
}

int truncated_records_seen() { return g_truncated_records.load(); }

}  // namespace bwammap

extern "C" bwtint_t __wrap_bwt_sa(const bwt_t* bwt, bwtint_t k) {
  return __real_bwt_sa(bwt, k) % (bwt->seq_len + 1);
}

extern "C" int __wrap_kseq_read(void* seq) {
  const int r = __real_kseq_read(seq);
  if (r == -2) bwammap::g_truncated_records.fetch_add(1);
  return r;
}
