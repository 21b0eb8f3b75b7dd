// pattern.hpp - self-describing page contents for the reliability tests.
//
// Word w of page p written in version v holds (p << 40) | (w << 28) | v: any reader can tell
// that a word sits where it belongs (a misplaced or stale page shows a wrong tag) and which
// version of the page it comes from. Pages up to 2^24, versions up to 2^28 - 1.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dimmap::reliability {

constexpr size_t kPageBytes = 4096;
constexpr size_t kWordsPerPage = kPageBytes / sizeof(uint64_t);
constexpr uint64_t kVersionMask = (uint64_t{1} << 28) - 1;

inline uint64_t pattern_word(uint64_t page, uint64_t word, uint64_t version) {
  return (page << 40) | (word << 28) | (version & kVersionMask);
}
inline bool tag_matches(uint64_t value, uint64_t page, uint64_t word) { return (value >> 28) == ((page << 12) | word); }
inline uint64_t version_of(uint64_t value) { return value & kVersionMask; }

// Fills buf (one page) with version v of page p.
inline void fill_page(uint64_t* buf, uint64_t page, uint64_t version) {
  for (size_t w = 0; w < kWordsPerPage; ++w) buf[w] = pattern_word(page, w, version);
}

}  // namespace dimmap::reliability
