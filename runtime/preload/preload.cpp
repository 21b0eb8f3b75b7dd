// preload.cpp - libdimmap-preload.so: an unmodified program's big heap allocations on a
// placement (see dimmap-run), and the state it shares with the --files overlay of mapped
// files (file_overlay.cpp).
//
// Every malloc-family call of at least DIMMAP_RUN_MIN_ALLOC bytes is served by a mapping of
// its own (backing.hpp) or by the HPMMAP arena; smaller ones go to glibc's allocator through
// its __libc_* entry points, so nothing here needs dlsym (which itself allocates) to reach
// the real heap. Rules that keep this safe:
//   - t_depth > 0 while preload or runtime code runs on a thread: allocations then always go
//     to the normal heap, so libdimmap's own allocations never recurse into a placement;
//     threads libdimmap starts from inside the preload are marked the same way for life
//     (pthread_create below), so the engine's fault server never allocates from itself.
//   - The block table (block_table.hpp) uses mmap'd storage and one mutex, never malloc.
//   - fork(): the table and arena locks are taken around fork. In the child, dimmap blocks
//     are not mapped (libdimmap marks them MADV_DONTFORK: no fault server would serve them
//     there): their ranges become inaccessible placeholders that free() releases; new big
//     allocations of a forked child use the mmap placement in the same directory. File blocks (mmap, memory on tmpfs)
//     stay MAP_SHARED, so parent and child see each other's writes to them; anonymous and
//     arena blocks are copy-on-write as usual.
//   - exec(): the environment carries the configuration, so exec'd programs get a fresh
//     preload (nothing of the old process's state survives exec).
#include <dimmap/dimmap.h>
#include <dimmap/hpmmap.h>
#include <dimmap/support/stats_text.hpp>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "backing.hpp"
#include "block_table.hpp"
#include "file_overlay.hpp"
#include "preload_config.hpp"
#include "preload_state.hpp"

extern "C" {
// glibc's allocator under its internal names: reaching them needs no dlsym.
void* __libc_malloc(size_t size);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace dimmap::preload {

thread_local int t_depth __attribute__((tls_model("initial-exec"))) = 0;

namespace {

struct Counters {
  std::atomic<uint64_t> allocs{0}, frees{0}, live_bytes{0}, peak_bytes{0}, failures{0}, fallbacks{0};
};

// Constant-initialised and trivially destructible: usable before any constructor runs and
// after exit() started, when other threads may still call free().
struct State {
  std::atomic<bool> ready{false};
  pthread_once_t once = PTHREAD_ONCE_INIT;
  PreloadConfig cfg;
  bool active = false;  // a placement is configured
  std::atomic<bool> forked_child{false};
  BlockTable table;
  std::atomic<size_t> live_blocks{0};  // lets free() skip the table lock while it is empty
  std::atomic<dimmap_hpmmap_arena*> arena{nullptr};
  std::mutex arena_mu;
  bool arena_failed = false;
  std::mutex dimmap_mu;
  dimmap_instance* dimmap = nullptr;
  bool dimmap_failed = false;
  std::atomic<bool> fallback_warned{false};
  Counters count;
  OverlayTable overlay;  // files under --files mapped through the dimmap buffer
};
static_assert(std::is_trivially_destructible_v<State>, "the state must survive exit()");

State g;  // NOLINT: the one instance

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void init_once() {
  Guard guard;
  char err[512];
  if (!read_preload_config(&g.cfg, err, sizeof err)) {
    report("%s", err);
    _exit(2);  // misconfigured by hand (dimmap-run validates): refuse rather than guess
  }
  g.active = g.cfg.placement != PlacementKind::none;
}

}  // namespace

void ensure_init() {
  if (__builtin_expect(!g.ready.load(std::memory_order_acquire), 0)) {
    pthread_once(&g.once, init_once);
    g.ready.store(true, std::memory_order_release);
  }
}

const PreloadConfig& config() { return g.cfg; }
bool in_forked_child() { return g.forked_child.load(std::memory_order_relaxed); }
OverlayTable& overlay_table() { return g.overlay; }

// One line to stderr, written at once (no stdio buffering that could allocate or tear).
void report(const char* fmt, ...) {
  char line[2048];  // room for the stats line with every counter
  int n = std::snprintf(line, sizeof line, "dimmap-run[%d]: ", static_cast<int>(getpid()));
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  va_end(ap);
  std::strcat(line, "\n");
  ssize_t rc = write(STDERR_FILENO, line, std::strlen(line));
  (void)rc;
}

namespace {

inline bool wants_big(size_t n) { return g.active && t_depth == 0 && n >= g.cfg.min_alloc; }

inline bool page_aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & (page_size() - 1)) == 0; }

dimmap_hpmmap_arena* get_arena() {
  if (dimmap_hpmmap_arena* a = g.arena.load(std::memory_order_acquire)) return a;
  std::lock_guard<std::mutex> lock(g.arena_mu);
  if (g.arena_failed) return nullptr;
  if (dimmap_hpmmap_arena* a = g.arena.load(std::memory_order_relaxed)) return a;
  dimmap_hpmmap_options opt;
  dimmap_hpmmap_options_init(&opt);
  opt.bytes = g.cfg.arena_bytes;
  opt.pages = g.cfg.huge_pages;
  dimmap_hpmmap_arena* a = nullptr;
  if (dimmap_hpmmap_create(&opt, &a) < 0) {
    report("cannot reserve the HPMMAP arena: %s; big allocations use the normal heap", dimmap_last_error());
    g.arena_failed = true;
    return nullptr;
  }
  g.arena.store(a, std::memory_order_release);
  return a;
}

}  // namespace

dimmap_instance* get_dimmap() {
  std::lock_guard<std::mutex> lock(g.dimmap_mu);
  if (g.dimmap || g.dimmap_failed) return g.dimmap;
  dimmap_config cfg;
  if (dimmap_config_init(&cfg) < 0 || dimmap_instance_create(&cfg, &g.dimmap) < 0) {
    report("cannot create the DI-MMAP buffer: %s", dimmap_last_error());
    g.dimmap_failed = true;
    g.dimmap = nullptr;
  }
  return g.dimmap;
}

namespace {

void count_alloc(size_t bytes) {
  g.count.allocs.fetch_add(1, std::memory_order_relaxed);
  const uint64_t live = g.count.live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = g.count.peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g.count.peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void count_free(size_t bytes) {
  g.count.frees.fetch_add(1, std::memory_order_relaxed);
  g.count.live_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

void* heap_alloc(size_t size, size_t align, bool zero) {
  void* p = align <= 16 ? __libc_malloc(size) : __libc_memalign(align, size);
  if (p && zero) std::memset(p, 0, size);
  return p;
}

// A big allocation on the configured placement. NULL with errno ENOMEM on failure.
void* big_alloc(size_t size, size_t align, bool zero) {
  Guard guard;
  if (g.cfg.placement == PlacementKind::hpmmap) {
    if (dimmap_hpmmap_arena* a = get_arena()) {
      if (void* p = dimmap_hpmmap_alloc(a, size, align)) {
        if (zero) std::memset(p, 0, size);  // reused arena memory is not zero
        count_alloc(dimmap_hpmmap_usable_size(a, p));
        return p;
      }
    }
    // Outside the arena the program still runs, only without HPMMAP's guarantees: say so once.
    g.count.fallbacks.fetch_add(1, std::memory_order_relaxed);
    if (!g.fallback_warned.exchange(true))
      report("%s: this and later allocations that miss the arena use the normal heap (raise --buffer)",
             g.arena.load() ? dimmap_last_error() : "no HPMMAP arena");
    return heap_alloc(size, align, zero);
  }

  BlockKind kind = BlockKind::file;
  dimmap_instance* inst = nullptr;
  if (g.cfg.placement == PlacementKind::memory && !g.cfg.dir[0]) kind = BlockKind::anonymous;
  if (g.cfg.placement == PlacementKind::dimmap && !g.forked_child.load(std::memory_order_relaxed)) {
    inst = get_dimmap();
    if (!inst) {
      g.count.failures.fetch_add(1, std::memory_order_relaxed);
      errno = ENOMEM;
      return nullptr;
    }
    kind = BlockKind::dimmap;
  }
  Block b;
  char err[600];
  if (int rc = map_block(kind, g.cfg.dir, inst, size, align, &b, err, sizeof err); rc != 0) {
    g.count.failures.fetch_add(1, std::memory_order_relaxed);
    report("allocation of %zu bytes failed: %s", size, err);
    errno = ENOMEM;
    return nullptr;
  }
  if (!g.table.insert(b)) {
    unmap_block(b, err, sizeof err);
    g.count.failures.fetch_add(1, std::memory_order_relaxed);
    report("allocation of %zu bytes failed: the block table cannot grow", size);
    errno = ENOMEM;
    return nullptr;
  }
  g.live_blocks.fetch_add(1, std::memory_order_release);
  count_alloc(b.usable);
  return reinterpret_cast<void*>(b.user);
}

void release_block(const Block& b) {
  Guard guard;
  g.live_blocks.fetch_sub(1, std::memory_order_relaxed);
  count_free(b.usable);
  char err[600];
  if (unmap_block(b, err, sizeof err) != 0) report("free: %s", err);
}

inline dimmap_hpmmap_arena* arena_of(const void* p) {
  dimmap_hpmmap_arena* a = g.arena.load(std::memory_order_acquire);
  return a && dimmap_hpmmap_contains(a, p) ? a : nullptr;
}

inline bool find_block(const void* p, Block* b) {
  return g.live_blocks.load(std::memory_order_acquire) && page_aligned(p) &&
         g.table.find(reinterpret_cast<uintptr_t>(p), b);
}

[[noreturn]] void invalid_pointer(const char* fn, const void* p) {
  report("%s(%p): not a live allocation of the HPMMAP arena (double free?)", fn, p);
  abort();
}

void* aligned_impl(size_t align, size_t size) {
  ensure_init();
  if (wants_big(size)) return big_alloc(size, align, false);
  return __libc_memalign(align, size);
}

size_t real_usable_size(void* p) {
  using Fn = size_t (*)(void*);
  static Fn fn = [] {
    Guard guard;  // dlsym may allocate
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
  }();
  return fn ? fn(p) : 0;
}

// ---- fork ----

void before_fork() {
  g.arena_mu.lock();
  g.dimmap_mu.lock();
  g.table.lock_for_fork();
  g.overlay.lock_for_fork();
}

void after_fork_parent() {
  g.overlay.unlock_after_fork();
  g.table.unlock_after_fork();
  g.dimmap_mu.unlock();
  g.arena_mu.unlock();
}

void after_fork_child() {
  g.table.for_each_locked(make_inherited_placeholder);
  g.overlay.remap_with_linux_locked();  // the child has no fault server: Linux maps those files
  g.forked_child.store(true);
  g.count.allocs = 0;  // this process's own statistics start now
  g.count.frees = 0;
  g.count.failures = 0;
  g.count.fallbacks = 0;
  after_fork_parent();
}

// ---- start and exit ----

bool is_leader() { return g.cfg.leader_pid > 0 && g.cfg.leader_pid == static_cast<long>(getpid()); }

__attribute__((constructor)) void preload_start() {
  ensure_init();
  if (!g.active && !g.cfg.files[0]) return;
  Guard guard;
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  // HPMMAP reserves on request at start: the command dimmap-run launched pays for the whole
  // arena now, so its later accesses take no faults. Descendants reserve on first use.
  if (g.cfg.placement == PlacementKind::hpmmap && is_leader()) get_arena();
}

__attribute__((destructor)) void preload_exit() {
  if ((!g.active && !g.cfg.files[0]) || !g.cfg.stats) return;
  const OverlayCounters files = g.overlay.counters();
  if (g.count.allocs.load() == 0 && files.mapped == 0 && !is_leader()) return;
  Guard guard;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  char extra[1024] = "";
  if (dimmap_hpmmap_arena* a = g.arena.load()) {
    struct dimmap_hpmmap_stats s;
    dimmap_hpmmap_stats(a, &s);
    std::snprintf(extra, sizeof extra, " arena=%llu pages=%s huge_pages=%llu/%llu locked=%d setup_s=%.3f",
                  static_cast<unsigned long long>(s.bytes_reserved), dimmap_hpmmap_pages_name(s.pages),
                  static_cast<unsigned long long>(s.huge_pages),
                  static_cast<unsigned long long>(s.bytes_reserved >> 21), s.locked, s.setup_ns / 1e9);
  } else if (g.dimmap) {
    struct dimmap_stats s;
    dimmap_instance_stats(g.dimmap, &s);
    extra[0] = ' ';
    dimmap::support::format_stats_fields(extra + 1, sizeof extra - 1, s, "dimmap_");
  }
  char file_part[256] = "";
  if (g.cfg.files[0])
    std::snprintf(file_part, sizeof file_part, " file_maps=%llu file_maps_left_to_linux=%llu",
                  static_cast<unsigned long long>(files.mapped), static_cast<unsigned long long>(files.left_to_linux));
  report("stats placement=%s big_allocs=%llu big_frees=%llu peak_bytes=%llu failures=%llu fallbacks=%llu%s "
         "minflt=%ld majflt=%ld%s",
         placement_name(g.cfg.placement), static_cast<unsigned long long>(g.count.allocs.load()),
         static_cast<unsigned long long>(g.count.frees.load()),
         static_cast<unsigned long long>(g.count.peak_bytes.load()),
         static_cast<unsigned long long>(g.count.failures.load()),
         static_cast<unsigned long long>(g.count.fallbacks.load()), file_part, ru.ru_minflt, ru.ru_majflt, extra);
}

// ---- threads started by the runtime ----

struct ThreadStart {
  void* (*fn)(void*);
  void* arg;
};

void* runtime_thread(void* p) {
  ThreadStart s = *static_cast<ThreadStart*>(p);
  __libc_free(p);
  t_depth = 1;  // for life: a runtime thread allocates from the normal heap only
  return s.fn(s.arg);
}

}  // namespace
}  // namespace dimmap::preload

using namespace dimmap::preload;  // NOLINT: the C entry points below

EXPORT void* malloc(size_t size) noexcept {
  ensure_init();
  if (wants_big(size)) return big_alloc(size, 0, false);
  return __libc_malloc(size);
}

EXPORT void free(void* p) noexcept {
  if (!p) return;
  if (dimmap_hpmmap_arena* a = arena_of(p)) {
    Guard guard;
    const size_t bytes = dimmap_hpmmap_usable_size(a, p);
    if (dimmap_hpmmap_free(a, p) != 0) invalid_pointer("free", p);
    count_free(bytes);
    return;
  }
  Block b;
  if (g.live_blocks.load(std::memory_order_acquire) && page_aligned(p) &&
      g.table.remove(reinterpret_cast<uintptr_t>(p), &b)) {
    release_block(b);
    return;
  }
  __libc_free(p);
}

EXPORT void* calloc(size_t n, size_t size) noexcept {
  ensure_init();
  size_t total = 0;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (wants_big(total)) return big_alloc(total, 0, true);  // fresh mappings are zero already
  return __libc_calloc(n, size);
}

EXPORT void* realloc(void* p, size_t size) noexcept {
  ensure_init();
  if (!p) return malloc(size);
  size_t old = 0;
  bool ours = false;
  Block b;
  if (dimmap_hpmmap_arena* a = arena_of(p)) {
    old = dimmap_hpmmap_usable_size(a, p);
    if (!old) invalid_pointer("realloc", p);
    ours = true;
  } else if (find_block(p, &b)) {
    if (b.kind == BlockKind::inherited_dimmap && size) {
      report("realloc(%p): a dimmap block of the parent process is not mapped in this forked child", p);
      errno = ENOMEM;
      return nullptr;
    }
    old = b.usable;
    ours = true;
  }
  if (ours) {
    if (size == 0) {  // as glibc: free and return NULL
      free(p);
      return nullptr;
    }
    if (size <= old && wants_big(size)) return p;  // still big and it fits: keep it in place
    void* q = malloc(size);                        // big or small, whichever size now asks for
    if (!q) return nullptr;
    std::memcpy(q, p, old < size ? old : size);
    free(p);
    return q;
  }
  if (wants_big(size)) {  // a heap block grows past the threshold
    old = real_usable_size(p);
    void* q = big_alloc(size, 0, false);
    if (!q) return nullptr;
    std::memcpy(q, p, old < size ? old : size);
    __libc_free(p);
    return q;
  }
  return __libc_realloc(p, size);
}

EXPORT void* reallocarray(void* p, size_t n, size_t size) noexcept {
  size_t total = 0;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, total);
}

EXPORT int posix_memalign(void** out, size_t align, size_t size) noexcept {
  if (align < sizeof(void*) || (align & (align - 1))) return EINVAL;
  const int saved = errno;  // posix_memalign reports through its result, not errno
  void* p = aligned_impl(align, size);
  if (!p) {
    errno = saved;
    return ENOMEM;
  }
  *out = p;
  return 0;
}

EXPORT void* aligned_alloc(size_t align, size_t size) noexcept {
  if (align == 0 || (align & (align - 1))) {
    errno = EINVAL;
    return nullptr;
  }
  return aligned_impl(align, size);
}

EXPORT void* memalign(size_t align, size_t size) noexcept {
  if (align & (align - 1)) {  // glibc rounds a non-power of two up
    size_t a = 1;
    while (a < align && a) a <<= 1;
    if (!a) {
      errno = EINVAL;
      return nullptr;
    }
    align = a;
  }
  return aligned_impl(align, size);
}

EXPORT void* valloc(size_t size) noexcept { return aligned_impl(page_size(), size); }

EXPORT void* pvalloc(size_t size) noexcept {
  const size_t page = page_size();
  const size_t rounded = size ? (size + page - 1) / page * page : page;
  if (rounded < size) {
    errno = ENOMEM;
    return nullptr;
  }
  return aligned_impl(page, rounded);
}

EXPORT size_t malloc_usable_size(void* p) noexcept {
  if (!p) return 0;
  if (dimmap_hpmmap_arena* a = arena_of(p)) return dimmap_hpmmap_usable_size(a, p);
  Block b;
  if (find_block(p, &b)) return b.usable;
  return real_usable_size(p);
}

EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) noexcept {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Fn real = [] {
    Guard guard;
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  }();
  if (!real) return EAGAIN;
  if (t_depth == 0) return real(thread, attr, start, arg);
  // Started by the runtime from inside the preload (e.g. the DI-MMAP fault server).
  auto* s = static_cast<ThreadStart*>(__libc_malloc(sizeof(ThreadStart)));
  if (!s) return EAGAIN;
  *s = ThreadStart{start, arg};
  const int rc = real(thread, attr, runtime_thread, s);
  if (rc != 0) __libc_free(s);
  return rc;
}
