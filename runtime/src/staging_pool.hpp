// staging_pool.hpp - contiguous blocks of staging pages for the engine's read-ahead reads.
//
// A read-ahead run reads adjacent pages of a file with one read into staging memory, then
// copies them into the memfd. Runs are 1 to 64 pages long (most are short: a BFS level
// reads some adjacency lists and skips others). Fixed-size run slots either cut long runs
// into many reads or, when there were few of them, sent most read-ahead down the one-page
// path; a pool handing out blocks of the length each run needs serves both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dimmap::detail {

class StagingPool {
 public:
  struct Block {
    size_t first = 0;  // page index in the pool
    size_t pages = 0;  // 0: no free page
  };

  StagingPool() = default;
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // Maps `pages` pages, populated now so the engine's memory is fixed from the start.
  // Returns 0 or -errno.
  int init(size_t pages, size_t page_size);
  // The first free block of at least `want` pages, else the longest one (first fit: a
  // block's address does not matter, only its length).
  Block find(size_t want) const;
  // Marks `pages` pages from `first` (within a block find returned) as taken.
  void take(size_t first, size_t pages) { mark(first, pages, true); }
  void give(size_t first, size_t pages) { mark(first, pages, false); }
  char* at(size_t first) const { return base_ + first * page_size_; }
  size_t pages() const { return pages_; }

 private:
  void mark(size_t first, size_t pages, bool taken);
  bool taken(size_t page) const { return (used_[page / 64] >> (page % 64)) & 1; }

  char* base_ = nullptr;
  size_t pages_ = 0;
  size_t page_size_ = 0;
  std::vector<uint64_t> used_;  // one bit per page
};

}  // namespace dimmap::detail
