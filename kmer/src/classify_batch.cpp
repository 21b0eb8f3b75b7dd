// classify_batch.cpp - sorted-batch classification (see SortedBatchClassifier in classify.hpp).
//
// Per sorted batch of whole reads:
//   1. count: each thread scans its block of reads, counting every read's valid k-mers and
//      how many k-mers fall in each group of leading bits ("bucket", 2^12 of them);
//   2. gather: each thread writes its reads' (k-mer, slot) keys into the buckets, the slot
//      being the k-mer's place in read order;
//   3. look up: runs of buckets go to the threads in ascending order; a thread sorts each
//      bucket (radix sort), looks its k-mers up in that order (equal neighbours once),
//      replaces each key's k-mer by its lookup and notes where the slot's lookup went
//      (`where`), hinting the DB pages of its next lookups ahead if asked (ReadAhead);
//   4. vote: every read gathers its lookups in read order and votes on them
//      (ReadClassifier::classify_lists, the rule of ReadClassifier::classify).
#include <kmer/classify.hpp>
#include <kmer/error.hpp>
#include <kmer/kmer_codec.hpp>

#include <dimmap/placement.hpp>

#include <omp.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace kmer {

namespace {

// One k-mer of the batch and its slot (its place in read order). Once looked up, `word`
// holds the lookup (TaxaList::word) and the slot's entry of `where` points here.
struct __attribute__((packed)) Key {
  uint64_t word;  // the k-mer, then its lookup
  uint32_t slot;
};
static_assert(sizeof(Key) + sizeof(uint32_t) == SortedBatchClassifier::kBytesPerKmer, "update kBytesPerKmer");

// Sorts keys[0, n) by k-mer, all of whose bits above `bits` are equal (one bucket): LSD radix
// sort on bytes (passes where all keys share the byte are skipped), `scratch` as the buffer.
void sort_bucket(Key* keys, size_t n, unsigned bits, std::vector<Key>& scratch) {
  if (n < 64) {
    std::sort(keys, keys + n, [](const Key& x, const Key& y) { return x.word < y.word; });
    return;
  }
  const unsigned passes = (bits + 7) / 8;
  uint32_t count[8][256] = {};
  for (size_t i = 0; i < n; ++i) {
    const uint64_t w = keys[i].word;
    for (unsigned p = 0; p < passes; ++p) ++count[p][(w >> (8 * p)) & 255];
  }
  if (scratch.size() < n) scratch.resize(n);
  Key* src = keys;
  Key* dst = scratch.data();
  for (unsigned p = 0; p < passes; ++p) {
    uint32_t* c = count[p];
    if (c[(src[0].word >> (8 * p)) & 255] == n) continue;  // one value of this byte
    uint32_t at = 0;
    for (unsigned d = 0; d < 256; ++d) {
      const uint32_t m = c[d];
      c[d] = at;
      at += m;
    }
    for (size_t i = 0; i < n; ++i) dst[c[(src[i].word >> (8 * p)) & 255]++] = src[i];
    std::swap(src, dst);
  }
  if (src != keys) std::copy(src, src + n, keys);
}

// Read-ahead hints for the DB pages the next sorted lookups will touch (dimmap_prefetchv on a
// dimmap mapping, MADV_WILLNEED on others), in as few ranges as possible, for one run of
// buckets:
//   - the pages of the run's first-level entries, requested bucket by bucket as the buckets
//     are sorted, so that they arrive while the next ones are sorted. Their addresses need no
//     read of the DB. Unrequested, each would be read by the first lookup (or hint) touching
//     it: on dimmap, a synchronous 4 KiB read (measured: 2048 such reads per sweep of a
//     131 MiB DB, its 8 MiB first level, every one of them a major fault);
//   - the pages of the second-level buckets of the lookups up to `window` bytes past the
//     current one (their addresses are in the first-level entries).
class ReadAhead {
 public:
  ReadAhead(const Database& db, uint64_t window) : db_(db), window_(window) {}

  // After sorting keys[0, n), a bucket of the run (the run's buckets in ascending order).
  void sorted(const Key* keys, size_t n) {
    if (n == 0) return;
    const uint64_t* first = db_.first_level_entry(keys[0].word);
    if (!first) return;  // gnu-hash: no first level
    const uintptr_t b = std::max(reinterpret_cast<uintptr_t>(first) & ~(kPage - 1), first_level_end_);
    const uintptr_t e =
        (reinterpret_cast<uintptr_t>(db_.first_level_entry(keys[n - 1].word) + 1) + kPage - 1) & ~(kPage - 1);
    if (b >= e) return;
    add(first_level_, b, e);
    first_level_end_ = e;
    if ((first_level_pending_ += e - b) >= kFirstLevelRequest) request_first_level();
  }

  // Once the run's buckets are sorted: what is left of the first-level requests.
  void request_first_level() {
    if (!first_level_.empty()) dimmap::prefetch(first_level_.data(), first_level_.size());
    first_level_.clear();
    first_level_pending_ = 0;
  }

  // Before looking up keys[i] of the sorted run keys[0, end).
  void advance(const Key* keys, size_t i, size_t end) {
    const auto cur = reinterpret_cast<uintptr_t>(db_.lookup_span(keys[i].word).begin);
    if (next_ > i && hinted_end_ >= cur + window_ / 2) return;  // enough already requested
    const uintptr_t limit = cur + window_;
    ranges_.clear();
    next_ = std::max(next_, i);
    for (; next_ < end; ++next_) {
      const Database::Span s = db_.lookup_span(keys[next_].word);
      uintptr_t b = reinterpret_cast<uintptr_t>(s.begin) & ~(kPage - 1);
      const uintptr_t e = (reinterpret_cast<uintptr_t>(s.end) + kPage - 1) & ~(kPage - 1);
      if (b >= limit) break;
      b = std::max(b, hinted_end_);
      if (b >= e) continue;
      add(ranges_, b, e);
      hinted_end_ = e;
    }
    if (!ranges_.empty()) dimmap::prefetch(ranges_.data(), ranges_.size());
  }

 private:
  static constexpr uintptr_t kPage = 4096;
  // First-level pages per request: few calls (a run of a 2M k-mer batch on 2 threads covers
  // ~128 pages), yet requested well before the run's lookups start.
  static constexpr uintptr_t kFirstLevelRequest = 32 * kPage;
  const Database& db_;
  const uint64_t window_;
  size_t next_ = 0;          // first key not yet hinted
  uintptr_t hinted_end_ = 0;  // end of the last page hinted
  std::vector<struct iovec> ranges_;
  uintptr_t first_level_end_ = 0;    // end of the last first-level page added
  uintptr_t first_level_pending_ = 0;  // bytes in first_level_
  std::vector<struct iovec> first_level_;

  // Appends the pages [b, e) to `to`, extending its last range where they follow it.
  static void add(std::vector<struct iovec>& to, uintptr_t b, uintptr_t e) {
    if (!to.empty() && reinterpret_cast<uintptr_t>(to.back().iov_base) + to.back().iov_len == b)
      to.back().iov_len += e - b;
    else
      to.push_back({reinterpret_cast<void*>(b), e - b});
  }
};

}  // namespace

struct SortedBatchClassifier::Impl {
  const Database& db;
  const unsigned threads;
  const uint64_t lookup_batch;
  const unsigned k, bucket_bits, bucket_shift;
  const uint64_t readahead;
  // Each thread's own state, on cache lines of its own.
  struct alignas(128) PerThread {
    ReadClassifier classifier;
    std::vector<TaxaList> lists;  // a read's lookups
    std::vector<Key> scratch;     // for sorting a bucket
    PerThread(const Database& db, const TaxonIndex& index, ClassifyParams params) : classifier(db, index, params) {}
  };
  std::vector<std::unique_ptr<PerThread>> per_thread;
  // By bucket, sorted and looked up in step 3; and slot -> its key after step 3. Grown to the
  // largest sorted batch, never initialized (every element is written before it is read).
  std::unique_ptr<Key[]> keys;
  std::unique_ptr<uint32_t[]> where;
  uint64_t capacity = 0;
  std::vector<uint32_t> counts;                               // valid k-mers of each read
  std::vector<uint64_t> offsets;                              // each read's first slot
  std::vector<uint64_t> pos;                                  // [thread][bucket] counts, then write positions
  std::vector<uint64_t> bucket_start;                         // buckets + 1
  std::vector<uint32_t> groups;                               // first bucket of each run of buckets, then B

  Impl(const Database& d, const TaxonIndex& index, ClassifyParams params, unsigned t, uint64_t batch, uint64_t ahead)
      : db(d),
        threads(t),
        lookup_batch(batch),
        k(d.k()),
        bucket_bits(std::min(12u, 2 * d.k())),
        bucket_shift(2 * d.k() - bucket_bits),
        readahead(ahead) {
    for (unsigned i = 0; i < threads; ++i) per_thread.push_back(std::make_unique<PerThread>(db, index, params));
  }

  void run(const std::string_view* reads, size_t n, Classification* results);
  void look_up(size_t begin, size_t end, ReadAhead& ahead);
};

SortedBatchClassifier::SortedBatchClassifier(const Database& db, const TaxonIndex& index, ClassifyParams params,
                                             unsigned threads, uint64_t lookup_batch, uint64_t readahead_bytes)
    : impl_(std::make_unique<Impl>(db, index, params, std::max(1u, threads), lookup_batch, readahead_bytes)) {
  if (lookup_batch == 0 || lookup_batch > kMaxLookupBatch)
    throw Error("the lookup batch must be 1.." + std::to_string(kMaxLookupBatch) + " k-mers (got " +
                std::to_string(lookup_batch) + ")");
}

SortedBatchClassifier::~SortedBatchClassifier() = default;

void SortedBatchClassifier::classify(const std::string_view* reads, size_t n, std::vector<Classification>& results) {
  results.resize(n);
  const unsigned k = impl_->k;
  auto bound = [k](std::string_view r) -> uint64_t { return r.size() >= k ? r.size() - k + 1 : 0; };
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += bound(reads[i]);
  // Sorted batches of about equal size, each at most lookup_batch k-mers (or one read).
  const uint64_t cap = impl_->lookup_batch;
  const uint64_t batches = std::max<uint64_t>(1, (total + cap - 1) / cap);
  const uint64_t target = (total + batches - 1) / batches;
  for (size_t r0 = 0; r0 < n;) {
    size_t r1 = r0;
    uint64_t sum = 0;
    while (r1 < n && (sum == 0 || (sum < target && sum + bound(reads[r1]) <= cap))) sum += bound(reads[r1++]);
    if (sum > UINT32_MAX) throw Error("a read of " + std::to_string(reads[r0].size()) + " bases is too long");
    impl_->run(reads + r0, r1 - r0, results.data() + r0);
    ++sorted_batches_;
    r0 = r1;
  }
}

void SortedBatchClassifier::Impl::run(const std::string_view* reads, size_t n, Classification* results) {
  const size_t buckets = size_t{1} << bucket_bits;
  const unsigned nt = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, n)));
  counts.resize(n);
  offsets.resize(n + 1);
  pos.assign(size_t{nt} * buckets, 0);
  bucket_start.resize(buckets + 1);
  const unsigned shift = bucket_shift;
#pragma omp parallel num_threads(nt)
  {
    const unsigned t = static_cast<unsigned>(omp_get_thread_num());
    const size_t lo = n * t / nt, hi = n * (t + 1) / nt;  // this thread's block of reads (steps 1, 2)
    uint64_t* mine = pos.data() + size_t{t} * buckets;
    for (size_t r = lo; r < hi; ++r) {
      uint32_t c = 0;
      for_each_canonical_kmer(reads[r], k, [&](uint64_t kmer) {
        ++mine[kmer >> shift];
        ++c;
      });
      counts[r] = c;
    }
#pragma omp barrier
#pragma omp single
    {
      offsets[0] = 0;
      for (size_t r = 0; r < n; ++r) offsets[r + 1] = offsets[r] + counts[r];
      uint64_t at = 0;
      for (size_t b = 0; b < buckets; ++b) {
        bucket_start[b] = at;
        for (unsigned i = 0; i < nt; ++i) {
          const uint64_t c = pos[size_t{i} * buckets + b];
          pos[size_t{i} * buckets + b] = at;
          at += c;
        }
      }
      bucket_start[buckets] = at;
      if (capacity < at) {
        keys.reset();
        where.reset();
        keys.reset(new Key[at]);
        where.reset(new uint32_t[at]);
        capacity = at;
      }
      // Runs of buckets for the threads to take in ascending order. Without read-ahead hints
      // (Linux readahead on a sequential mapping) small runs, so that the threads look up
      // neighbouring parts of the DB, which the kernel then reads as one sequential stream
      // (measured: 2 threads 25% faster than with large runs); with hints, which stop at the
      // end of a run, larger runs (1/8 of a thread's share).
      const uint64_t per_run = readahead ? 8 : 64;
      const uint64_t per_group = std::max<uint64_t>(1024, at / (per_run * nt) + 1);
      groups.clear();
      for (size_t b = 0; b < buckets; ++b)
        if (groups.empty() || bucket_start[b] - bucket_start[groups.back()] >= per_group)
          groups.push_back(static_cast<uint32_t>(b));
      groups.push_back(static_cast<uint32_t>(buckets));
    }
    for (size_t r = lo; r < hi; ++r) {
      uint32_t slot = static_cast<uint32_t>(offsets[r]);
      for_each_canonical_kmer(reads[r], k, [&](uint64_t kmer) { keys[mine[kmer >> shift]++] = Key{kmer, slot++}; });
    }
#pragma omp barrier
    const int64_t ngroups = static_cast<int64_t>(groups.size()) - 1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t g = 0; g < ngroups; ++g) {
      const size_t b0 = groups[g], b1 = groups[g + 1];
      ReadAhead ahead(db, readahead);
      for (size_t b = b0; b < b1; ++b) {
        Key* bucket = keys.get() + bucket_start[b];
        const size_t count = bucket_start[b + 1] - bucket_start[b];
        sort_bucket(bucket, count, bucket_shift, per_thread[t]->scratch);
        if (readahead) ahead.sorted(bucket, count);
      }
      if (readahead) ahead.request_first_level();
      look_up(bucket_start[b0], bucket_start[b1], ahead);
    }
    ReadClassifier& classifier = per_thread[t]->classifier;
    std::vector<TaxaList>& lists = per_thread[t]->lists;
    const int64_t nreads = static_cast<int64_t>(n);
#pragma omp for schedule(dynamic, 64)
    for (int64_t r = 0; r < nreads; ++r) {
      if (r + 1 < nreads)  // the next read's lookups, scattered over the batch
        for (uint64_t j = offsets[r + 1]; j < offsets[r + 2]; ++j) __builtin_prefetch(&keys[where[j]]);
      lists.resize(counts[r]);
      const uint32_t* w = where.get() + offsets[r];
      for (uint32_t j = 0; j < counts[r]; ++j) lists[j] = TaxaList::from_word(keys[w[j]].word);
      results[r] = classifier.classify_lists(lists.data(), counts[r]);
    }
  }
}

// Looks up keys[begin, end) (sorted): each key's k-mer becomes its lookup, and its slot
// points to it.
void SortedBatchClassifier::Impl::look_up(size_t begin, size_t end, ReadAhead& ahead) {
  Key* key = keys.get() + begin;
  const size_t n = end - begin;
  // Software prefetch of the entries (as in ReadClassifier::classify) and page hints ahead.
  constexpr size_t kAhead1 = 16, kAhead2 = 8, kHintEvery = 64;
  for (size_t i = 0; i < std::min(n, kAhead1); ++i) db.prefetch_stage1(key[i].word);
  // Stage 2 here: the whole second-level bucket (its binary search reads most of its lines).
  const uint8_t* prefetched = nullptr;
  auto prefetch_bucket = [&](uint64_t kmer) {
    const Database::Span sp = db.lookup_span(kmer);
    if (sp.begin == prefetched) return;
    prefetched = sp.begin;
    for (const uint8_t* p = sp.begin; p < sp.end; p += 64) __builtin_prefetch(p);
  };
  for (size_t i = 0; i < std::min(n, kAhead2); ++i) prefetch_bucket(key[i].word);
  TaxaList last;
  uint64_t last_kmer = 0;
  size_t next_hint = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t kmer = key[i].word;
    where[key[i].slot] = static_cast<uint32_t>(begin + i);
    if (i == 0 || kmer != last_kmer) {
      if (readahead && i >= next_hint) {
        ahead.advance(key, i, n);
        next_hint = i + kHintEvery;
      }
      if (i + kAhead1 < n) db.prefetch_stage1(key[i + kAhead1].word);
      if (i + kAhead2 < n) prefetch_bucket(key[i + kAhead2].word);
      last = db.lookup(kmer);
      last_kmer = kmer;
    }
    key[i].word = last.word();
  }
}

}  // namespace kmer
