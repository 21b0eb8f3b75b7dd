// pattern.hpp - the verifiable content of an LRIOT file.
//
// Page p of a file made by create_pattern_file holds 512 little 64-bit words:
//   word 0      kIdentity ^ p          (which page this is)
//   word 1      a write counter        (0 at creation; +1 per read-modify-write)
//   words 2..   mix64(p * 512 + i)     (checkable filler)
// Reads can check a page completely, writes keep it checkable, and the sum of the counters over
// the file says how many writes reached it: the independent reference for LRIOT's write tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace lriot {

constexpr size_t kPageSize = 4096;
constexpr size_t kWordsPerPage = kPageSize / sizeof(uint64_t);
constexpr size_t kCounterWord = 1;
constexpr uint64_t kIdentity = 0x4c52494f54000000ull;  // "LRIOT"

// Writes page `page` of the pattern (counter 0) into words[kWordsPerPage].
void fill_page(uint64_t page, uint64_t* words);
// Word 0 names page `page`.
inline bool check_identity(uint64_t page, const uint64_t* words) { return words[0] == (kIdentity ^ page); }
// All words but the counter match page `page`.
bool check_page(uint64_t page, const uint64_t* words);

// Called now and then with bytes done and bytes in all.
using Progress = std::function<void(uint64_t done, uint64_t total)>;

// Creates (or replaces) path with `bytes` of the pattern (a positive multiple of kPageSize),
// written under a temporary name and renamed at the end, so a failed run leaves nothing that
// looks valid. Uses O_DIRECT where the file system allows, so the file is not left in the
// page cache. Throws dimmap::Error naming the file.
void create_pattern_file(const std::string& path, uint64_t bytes, const Progress& progress = {});

struct FileCheck {
  uint64_t pages = 0;
  uint64_t bad_pages = 0;       // pages whose identity or filler words are wrong
  uint64_t first_bad_page = 0;  // valid if bad_pages > 0
  uint64_t counter_sum = 0;     // sum of the write counters (mod 2^64)
};

// Reads every page of the file (O_DIRECT where possible) and checks it against the pattern.
FileCheck verify_pattern_file(const std::string& path);

}  // namespace lriot
