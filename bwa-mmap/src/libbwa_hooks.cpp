// libbwa_hooks.cpp - a call inside libbwa that bwa-mmap corrects (via --wrap at link time).
// (The read-side wraps, kseq_read and gzread, are in reads_watch.cpp.)
//
// bwt_sa: the zero-copy .sa leaves sa[0] = seq_len where bwa's loader writes -1 (see
//   mapped_index.cpp). bwt_sa() walks to a sampled row and adds the sample; only a walk ending
//   on row 0 sees sa[0], and there seq_len and -1 agree modulo seq_len + 1, the length of the
//   text with its sentinel. Every true suffix-array value is below seq_len + 1, so the modulo
//   leaves all other results alone. (mem never asks for row 0 itself: its intervals start at 1.)
#include <bwammap/libbwa_hooks.hpp>

extern "C" {
bwtint_t __real_bwt_sa(const bwt_t* bwt, bwtint_t k);
bwtint_t __wrap_bwt_sa(const bwt_t* bwt, bwtint_t k);
}

extern "C" bwtint_t __wrap_bwt_sa(const bwt_t* bwt, bwtint_t k) {
  return __real_bwt_sa(bwt, k) % (bwt->seq_len + 1);
}
