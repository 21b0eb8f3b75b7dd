// read_pairs.cpp - mates joined into one read for classification (see read_pairs.hpp).
#include <kmer/error.hpp>
#include <kmer/read_pairs.hpp>

namespace kmer {

std::string pair_name(const std::string& id) {
  const size_t n = id.size();
  if (n > 2 && id[n - 2] == '/' && (id[n - 1] == '1' || id[n - 1] == '2')) return id.substr(0, n - 2);
  return id;
}

ReadSource::ReadSource(const ReadInput& input)
    : first_(std::make_unique<SequenceReader>(input.reads, input.options)),
      paired_(input.interleaved || !input.mates.empty()) {
  if (!input.mates.empty()) {
    if (input.interleaved) fail_at(input.mates, 0, "mates come either interleaved or from a second file, not both");
    second_ = std::make_unique<SequenceReader>(input.mates, input.options);
  }
}

bool ReadSource::next(SequenceRecord& rec) {
  if (!paired_) return first_->next(rec);
  SequenceReader& other = second_ ? *second_ : *first_;
  const bool have_first = first_->next(rec);
  const bool have_second = have_first || second_ ? other.next(mate_) : false;
  if (!have_first && !have_second) return false;
  if (!have_second) {
    if (second_)
      fail_at(second_->path(), 0,
              "holds " + std::to_string(second_->records_read()) + " reads but '" + first_->path() +
                  "' more: no mate for its record '" + rec.id + "' (one of the pair files is truncated?)");
    fail_at(first_->path(), rec.line, "interleaved pairs: record '" + rec.id + "' is the last one and has no mate");
  }
  if (!have_first)
    fail_at(first_->path(), 0,
            "holds " + std::to_string(first_->records_read()) + " reads but '" + second_->path() +
                "' more: no mate for its record '" + mate_.id + "' (one of the pair files is truncated?)");
  const std::string name = pair_name(rec.id);
  if (pair_name(mate_.id) != name)
    fail_at(other.path(), mate_.line,
            "record '" + mate_.id + "' is not the mate of '" + rec.id + "' (" + first_->path() + ", " +
                (second_ ? "record " + std::to_string(first_->records_read()) : "the record before") +
                "): mates must come in the same order");
  rec.id = name;
  rec.sequence += 'N';
  rec.sequence += mate_.sequence;
  return true;
}

size_t ReadSource::next_batch(std::vector<SequenceRecord>& batch, size_t max) {
  return read_batch(*this, batch, max);
}

}  // namespace kmer
