// staging_pool.cpp - first-fit blocks over a bitmap of staging pages.
#include "staging_pool.hpp"

#include <sys/mman.h>

#include <cerrno>

namespace dimmap::detail {

StagingPool::~StagingPool() {
  if (base_) munmap(base_, pages_ * page_size_);
}

int StagingPool::init(size_t pages, size_t page_size) {
  void* p = mmap(nullptr, pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) return -errno;
  base_ = static_cast<char*>(p);
  pages_ = pages;
  page_size_ = page_size;
  used_.assign((pages + 63) / 64, 0);
  return 0;
}

StagingPool::Block StagingPool::find(size_t want) const {
  Block best;
  size_t page = 0;
  while (page < pages_) {
    // Whole words of taken pages are skipped at once: the pool is scanned for every run.
    if (page % 64 == 0 && used_[page / 64] == ~uint64_t(0)) {
      page += 64;
      continue;
    }
    if (taken(page)) {
      ++page;
      continue;
    }
    const size_t first = page;
    while (page < pages_ && page - first < want && !taken(page)) ++page;
    if (page - first >= want) return Block{first, want};
    if (page - first > best.pages) best = Block{first, page - first};
  }
  return best;
}

void StagingPool::mark(size_t first, size_t pages, bool taken) {
  for (size_t page = first; page < first + pages; ++page) {
    const uint64_t bit = uint64_t(1) << (page % 64);
    if (taken)
      used_[page / 64] |= bit;
    else
      used_[page / 64] &= ~bit;
  }
}

}  // namespace dimmap::detail
