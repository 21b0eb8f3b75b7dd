// Fuzz target: opening a k-mer database file (header, section table, taxonomy section).
//
// The first input byte picks the mode; the rest is the file:
//   even  the bytes as they are: any truncated or damaged file must end in kmer::Error; a file
//         that opens and verifies (every CRC right) must answer lookups and iterate cleanly;
//   odd   the header CRC and the taxonomy section's CRC are recomputed first, so the fuzzer
//         gets past the checksums into the header's bounds checks and the taxonomy decoder.
//         Lookups are not tried there: a file with forged checksums is outside the contract
//         (open() checks structure, verify() integrity).
#include <kmer/database.hpp>
#include <kmer/db_format.hpp>
#include <kmer/error.hpp>
#include <zlib.h>

#include <cstring>
#include <string>

#include "fuzz_input.hpp"

namespace {

void forge_checksums(std::string& file) {
  if (file.size() < sizeof(kmer::DbHeader)) return;
  kmer::DbHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  const kmer::SectionRef& t = h.sections[kmer::kSectionTaxonomy];
  if (t.offset <= file.size() && t.bytes <= file.size() - t.offset)
    h.sections[kmer::kSectionTaxonomy].crc32 =
        static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(file.data() + t.offset), t.bytes));
  h.header_crc32 = kmer::header_crc(h);
  std::memcpy(file.data(), &h, sizeof h);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool forge = data[0] & 1;
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (forge) forge_checksums(file);
  const std::string path = dimmap::fuzz::write_scratch_file("db", file);
  try {
    kmer::Database db = kmer::Database::open(path);
    if (db.k() == 0 || db.k() > 32) dimmap::fuzz::property_failed("opened a DB with k = " + std::to_string(db.k()));
    if (db.taxonomy().size() == 0) dimmap::fuzz::property_failed("opened a DB without taxa");
    if (forge) return 0;
    db.verify();
    uint64_t listed = 0;
    db.for_each([&](uint64_t kmer, const kmer::TaxaList& taxa) {
      ++listed;
      const kmer::TaxaList again = db.lookup(kmer);
      if (again.size() != taxa.size() || (taxa.size() && again.taxid(0) != taxa.taxid(0)))
        dimmap::fuzz::property_failed("lookup disagrees with for_each for a k-mer in the DB");
    });
    if (listed != db.header().kmer_count) dimmap::fuzz::property_failed("for_each skipped or repeated k-mers");
  } catch (const dimmap::Error&) {
  }
  return 0;
}
