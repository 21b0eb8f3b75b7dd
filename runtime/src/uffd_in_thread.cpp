// uffd_in_thread.cpp - in-thread fault service (DIMMAP_FAULTS=in-thread): the faulting thread
// fills its own miss.
//
// With UFFD_FEATURE_SIGBUS a fault on a page the memfd lacks raises SIGBUS in the faulting
// thread instead of queueing a message for a service thread. The handler below runs the same
// policy under the same lock, reads the page with pread (the thread sleeps on the device as
// it would in Linux's own fault path), stores it into the memfd and returns: the access is
// retried and the kernel maps the page. No message, no wake-up of a sleeping thread by
// another CPU. Service threads still run read-ahead, evictions and writebacks.
// The cost, and why it is not the default: a system call that reads or writes non-resident
// mapped memory (write(fd, mapped, n), read(fd, mapped, n)) fails with EFAULT instead of
// waiting for the page, and the program must leave SIGBUS to the engine (a handler of its
// own installed earlier is chained for faults that are not the engine's).
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "log.hpp"
#include "uffd_engine.hpp"

namespace dimmap::detail {
namespace {

constexpr int kMaxInThreadEngines = 64;
std::atomic<UffdEngine*> g_engines[kMaxInThreadEngines];
struct sigaction g_previous;
std::once_flag g_installed;

// Whether the faulting access was a write (x86-64: bit 1 of the page-fault error code).
// Elsewhere every fault counts as a write: a read of a write-protected page then costs a
// writeback it did not need, never a lost write.
bool write_access(void* context) {
#if defined(__x86_64__)
  return static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2;
#else
  (void)context;
  return true;
#endif
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (info->si_code == BUS_ADRERR) {  // userfaultfd's SIGBUS; a poisoned page is BUS_MCEERR_AR
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    for (auto& slot : g_engines) {
      UffdEngine* engine = slot.load(std::memory_order_acquire);
      if (engine && engine->serve_in_thread(addr, write_access(context))) return;
    }
  }
  // Not the engine's: whatever was there before.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    return g_previous.sa_handler(sig);
  }
  signal(SIGBUS, SIG_DFL);  // the access is retried and kills the process as it would have
}

}  // namespace

int UffdEngine::register_in_thread() {
  std::call_once(g_installed, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;  // nested faults (a handler's own access) are served too
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous);
  });
  for (auto& slot : g_engines) {
    UffdEngine* expected = nullptr;
    if (slot.compare_exchange_strong(expected, this)) return 0;
  }
  return fail(EMFILE, "too many buffers with in-thread fault service (at most %d)", kMaxInThreadEngines);
}

void UffdEngine::unregister_in_thread() {
  for (auto& slot : g_engines) {
    UffdEngine* expected = this;
    slot.compare_exchange_strong(expected, nullptr);
  }
}

// A SIGBUS at `a`: returns false if the address is not in one of this engine's mappings.
// Otherwise the page is filled, marked dirty or waited for, and the access is retried.
bool UffdEngine::serve_in_thread(uintptr_t a, bool write) {
  std::unique_lock<std::mutex> lock(mu_);
  Region* r = region_by_addr(a);
  if (!r) return false;
  const size_t page = (a - reinterpret_cast<uintptr_t>(r->addr)) / page_size_;
  touch(r, page);  // a stream's held page is stored now
  const uint32_t s = dmp_lookup(&policy_, key_of(r, page));
  if (s == DMP_NIL) {
    fill_in_thread(r, page, write, lock);
    return true;
  }
  st_.faults++;
  switch (pages_[s].state) {
    case DMP_LOADING:  // another thread reads it: retry until it is stored
    case DMP_LEAVING:  // its writeback is in flight: keep it, retry once it is back
      // A write waiting here makes the page dirty when it arrives: its first write.
      (write && pages_[s].state == DMP_LOADING ? st_.write_faults : st_.hits)++;
      pages_[s].flags |= pages_[s].state == DMP_LEAVING ? F_WANTED : write ? F_LOAD_WRITE : 0;
      lock.unlock();
      sched_yield();
      return true;
    default:
      if (write && r->write_protects())
        handle_write_protect_fault(r, page);  // the first write: dirty from now on
      else
        st_.hits++;  // stored meanwhile
      return true;
  }
}

// A miss served by the faulting thread: a slot (evicting inline if none is free), a read
// outside the lock, then finish_read stores the page like a service thread's completion.
void UffdEngine::fill_in_thread(Region* r, size_t page, bool write, std::unique_lock<std::mutex>& lock) {
  const bool can_read = reads_in_flight_ < cfg_.io_depth && !staging_free_.empty();
  uint32_t s = can_read ? dmp_alloc(&policy_, key_of(r, page)) : DMP_NIL;
  if (s == DMP_NIL && can_read) {
    evict();
    s = dmp_alloc(&policy_, key_of(r, page));
  }
  if (s == DMP_NIL) {  // every slot busy: let the service threads catch up, then retry
    lock.unlock();
    wake_server();
    sched_yield();
    return;
  }
  st_.faults++;
  st_.misses++;
  note_miss(r, page);
  const bool wake = !prefetch_.empty() || policy_.free.len < par_.reserve;
  if (r->fresh && !r->written[page]) {
    fill_zero(r, s, page, write);
    lock.unlock();
    if (wake) wake_server();
    return;
  }
  char* buf = begin_read(r, s, write, static_cast<uint32_t>(syscall(SYS_gettid)));
  const uint64_t off = r->file_offset + page * page_size_;
  const int fd = r->file.read_fd();
  // The PerMA model's latency for this read, with the reads in flight now beside it.
  const int64_t due = cfg_.perma[0] ? perma_now_ns() + static_cast<int64_t>(
                                                           perma_latency_ns(&perma_, reads_in_flight_, page_size_))
                                    : 0;
  lock.unlock();
  if (wake) wake_server();
  ssize_t n = pread(fd, buf, page_size_, static_cast<off_t>(off));
  if (n < 0) n = -errno;
  if (due) perma_wait_until(due);
  finish_read(s, n);
}

}  // namespace dimmap::detail
