// sigbus_probe.cpp - see sigbus_probe.hpp.
#include "sigbus_probe.hpp"

#include "pattern.hpp"

#include <setjmp.h>
#include <signal.h>

#include <cstddef>
#include <mutex>

namespace dimmap::reliability {
namespace {

thread_local sigjmp_buf* armed = nullptr;

void on_sigbus(int sig, siginfo_t*, void*) {
  if (armed) siglongjmp(*armed, 1);
  // Not one of ours: die of it as if no handler were installed.
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, nullptr);
  });
}

// Runs f(); false if it raised SIGBUS. f must not hold locks or allocate (it may be abandoned
// half-way by siglongjmp).
template <typename F>
bool guarded(F&& f) {
  install_once();
  sigjmp_buf jb;
  if (sigsetjmp(jb, 1) != 0) {
    armed = nullptr;
    return false;
  }
  armed = &jb;
  f();
  armed = nullptr;
  return true;
}

}  // namespace

bool try_read(const uint64_t* p, uint64_t* out) {
  uint64_t v = 0;
  if (!guarded([&] { v = __atomic_load_n(p, __ATOMIC_RELAXED); })) return false;
  *out = v;
  return true;
}

bool try_write(uint64_t* p, uint64_t v) {
  return guarded([&] { __atomic_store_n(p, v, __ATOMIC_RELAXED); });
}

bool try_fill_page(uint64_t* p, uint64_t page, uint64_t version) {
  return guarded([&] {
    for (size_t w = 0; w < kWordsPerPage; ++w) __atomic_store_n(&p[w], pattern_word(page, w, version), __ATOMIC_RELAXED);
  });
}

}  // namespace dimmap::reliability
