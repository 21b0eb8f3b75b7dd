// lookup_batch_size.cpp - the sorted lookup batch of `kmer classify` from the memory limit
// (see lookup_batch_size.hpp for the model).
#include <kmer/classify.hpp>
#include <kmer/commands.hpp>
#include <kmer/lookup_batch_size.hpp>

#include <dimmap/placement.hpp>

#include <algorithm>

namespace kmer {

LookupBatchChoice choose_lookup_batch(const LookupBatchInputs& in) {
  const unsigned sharers = std::max(1u, in.sharers);
  const uint64_t limit = in.limit_bytes / sharers;
  const bool on_mmap = !in.buffer_bytes && !in.db_in_memory;
  const uint64_t process = kProcessReserveBytes + kThreadReserveBytes * std::max(1u, in.threads);
  // Does the DB stay cached beside a default batch and the next one's reads? Then one read of
  // it serves every batch, and a whole batch of reads is parsed ahead.
  const uint64_t fitting_batch_bytes = kDefaultLookupBatch * (kBatchBytesPerKmer + kLookAheadBytesPerKmer);
  bool db_fits = true;
  if (in.buffer_bytes)
    db_fits = in.db_bytes <= in.buffer_bytes;
  else if (on_mmap)
    db_fits = in.db_bytes + fitting_batch_bytes + process <= limit;
  // What the batch may take: the limit less the buffer or the tmpfs copy of the DB, the
  // process, on mmap the readahead room, and the reads parsed ahead; then a share of the rest.
  uint64_t taken = process + in.buffer_bytes + (in.db_in_memory ? in.db_bytes : 0);
  if (on_mmap) taken += kReadaheadReserveBytes;
  if (!db_fits) taken += kSweepLookAheadKmers * kLookAheadBytesPerKmer;
  uint64_t room = limit > taken ? limit - taken : 0;
  room = static_cast<uint64_t>(static_cast<double>(room) * kBatchShare);
  const uint64_t per_kmer = db_fits ? kBatchBytesPerKmer + kLookAheadBytesPerKmer : kBatchBytesPerKmer;
  const uint64_t from_memory =
      std::clamp<uint64_t>(room / per_kmer, kMinChosenLookupBatch, SortedBatchClassifier::kMaxLookupBatch);

  LookupBatchChoice c;
  c.kmers = db_fits ? std::min(from_memory, kDefaultLookupBatch) : from_memory;
  c.bytes = c.kmers * per_kmer;
  c.db_fits = db_fits;
  c.why = "the memory limit of " + dimmap::format_size(in.limit_bytes) + " (" + in.limit_source + ")";
  if (sharers > 1) c.why += " shared by " + std::to_string(sharers) + " ranks";
  if (in.buffer_bytes) c.why += " less the DI-MMAP buffer of " + dimmap::format_size(in.buffer_bytes);
  c.why += db_fits ? "; the DB (" + dimmap::format_size(in.db_bytes) + ") fits, so at most the default"
                   : "; the DB (" + dimmap::format_size(in.db_bytes) + ") does not fit: one sweep per batch";
  return c;
}

}  // namespace kmer
