// placement_plan.cpp - --placement presets on top of the shared dimmap placement flags.
#include <bwammap/placement_plan.hpp>

namespace bwammap {

const char* to_string(Structure s) {
  switch (s) {
    case Structure::bwt: return "bwt";
    case Structure::sa: return "sa";
    case Structure::pac: return "pac";
  }
  return "?";
}

void PlacementPlan::add_to(CLI::App& app) {
  app.add_option("--placement", preset_,
                 "Where the big arrays live: memory, mmap, dimmap, full-external or semi-external "
                 "(full/semi-external use --backend; semi-external keeps .pac in RAM)")
      ->check(CLI::IsMember({"memory", "in-memory", "mmap", "dimmap", "full-external", "semi-external"}))
      ->capture_default_str()
      ->group("Placement");
  flags_.add_to(app);
  for (const char* name : {"--backend", "--storage", "--memory-dir", "--buffer", "--hot-fraction",
                           "--dontneed-interval"})
    if (CLI::Option* opt = app.get_option_no_throw(name)) opt->group("Placement");
  storage_option_ = app.get_option_no_throw("--storage");
}

dimmap::Backend PlacementPlan::backend_for(Structure s) const {
  if (preset_ == "memory" || preset_ == "in-memory") return dimmap::Backend::memory;
  if (preset_ == "mmap") return dimmap::Backend::mmap;
  if (preset_ == "dimmap") return dimmap::Backend::dimmap;
  if (preset_ == "semi-external" && s == Structure::pac) return dimmap::Backend::memory;
  return dimmap::parse_backend(flags_.backend);  // full-external, semi-external bwt/sa
}

dimmap::Placement PlacementPlan::make(dimmap::Backend backend, const std::string& storage_dir) {
  switch (backend) {
    case dimmap::Backend::memory:
      return flags_.memory_placement();
    case dimmap::Backend::mmap: {
      dimmap::Placement p = dimmap::Placement::mmap(storage_dir);
      p.dontneed_interval_s = flags_.dontneed_interval;
      return p;
    }
    case dimmap::Backend::dimmap:
      if (!buffer_) buffer_ = flags_.shared_buffer();
      return dimmap::Placement::dimmap(storage_dir, buffer_);
  }
  return flags_.memory_placement();
}

dimmap::Placement PlacementPlan::for_index(const std::string& default_storage_dir) {
  if (preset_ == "semi-external")
    throw dimmap::Error(
        "--placement=semi-external applies to 'bwa-mmap mem' (.pac in RAM, .bwt and .sa on storage); "
        "index construction puts all its big arrays on one placement: use memory, mmap, dimmap or "
        "full-external");
  const bool storage_given = storage_option_ && storage_option_->count() > 0;
  return make(backend_for(Structure::bwt), storage_given ? flags_.storage : default_storage_dir);
}

dimmap::Placement PlacementPlan::for_structure(Structure s) {
  // mem maps the index files where they are; the storage directory is not used.
  return make(backend_for(s), flags_.storage);
}

}  // namespace bwammap
