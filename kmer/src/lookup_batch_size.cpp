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
  // What the batch may take: the limit less the buffer or the tmpfs copy of the DB, the
  // process, and on mmap the readahead room; then only a share of the rest.
  const uint64_t process = kProcessReserveBytes + kThreadReserveBytes * std::max(1u, in.threads);
  uint64_t taken = process + in.buffer_bytes + (in.db_in_memory ? in.db_bytes : 0);
  if (on_mmap) taken += kReadaheadReserveBytes;
  uint64_t room = limit > taken ? limit - taken : 0;
  room = static_cast<uint64_t>(static_cast<double>(room) * kBatchShare);
  const uint64_t from_memory =
      std::clamp<uint64_t>(room / kBatchBytesPerKmer, kMinChosenLookupBatch, SortedBatchClassifier::kMaxLookupBatch);
  // Does the DB stay cached beside a default batch? Then one read of it serves every batch.
  bool db_fits = true;
  if (in.buffer_bytes)
    db_fits = in.db_bytes <= in.buffer_bytes;
  else if (on_mmap)
    db_fits = in.db_bytes + kDefaultLookupBatch * kBatchBytesPerKmer + process <= limit;

  LookupBatchChoice c;
  c.kmers = db_fits ? std::min(from_memory, kDefaultLookupBatch) : from_memory;
  c.bytes = c.kmers * kBatchBytesPerKmer;
  c.db_fits = db_fits;
  c.why = "the memory limit of " + dimmap::format_size(in.limit_bytes) + " (" + in.limit_source + ")";
  if (sharers > 1) c.why += " shared by " + std::to_string(sharers) + " ranks";
  if (in.buffer_bytes) c.why += " less the DI-MMAP buffer of " + dimmap::format_size(in.buffer_bytes);
  c.why += db_fits ? "; the DB (" + dimmap::format_size(in.db_bytes) + ") fits, so at most the default"
                   : "; the DB (" + dimmap::format_size(in.db_bytes) + ") does not fit: one sweep per batch";
  return c;
}

}  // namespace kmer
