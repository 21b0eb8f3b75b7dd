// Fuzz target: kmer's FASTA/FASTQ reader (plain or gzip: the reader decides by the bytes).
// Properties: malformed input ends in kmer::Error and nothing else; a record's id has no
// blank in it and its sequence no line break; batches and single records agree.
#include <kmer/error.hpp>
#include <kmer/sequence_reader.hpp>

#include <string>
#include <vector>

#include "fuzz_input.hpp"

namespace {

std::vector<kmer::SequenceRecord> read_all(const std::string& path, bool batches) {
  kmer::SequenceReader reader(path);
  std::vector<kmer::SequenceRecord> out;
  if (batches) {
    std::vector<kmer::SequenceRecord> batch;
    while (reader.next_batch(batch, 3) > 0) {
      out.insert(out.end(), batch.begin(), batch.end());
      batch.clear();
    }
  } else {
    kmer::SequenceRecord rec;
    while (reader.next(rec)) out.push_back(rec);
  }
  if (reader.records_read() != out.size()) dimmap::fuzz::property_failed("records_read() disagrees");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const std::string path = dimmap::fuzz::write_scratch_file("reads", {reinterpret_cast<const char*>(data), size});
  std::vector<kmer::SequenceRecord> one, many;
  bool failed_one = false, failed_many = false;
  try {
    one = read_all(path, false);
  } catch (const dimmap::Error&) {
    failed_one = true;
  }
  try {
    many = read_all(path, true);
  } catch (const dimmap::Error&) {
    failed_many = true;
  }
  if (failed_one != failed_many) property_failed("next() and next_batch() disagree on whether the input is valid");
  if (failed_one) return 0;
  if (one.size() != many.size()) property_failed("next() and next_batch() return different record counts");
  for (size_t i = 0; i < one.size(); ++i) {
    const kmer::SequenceRecord& r = one[i];
    if (r.id != many[i].id || r.sequence != many[i].sequence) property_failed("next() and next_batch() differ");
    if (r.id.find_first_of(" \t\n") != std::string::npos) property_failed("id '" + r.id + "' contains a blank");
    if (r.sequence.find('\n') != std::string::npos) property_failed("sequence contains a line break");
    if (i > 0 && r.line <= one[i - 1].line) property_failed("record lines do not increase");
  }
  return 0;
}
