// mapped_index.cpp - fills libbwa's bwt_t from mapped files instead of bwt_restore_bwt/_sa.
//
// .bwt: the BWT words start right after the 40-byte header, so bwt->bwt points into the map.
// .sa:  bwa keeps sa[0] = -1 in memory but does not store it; the file holds sa[1..] from
//       byte 56. Pointing bwt->sa at byte 48 puts sa[1..] in place and leaves the header's
//       seq_len word as sa[0]. bwt_sa() is exact for either value once its result is taken
//       modulo seq_len + 1 (bwt.c says so next to the -1): libbwa_hooks.cpp does that.
#include <bwammap/mapped_index.hpp>

#include <cstdio>

namespace bwammap {

MappedIndex::MappedIndex(const std::string& prefix, IndexPlacement& plan) : layout_(check_index(prefix)) {
  bwt_file_.emplace(dimmap::Region::open(plan.for_structure(Structure::bwt), prefix + ".bwt", dimmap::Access::read_only));
  sa_file_.emplace(dimmap::Region::open(plan.for_structure(Structure::sa), prefix + ".sa", dimmap::Access::read_only));
  pac_file_.emplace(dimmap::Region::open(plan.for_structure(Structure::pac), prefix + ".pac", dimmap::Access::read_only));

  bwt_.primary = layout_.primary;
  for (int i = 0; i < 5; ++i) bwt_.L2[i] = layout_.L2[i];
  bwt_.seq_len = layout_.seq_len;
  bwt_.bwt_size = layout_.bwt_words;
  bwt_.bwt = reinterpret_cast<uint32_t*>(bwt_file_->as<char>() + kBwtHeaderBytes);
  bwt_gen_cnt_table(&bwt_);
  bwt_.sa_intv = layout_.sa_intv;
  bwt_.n_sa = layout_.n_sa;
  bwt_.sa = reinterpret_cast<bwtint_t*>(sa_file_->as<char>() + kSaHeaderBytes - sizeof(bwtint_t));

  // .ann, .amb (and .alt if present) are small text files: libbwa parses them. It also opens
  // the .pac as a stream, which the mapped copy replaces.
  idx_.bns = bns_restore(prefix.c_str());
  if (idx_.bns->fp_pac) {
    std::fclose(idx_.bns->fp_pac);
    idx_.bns->fp_pac = nullptr;
  }
  idx_.bwt = &bwt_;
  idx_.pac = pac_file_->as<uint8_t>();
}

MappedIndex::~MappedIndex() {
  if (idx_.bns) bns_destroy(idx_.bns);
}

const dimmap::Region& MappedIndex::region(Structure s) const {
  switch (s) {
    case Structure::bwt: return *bwt_file_;
    case Structure::sa: return *sa_file_;
    case Structure::pac: return *pac_file_;
  }
  return *bwt_file_;
}

}  // namespace bwammap
