// config.cpp - defaults and DIMMAP_* environment variables for struct dimmap_config.
#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "c_boundary.hpp"
#include "engine.hpp"
#include "log.hpp"
#include "perma.hpp"

using dimmap::detail::fail;

namespace {

int env_double(const char* name, double* out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v, &end);
  if (errno || *end || !std::isfinite(d)) return fail(EINVAL, "%s='%s' is not a number", name, v);
  *out = d;
  return 0;
}

int env_unsigned(const char* name, unsigned* out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  errno = 0;
  unsigned long n = std::strtoul(v, &end, 10);
  if (errno || *end || v[0] == '-' || n > 1u << 20)
    return fail(EINVAL, "%s='%s' is not a count between 0 and %u", name, v, 1u << 20);
  *out = static_cast<unsigned>(n);
  return 0;
}

// Defaults and DIMMAP_* variables; a size or hot fraction the caller gives (not null) is
// used instead of its variable, which is then not read at all.
int init_config(struct dimmap_config* cfg, const uint64_t* given_bytes, const double* given_hot) {
    std::memset(cfg, 0, sizeof *cfg);
    cfg->hot_fraction = 0.75;
    cfg->evict_fraction = 1.0 / 16;
    cfg->evict_batch = 64;
    cfg->io_depth = 128;
    cfg->direct_io = 1;
    cfg->spin_us = 50;
    cfg->readahead_pages = 64;
    cfg->engine = DIMMAP_ENGINE_AUTO;

    const char* v = std::getenv("DIMMAP_BUFFER");
    const bool default_buffer = !given_bytes && !(v && *v);
    if (given_bytes) {
      cfg->buffer_bytes = *given_bytes;
    } else if (v && *v) {
      uint64_t bytes = 0;
      if (dimmap_parse_size(v, &bytes) < 0) {
        std::string why = dimmap_last_error();
        return fail(EINVAL, "DIMMAP_BUFFER='%s': %s", v, why.c_str());
      }
      cfg->buffer_bytes = bytes;
    }
    int rc;
    if (given_hot)
      cfg->hot_fraction = *given_hot;
    else if ((rc = env_double("DIMMAP_HOT_FRACTION", &cfg->hot_fraction)) < 0)
      return rc;
    if ((rc = env_double("DIMMAP_EVICT_FRACTION", &cfg->evict_fraction)) < 0) return rc;
    if ((rc = env_unsigned("DIMMAP_EVICT_BATCH", &cfg->evict_batch)) < 0) return rc;
    if ((rc = env_unsigned("DIMMAP_IO_DEPTH", &cfg->io_depth)) < 0) return rc;
    if ((rc = env_unsigned("DIMMAP_SPIN_US", &cfg->spin_us)) < 0) return rc;
    if ((rc = env_unsigned("DIMMAP_SERVICE_THREADS", &cfg->service_threads)) < 0) return rc;
    if (const char* v = std::getenv("DIMMAP_FAULTS"); v && *v) {
      if (!std::strcmp(v, "server"))
        cfg->in_thread_faults = 0;
      else if (!std::strcmp(v, "in-thread"))
        cfg->in_thread_faults = 1;
      else
        return fail(EINVAL, "DIMMAP_FAULTS='%s' is not 'server' or 'in-thread'", v);
    }
    if ((rc = env_unsigned("DIMMAP_READAHEAD", &cfg->readahead_pages)) < 0) return rc;
    unsigned direct = 1;
    if ((rc = env_unsigned("DIMMAP_DIRECT_IO", &direct)) < 0) return rc;
    cfg->direct_io = direct != 0;
    if (const char* v = std::getenv("DIMMAP_ENGINE"); v && *v) {
      if (!std::strcmp(v, "uffd"))
        cfg->engine = DIMMAP_ENGINE_UFFD;
      else if (!std::strcmp(v, "kmod"))
        cfg->engine = DIMMAP_ENGINE_KMOD;
      else if (!std::strcmp(v, "pagecache"))
        cfg->engine = DIMMAP_ENGINE_PAGECACHE;
      else if (!std::strcmp(v, "auto"))
        cfg->engine = DIMMAP_ENGINE_AUTO;
      else
        return fail(EINVAL, "DIMMAP_ENGINE='%s' is not 'auto', 'pagecache', 'uffd' or 'kmod'", v);
    }
    if (const char* v = std::getenv("DIMMAP_PERMA"); v && *v) {
      if (std::strlen(v) >= sizeof cfg->perma) return fail(EINVAL, "DIMMAP_PERMA='%s' is too long", v);
      std::strcpy(cfg->perma, v);
    }
    // The default depends on the engine the settings above choose (see memory_limit.hpp).
    if (default_buffer)
      cfg->buffer_bytes = dimmap::default_buffer_bytes(dimmap::memory_limit().bytes, dimmap::detail::buffer_is_page_cache(*cfg));
    return dimmap_config_validate(cfg);
}

}  // namespace

extern "C" int dimmap_config_init(struct dimmap_config* cfg) {
  return dimmap::detail::guard_status("dimmap_config_init", [&] { return init_config(cfg, nullptr, nullptr); });
}

namespace dimmap {

bool detail::environment_buffer_is_page_cache() {
  dimmap_config cfg;
  const uint64_t any_size = 1ull << 30;  // given, so that no default is worked out here
  return init_config(&cfg, &any_size, nullptr) == 0 && detail::buffer_is_page_cache(cfg);
}

dimmap_config config_for_buffer(uint64_t bytes, double hot_fraction) {
  dimmap_config cfg;
  const double* hot = hot_fraction >= 0 ? &hot_fraction : nullptr;
  if (init_config(&cfg, &bytes, hot) < 0) throw Error(dimmap_last_error());
  return cfg;
}

}  // namespace dimmap

extern "C" int dimmap_config_validate(const struct dimmap_config* cfg) {
  return dimmap::detail::guard_status("dimmap_config_validate", [&]() -> int {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if (cfg->buffer_bytes / page < DIMMAP_MIN_BUFFER_PAGES)
      return fail(EINVAL, "buffer of %llu bytes is smaller than the minimum of %u pages (%llu bytes)",
                  static_cast<unsigned long long>(cfg->buffer_bytes), DIMMAP_MIN_BUFFER_PAGES,
                  static_cast<unsigned long long>(DIMMAP_MIN_BUFFER_PAGES * page));
    if (cfg->buffer_bytes / page > 0xfffffff0ull)
      return fail(EINVAL, "buffer of %llu bytes has more than 2^32 pages",
                  static_cast<unsigned long long>(cfg->buffer_bytes));
    if (!(cfg->hot_fraction >= 0.0 && cfg->hot_fraction < 1.0))
      return fail(EINVAL, "hot fraction %g must be in [0, 1)", cfg->hot_fraction);
    if (!(cfg->evict_fraction > 0.0 && cfg->evict_fraction < 0.5))
      return fail(EINVAL, "eviction-queue fraction %g must be in (0, 0.5)", cfg->evict_fraction);
    if (cfg->evict_batch < 1 || cfg->evict_batch > 1024)
      return fail(EINVAL, "eviction batch %u must be between 1 and 1024 pages", cfg->evict_batch);
    if (cfg->io_depth < 1 || cfg->io_depth > 4096)
      return fail(EINVAL, "I/O depth %u must be between 1 and 4096", cfg->io_depth);
    if (cfg->readahead_pages > 4096)
      return fail(EINVAL, "read-ahead of %u pages is more than 4096", cfg->readahead_pages);
    if (cfg->engine != DIMMAP_ENGINE_UFFD && cfg->engine != DIMMAP_ENGINE_KMOD && cfg->engine != DIMMAP_ENGINE_PAGECACHE &&
        cfg->engine != DIMMAP_ENGINE_AUTO)
      return fail(EINVAL, "unknown engine %d", static_cast<int>(cfg->engine));
    if (std::memchr(cfg->perma, '\0', sizeof cfg->perma) == nullptr)
      return fail(EINVAL, "PerMA model string is not terminated");
    if (cfg->perma[0] && cfg->engine == DIMMAP_ENGINE_PAGECACHE)
      return fail(EINVAL, "the PerMA latency model needs the userfaultfd engine (DIMMAP_ENGINE=uffd), which sees every miss");
    if (cfg->perma[0]) {
      perma_model m;
      if (int rc = dimmap::detail::parse_perma(cfg->perma, &m); rc < 0) return rc;
    }
    return 0;
  });
}
