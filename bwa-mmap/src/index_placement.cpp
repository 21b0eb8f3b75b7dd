// index_placement.cpp - bwa's index arrays on the runtime's placement plan.
#include <bwammap/index_placement.hpp>

#include <dimmap/cli.hpp>

namespace bwammap {

const char* to_string(Structure s) {
  switch (s) {
    case Structure::bwt: return "bwt";
    case Structure::sa: return "sa";
    case Structure::pac: return "pac";
  }
  return "?";
}

IndexPlacement::IndexPlacement()
    : plan_(std::make_unique<dimmap::PlacementPlan>(
          std::vector<dimmap::Structure>{{"bwt"}, {"sa"}, {"pac", /*memory_when_semi_external=*/true}},
          dimmap::Preset::full_external)) {}

void IndexPlacement::add_to(CLI::App& app, bool per_array) {
  using namespace dimmap::cli;
  add_placement_options(app, *plan_, per_array ? kAllPlacementOptions : kAllPlacementOptions & ~kPlaceEach);
}

dimmap::Placement IndexPlacement::for_index(const std::string& default_storage_dir) {
  if (plan_->preset() == dimmap::Preset::semi_external)
    throw dimmap::Error(
        "--placement=semi-external applies to 'bwa-mmap mem' (.pac in RAM, .bwt and .sa on storage); "
        "index construction puts all its big arrays on one placement: use in-memory or full-external "
        "(or the aliases memory, mmap, dimmap)");
  if (plan_->preset() == dimmap::Preset::in_memory) return plan_->memory_placement();
  dimmap::Placement p = plan_->storage_placement();
  if (!plan_->storage_given()) p.dir = default_storage_dir;
  return p;
}

dimmap::Placement IndexPlacement::for_structure(Structure s) {
  // mem maps the index files where they are; the storage directory is not used.
  return plan_->placement_of(to_string(s));
}

}  // namespace bwammap
