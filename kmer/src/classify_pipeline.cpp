// classify_pipeline.cpp - reads parsed ahead on their own thread, and the DB's advice for the
// sweeps (see classify_pipeline.hpp).
#include <kmer/classify_pipeline.hpp>

#include <sys/mman.h>

#include <algorithm>

namespace kmer {

BackgroundReads::BackgroundReads(ReadSource& source, size_t block_reads, uint64_t ahead_kmers, unsigned k,
                                 bool own_thread)
    : source_(source),
      block_reads_(std::max<size_t>(1, block_reads)),
      ahead_kmers_(ahead_kmers),
      k_(k),
      own_thread_(own_thread) {
  if (own_thread_) thread_ = std::thread([this] { run(); });
}

BackgroundReads::~BackgroundReads() {
  if (!own_thread_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

uint64_t BackgroundReads::kmers_of(const std::vector<SequenceRecord>& block) const {
  uint64_t n = 0;
  for (const SequenceRecord& r : block) n += r.sequence.size() >= k_ ? r.sequence.size() - k_ + 1 : 0;
  return n;
}

void BackgroundReads::run() {
  for (;;) {
    std::vector<SequenceRecord> block;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Room for another block: nothing ready, or less than the look-ahead.
      changed_.wait(lock, [this] { return stop_ || ready_.empty() || waiting_kmers_ < ahead_kmers_; });
      if (stop_) return;
      if (!spare_.empty()) {
        block.swap(spare_.back());
        spare_.pop_back();
      }
    }
    size_t n = 0;
    std::exception_ptr error;
    try {
      n = source_.next_batch(block, block_reads_);
    } catch (...) {
      error = std::current_exception();
    }
    const uint64_t kmers = n ? kmers_of(block) : 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error) {
        error_ = error;
      } else if (n == 0) {
        at_end_ = true;
      } else {
        ready_.push_back(std::move(block));
        ready_kmers_.push_back(kmers);
        waiting_kmers_ += kmers;
      }
    }
    changed_.notify_all();
    if (error || n == 0) return;
  }
}

size_t BackgroundReads::next_batch(std::vector<SequenceRecord>& block) {
  if (!own_thread_) return source_.next_batch(block, block_reads_);
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return !ready_.empty() || at_end_ || error_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    block.clear();
    return 0;
  }
  if (block.capacity()) spare_.push_back(std::move(block));
  block = std::move(ready_.front());
  ready_.pop_front();
  waiting_kmers_ -= ready_kmers_.front();
  ready_kmers_.pop_front();
  lock.unlock();
  changed_.notify_all();
  return block.size();
}

void advise_sweep(const Database& db, bool db_fits, bool advise_random) {
  if (db.kind() != IndexKind::two_level || db.region().backend() != dimmap::Backend::mmap || advise_random) return;
  void* start = db.region().data();
  const size_t bytes = db.region().size();
  if (db_fits) {
    ::madvise(start, bytes, MADV_NORMAL);
    ::madvise(start, bytes, MADV_WILLNEED);
  } else {
    ::madvise(start, bytes, MADV_SEQUENTIAL);
  }
}

}  // namespace kmer
