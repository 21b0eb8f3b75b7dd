// placement_plan.cpp - settings (flag, else DIMMAP_* variable, else default) -> placements.
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement_plan.hpp>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace dimmap {
namespace {

const SettingInfo kSettings[] = {
    {"--placement", "DIMMAP_PLACEMENT",
     "Where the data structures live: in-memory, semi-external or full-external (aliases: memory, "
     "external = full-external, mmap|dimmap = full-external on that backend)"},
    {"--backend", "DIMMAP_BACKEND", "What 'on storage' means: mmap (Linux page cache) or dimmap (DI-MMAP buffer) [mmap]"},
    {"--buffer", "DIMMAP_BUFFER",
     "DI-MMAP buffer size shared by every dimmap structure, e.g. 256M, 4G [7/8 of the memory limit (cgroup or "
     "MemAvailable; half with DIMMAP_ENGINE=uffd), at most 256M]"},
    {"--hot-fraction", "DIMMAP_HOT_FRACTION", "Share of the DI-MMAP buffer for the hot-page FIFO, in [0,1) [0.75]"},
    {"--storage", "DIMMAP_STORAGE", "Directory for files on storage; %r = MPI rank"},
    {"--memory-dir", "DIMMAP_MEMORY_DIR", "tmpfs directory for in-memory files; 'anonymous' = anonymous memory; %r = MPI rank [/dev/shm]"},
    {"--dontneed-interval", "DIMMAP_DONTNEED_INTERVAL",
     "mmap backend: MADV_DONTNEED on read-only structures every S seconds, 0 = off [0]"},
    {"--place-", nullptr, "Move one structure: memory, storage (= --backend), mmap or dimmap"},
};

bool one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (text == w) return true;
  return false;
}

// The effective text of a setting and what gave it ("--buffer", "DIMMAP_BUFFER"), or nothing.
struct Given {
  std::string text;
  std::string source;
};
std::optional<Given> pick(Setting setting, const std::string& flag_text) {
  const SettingInfo& info = setting_info(setting);
  if (!flag_text.empty()) return Given{flag_text, info.flag};
  if (info.variable)
    if (const char* v = std::getenv(info.variable); v && *v) return Given{v, info.variable};
  return std::nullopt;
}

void check(Setting setting, const Given& given) {
  const std::string why = check_setting(setting, given.text);
  if (!why.empty()) throw Error(given.source + ": " + why);
}

std::string with_rank(std::string dir, int rank) {
  if (rank < 0) return dir;
  for (size_t at; (at = dir.find("%r")) != std::string::npos;) dir.replace(at, 2, std::to_string(rank));
  return dir;
}

}  // namespace

const char* to_string(Preset preset) {
  switch (preset) {
    case Preset::in_memory: return "in-memory";
    case Preset::semi_external: return "semi-external";
    case Preset::full_external: return "full-external";
  }
  return "?";
}

const SettingInfo& setting_info(Setting setting) { return kSettings[static_cast<size_t>(setting)]; }

std::string check_setting(Setting setting, std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  switch (setting) {
    case Setting::placement:
      if (one_of(text, {"in-memory", "memory", "semi-external", "full-external", "external", "mmap", "dimmap"})) return "";
      return quoted + " is not in-memory, semi-external or full-external (nor an alias: memory, external, mmap, dimmap)";
    case Setting::backend:
      return one_of(text, {"mmap", "dimmap"}) ? "" : quoted + " is not mmap or dimmap";
    case Setting::buffer: {
      uint64_t bytes = 0;
      if (dimmap_parse_size(std::string(text).c_str(), &bytes) < 0) return dimmap_last_error();
      return bytes ? "" : "size " + quoted + " must be larger than 0";
    }
    case Setting::hot_fraction: {
      const std::string s(text);
      char* end = nullptr;
      const double f = std::strtod(s.c_str(), &end);
      if (s.empty() || *end || !(f >= 0.0 && f < 1.0)) return quoted + " is not a number in [0,1)";
      return "";
    }
    case Setting::storage:
      return text.empty() ? "an empty directory name" : "";
    case Setting::memory_dir:
      return "";
    case Setting::dontneed_interval: {
      if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string_view::npos)
        return quoted + " is not a whole number of seconds";
      return "";
    }
    case Setting::place:
      return one_of(text, {"memory", "storage", "mmap", "dimmap"}) ? "" : quoted + " is not memory, storage, mmap or dimmap";
  }
  return "unknown setting";
}

struct PlacementPlan::Resolved {
  Preset preset = Preset::full_external;
  Backend backend = Backend::mmap;
  std::string storage, memory_dir;
  bool storage_given = false;
  double hot_fraction = -1.0;  // < 0: libdimmap's default
  unsigned dontneed_interval = 0;
  std::map<std::string, std::string> place;
};

PlacementPlan::PlacementPlan(std::vector<Structure> structures, Preset default_preset, std::string default_storage)
    : structures_(std::move(structures)), default_preset_(default_preset), default_storage_(std::move(default_storage)) {}

PlacementPlan::~PlacementPlan() = default;

void PlacementPlan::validate() {
  resolved_.reset();
  auto r = std::make_unique<Resolved>();
  r->preset = default_preset_;
  std::optional<Backend> preset_backend;  // from the mmap/dimmap aliases
  if (auto g = pick(Setting::placement, settings_.placement)) {
    check(Setting::placement, *g);
    const std::string& p = g->text;
    if (p == "in-memory" || p == "memory") r->preset = Preset::in_memory;
    else if (p == "semi-external") r->preset = Preset::semi_external;
    else r->preset = Preset::full_external;
    if (p == "mmap") preset_backend = Backend::mmap;
    if (p == "dimmap") preset_backend = Backend::dimmap;
  }
  if (auto g = pick(Setting::backend, settings_.backend)) {
    check(Setting::backend, *g);
    r->backend = parse_backend(g->text);
    if (preset_backend && *preset_backend != r->backend)
      throw Error("--placement=" + std::string(to_string(*preset_backend)) + " means full-external on " +
                  to_string(*preset_backend) + ", which " + g->source + "=" + g->text + " contradicts");
  }
  if (preset_backend) r->backend = *preset_backend;
  if (auto g = pick(Setting::buffer, settings_.buffer)) check(Setting::buffer, *g);
  if (auto g = pick(Setting::hot_fraction, settings_.hot_fraction)) {
    check(Setting::hot_fraction, *g);
    r->hot_fraction = std::strtod(g->text.c_str(), nullptr);
  }
  r->storage = default_storage_;
  if (auto g = pick(Setting::storage, settings_.storage)) {
    check(Setting::storage, *g);
    r->storage = g->text;
    r->storage_given = true;
  }
  r->memory_dir = "/dev/shm";
  if (!settings_.memory_dir.empty()) {
    r->memory_dir = settings_.memory_dir;
  } else if (const char* v = std::getenv("DIMMAP_MEMORY_DIR")) {
    r->memory_dir = v;  // set but empty: anonymous memory, as --memory-dir=''
  }
  if (r->memory_dir == "anonymous") r->memory_dir.clear();
  if (auto g = pick(Setting::dontneed_interval, settings_.dontneed_interval)) {
    check(Setting::dontneed_interval, *g);
    r->dontneed_interval = static_cast<unsigned>(std::strtoul(g->text.c_str(), nullptr, 10));
  }
  for (const auto& [name, where] : settings_.place) {
    if (where.empty()) continue;
    bool declared = false;
    for (const Structure& s : structures_) declared |= s.name == name;
    if (!declared) throw Error("--place-" + name + ": no structure called '" + name + "'");
    check(Setting::place, Given{where, "--place-" + name});
    r->place[name] = where;
  }
  r->storage = with_rank(r->storage, rank_);
  r->memory_dir = with_rank(r->memory_dir, rank_);
  resolved_ = std::move(r);
}

void PlacementPlan::set_rank(int rank) {
  rank_ = rank;
  resolved_.reset();
}

const PlacementPlan::Resolved& PlacementPlan::resolved() {
  if (!resolved_) validate();
  return *resolved_;
}

Preset PlacementPlan::preset() { return resolved().preset; }
Backend PlacementPlan::backend() { return resolved().backend; }
const std::string& PlacementPlan::storage_dir() { return resolved().storage; }
bool PlacementPlan::storage_given() { return resolved().storage_given; }
const std::string& PlacementPlan::memory_dir() { return resolved().memory_dir; }
double PlacementPlan::hot_fraction() { return resolved().hot_fraction; }

uint64_t PlacementPlan::buffer_bytes() {
  if (!buffer_bytes_) {
    resolved();  // a bad DIMMAP_BUFFER is reported as a setting error first
    const BufferChoice choice = choose_buffer(settings_.buffer, memory_limit());
    if (!choice.warning.empty()) std::fprintf(stderr, "%s: warning: %s\n", tool_.c_str(), choice.warning.c_str());
    if (settings_.buffer.empty())
      std::fprintf(stderr, "%s: DI-MMAP buffer %s: %s\n", tool_.c_str(), format_size(choice.bytes).c_str(),
                   choice.why.c_str());
    buffer_bytes_ = choice.bytes;
  }
  return *buffer_bytes_;
}

std::shared_ptr<Buffer> PlacementPlan::shared_buffer() {
  if (!buffer_) buffer_ = Buffer::create(buffer_bytes(), resolved().hot_fraction);
  return buffer_;
}

Placement PlacementPlan::memory_placement() {
  const std::string& dir = resolved().memory_dir;
  return dir.empty() ? Placement::anonymous() : Placement::memory(dir);
}

Placement PlacementPlan::storage_placement() {
  // Not a declared structure: the caller decides what the file holds, so the madvise helper
  // applies as for read-only data.
  return make("storage", Structure{"", false, /*read_only=*/true});
}

Placement PlacementPlan::make(const std::string& where, const Structure& s) {
  const Resolved& r = resolved();
  if (where == "memory") return memory_placement();
  Backend backend = r.backend;
  if (where == "mmap") backend = Backend::mmap;
  if (where == "dimmap") backend = Backend::dimmap;
  if (backend == Backend::dimmap) return Placement::dimmap(r.storage, shared_buffer());
  Placement p = Placement::mmap(r.storage);
  // MADV_DONTNEED would throw away unwritten changes of read-write data.
  if (s.read_only) p.dontneed_interval_s = r.dontneed_interval;
  return p;
}

Placement PlacementPlan::placement_of(std::string_view structure) {
  const Resolved& r = resolved();
  for (const Structure& s : structures_) {
    if (s.name != structure) continue;
    if (auto it = r.place.find(s.name); it != r.place.end()) return make(it->second, s);
    switch (r.preset) {
      case Preset::in_memory: return make("memory", s);
      case Preset::semi_external: return make(s.memory_when_semi_external ? "memory" : "storage", s);
      case Preset::full_external: return make("storage", s);
    }
  }
  throw Error("no data structure called '" + std::string(structure) + "' in this placement plan");
}

}  // namespace dimmap
