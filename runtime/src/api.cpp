// api.cpp - the C API: instances, the default instance, and the address -> mapping registry.
#include <dimmap/dimmap.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <set>

#include "engine.hpp"
#include "c_boundary.hpp"
#include "log.hpp"

using dimmap::detail::Engine;
using dimmap::detail::fail;

struct dimmap_instance {
  dimmap_config config;
  std::unique_ptr<Engine> engine;
};

namespace {

struct Mapping {
  uintptr_t end;
  dimmap_instance* instance;
};

// Every live mapping by start address, and every live instance (for dimmap_stats).
struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Mapping> mappings;
  std::set<dimmap_instance*> instances;
  std::mutex default_mu;
  dimmap_instance* default_instance = nullptr;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: mappings may outlive static destructors
  return *r;
}

// The mapping containing addr, or nullptr.
const Mapping* find_mapping(Registry& r, uintptr_t addr, uintptr_t* start) {
  auto it = r.mappings.upper_bound(addr);
  if (it == r.mappings.begin()) return nullptr;
  --it;
  if (addr >= it->second.end) return nullptr;
  *start = it->first;
  return &it->second;
}

// The instance one of whose mappings contains addr, or nullptr.
dimmap_instance* instance_at(const void* addr) {
  Registry& r = registry();
  std::shared_lock<std::shared_mutex> lock(r.mu);
  uintptr_t start = 0;
  const Mapping* m = find_mapping(r, reinterpret_cast<uintptr_t>(addr), &start);
  return m ? m->instance : nullptr;
}

// The engine cfg names, started, with DIMMAP_ENGINE_AUTO resolved in cfg; null with *err set
// (and fail() saying why) if it cannot start.
std::unique_ptr<Engine> make_engine(dimmap_config* cfg, int* err) {
  std::unique_ptr<Engine> engine;
  switch (cfg->engine) {
    case DIMMAP_ENGINE_KMOD:
      engine = dimmap::detail::make_kmod_engine(*cfg, err);
      break;
    case DIMMAP_ENGINE_PAGECACHE:
      engine = dimmap::detail::make_pagecache_engine(*cfg, err);
      break;
    case DIMMAP_ENGINE_UFFD:
      engine = dimmap::detail::make_uffd_engine(*cfg, err);
      break;
    case DIMMAP_ENGINE_AUTO:
      cfg->engine = dimmap::detail::auto_engine(*cfg);
      if (cfg->engine == DIMMAP_ENGINE_PAGECACHE) {
        engine = dimmap::detail::make_pagecache_engine(*cfg, err);
      } else {
        if (const char* why = dimmap::detail::pagecache_engine_unsupported())
          dimmap::detail::log(dimmap::detail::LogLevel::info, "%s: using the userfaultfd engine instead", why);
        engine = dimmap::detail::make_uffd_engine(*cfg, err);
      }
      break;
  }
  return engine;
}

}  // namespace

namespace dimmap::detail {

dimmap_engine auto_engine(const dimmap_config& cfg) {
  const bool needs_every_miss = cfg.perma[0] || cfg.in_thread_faults || cfg.service_threads;
  return needs_every_miss || pagecache_engine_unsupported() ? DIMMAP_ENGINE_UFFD : DIMMAP_ENGINE_PAGECACHE;
}

bool buffer_is_page_cache(const dimmap_config& cfg) {
  return (cfg.engine == DIMMAP_ENGINE_AUTO ? auto_engine(cfg) : cfg.engine) == DIMMAP_ENGINE_PAGECACHE;
}

}  // namespace dimmap::detail

namespace {

int get_default_instance(dimmap_instance** out) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.default_mu);
  if (!r.default_instance) {
    dimmap_config cfg;
    if (int rc = dimmap_config_init(&cfg); rc < 0) return rc;
    if (int rc = dimmap_instance_create(&cfg, &r.default_instance); rc < 0) return rc;
  }
  *out = r.default_instance;
  return 0;
}

}  // namespace

extern "C" int dimmap_instance_create(const struct dimmap_config* cfg, struct dimmap_instance** out) {
  return dimmap::detail::guard_status("dimmap_instance_create", [&]() -> int {
    dimmap::detail::clear_error();
    if (!cfg || !out) return fail(EINVAL, "dimmap_instance_create: null argument");
    if (int rc = dimmap_config_validate(cfg); rc < 0) return rc;
    dimmap_config resolved = *cfg;
    int err = 0;
    std::unique_ptr<Engine> engine = make_engine(&resolved, &err);
    if (!engine) return err < 0 ? err : -EIO;
    auto* inst = new dimmap_instance{resolved, std::move(engine)};
    Registry& r = registry();
    std::unique_lock<std::shared_mutex> lock(r.mu);
    r.instances.insert(inst);
    *out = inst;
    return 0;
  });
}

extern "C" int dimmap_instance_destroy(struct dimmap_instance* inst) {
  return dimmap::detail::guard_status("dimmap_instance_destroy", [&]() -> int {
    if (!inst) return 0;
    Registry& r = registry();
    {
      std::unique_lock<std::shared_mutex> lock(r.mu);
      if (inst->engine->mapped_regions() > 0)
        return fail(EBUSY, "buffer still has %zu mapped regions", inst->engine->mapped_regions());
      r.instances.erase(inst);
    }
    {
      std::lock_guard<std::mutex> lock(r.default_mu);
      if (r.default_instance == inst) r.default_instance = nullptr;
    }
    delete inst;
    return 0;
  });
}

extern "C" void* dimmap_instance_mmap(struct dimmap_instance* inst, void* addr, size_t length, int prot, int flags,
                                      int fd, off_t offset) {
  return dimmap::detail::guard_value<void*>("dimmap_instance_mmap", MAP_FAILED, [&]() -> void* {
    dimmap::detail::clear_error();
    if (!inst) {
      errno = -fail(EINVAL, "dimmap_instance_mmap: no instance");
      return MAP_FAILED;
    }
    void* out = nullptr;
    if (int rc = inst->engine->map(addr, length, prot, flags, fd, offset, &out); rc < 0) {
      errno = -rc;
      return MAP_FAILED;
    }
    Registry& r = registry();
    std::unique_lock<std::shared_mutex> lock(r.mu);
    const uintptr_t start = reinterpret_cast<uintptr_t>(out);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    r.mappings[start] = Mapping{start + (length + page - 1) / page * page, inst};
    return out;
  });
}

extern "C" void* dimmap_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return dimmap::detail::guard_value<void*>("dimmap_mmap", MAP_FAILED, [&]() -> void* {
    dimmap::detail::clear_error();
    dimmap_instance* inst = nullptr;
    if (int rc = get_default_instance(&inst); rc < 0) {
      errno = -rc;
      return MAP_FAILED;
    }
    return dimmap_instance_mmap(inst, addr, length, prot, flags, fd, offset);
  });
}

extern "C" int dimmap_munmap(void* addr, size_t length) {
  return dimmap::detail::guard_posix("dimmap_munmap", [&]() -> int {
    dimmap::detail::clear_error();
    Registry& r = registry();
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    dimmap_instance* inst = nullptr;
    {
      std::shared_lock<std::shared_mutex> lock(r.mu);
      uintptr_t start = 0;
      const Mapping* m = find_mapping(r, a, &start);
      if (!m || start != a) {
        errno = -fail(EINVAL, "dimmap_munmap(%p): not the start of a dimmap mapping", addr);
        return -1;
      }
      inst = m->instance;
    }
    if (int rc = inst->engine->unmap(addr, length); rc < 0) {
      errno = -rc;
      return -1;
    }
    std::unique_lock<std::shared_mutex> lock(r.mu);
    r.mappings.erase(a);
    return 0;
  });
}

extern "C" int dimmap_msync(void* addr, size_t length, int flags) {
  return dimmap::detail::guard_posix("dimmap_msync", [&]() -> int {
    dimmap::detail::clear_error();
    dimmap_instance* inst = instance_at(addr);
    if (!inst) {
      errno = -fail(ENOMEM, "dimmap_msync(%p): not in a dimmap mapping", addr);
      return -1;
    }
    if (int rc = inst->engine->sync(addr, length, flags); rc < 0) {
      errno = -rc;
      return -1;
    }
    return 0;
  });
}

extern "C" int dimmap_discard(void* addr, size_t length) {
  return dimmap::detail::guard_status("dimmap_discard", [&]() -> int {
    dimmap::detail::clear_error();
    dimmap_instance* inst = instance_at(addr);
    if (!inst) return fail(ENOMEM, "dimmap_discard(%p): not in a dimmap mapping", addr);
    return inst->engine->discard(addr, length);
  });
}

extern "C" int dimmap_prefetchv(const struct iovec* ranges, size_t count) {
  return dimmap::detail::guard_status("dimmap_prefetchv", [&]() -> int {
    dimmap::detail::clear_error();
    if (count > 0 && !ranges) return fail(EINVAL, "dimmap_prefetchv: null ranges");
    // Consecutive ranges of one buffer go to its engine in one call.
    for (size_t i = 0; i < count;) {
      dimmap_instance* inst = nullptr;
      size_t j = i;
      {
        Registry& r = registry();
        std::shared_lock<std::shared_mutex> lock(r.mu);
        for (; j < count; ++j) {
          uintptr_t start = 0;
          const Mapping* m = find_mapping(r, reinterpret_cast<uintptr_t>(ranges[j].iov_base), &start);
          if (!m) return fail(ENOMEM, "dimmap_prefetch(%p): not in a dimmap mapping", ranges[j].iov_base);
          if (inst && m->instance != inst) break;
          inst = m->instance;
        }
      }
      if (int rc = inst->engine->prefetch(ranges + i, j - i); rc < 0) return rc;
      i = j;
    }
    return 0;
  });
}

extern "C" int dimmap_prefetch(void* addr, size_t length) {
  struct iovec range = {addr, length};
  return dimmap_prefetchv(&range, 1);
}

extern "C" int dimmap_instance_stats(struct dimmap_instance* inst, struct dimmap_stats* out) {
  return dimmap::detail::guard_status("dimmap_instance_stats", [&]() -> int {
    if (!inst || !out) return fail(EINVAL, "dimmap_instance_stats: null argument");
    inst->engine->stats(out);
    return 0;
  });
}

extern "C" enum dimmap_engine dimmap_instance_engine(const struct dimmap_instance* inst) {
  return inst ? inst->config.engine : DIMMAP_ENGINE_AUTO;
}

extern "C" int dimmap_stats(struct dimmap_stats* out) {
  return dimmap::detail::guard_status("dimmap_stats", [&]() -> int {
    if (!out) return fail(EINVAL, "dimmap_stats: null argument");
    std::memset(out, 0, sizeof *out);
    Registry& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    for (dimmap_instance* inst : r.instances) {
      struct dimmap_stats s;
      inst->engine->stats(&s);
      const uint64_t* src = reinterpret_cast<const uint64_t*>(&s);
      uint64_t* dst = reinterpret_cast<uint64_t*>(out);
      for (size_t i = 0; i < sizeof s / sizeof(uint64_t); ++i) dst[i] += src[i];
    }
    return 0;
  });
}

extern "C" int dimmap_stats_for(const void* addr, struct dimmap_stats* out) {
  return dimmap::detail::guard_status("dimmap_stats_for", [&]() -> int {
    Registry& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    uintptr_t start = 0;
    const Mapping* m = find_mapping(r, reinterpret_cast<uintptr_t>(addr), &start);
    if (!m) return fail(ENOENT, "%p is not in a dimmap mapping", addr);
    m->instance->engine->stats(out);
    return 0;
  });
}

extern "C" int dimmap_is_mapped(const void* addr) {
  return dimmap::detail::guard_value<int>("dimmap_is_mapped", 0, [&]() -> int {
    Registry& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    uintptr_t start = 0;
    return find_mapping(r, reinterpret_cast<uintptr_t>(addr), &start) != nullptr;
  });
}
