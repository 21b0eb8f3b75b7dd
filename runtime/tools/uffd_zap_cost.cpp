// uffd-zap-cost - what unmapping pages costs when userfaultfd mapped them.
//
// The user-space engine demotes pages with one process_madvise(MADV_DONTNEED) per batch, the
// analogue of DI-MMAP's bulk TLB flush. This tool measures whether the batch really costs one
// flush: it maps a memfd twice, installs page-table entries for random pages of each view -
// by ordinary read faults in one (as the engine's pages are mapped now: the kernel maps them on
// the retry of a missing fault), by UFFDIO_CONTINUE (as the engine once did) in the other - and
// zaps them in batches while a second thread of the process runs on another CPU (so every
// flush must reach it). It prints the time per batch and the TLB-shootdown interrupts per
// page (/proc/interrupts). Entries installed by userfaultfd are dirty, and zapping dirty
// entries of a shared mapping flushes page by page instead of once per batch.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <dimmap/command_line.hpp>
#include <dimmap/support/tlb_shootdowns.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "uffd-zap-cost: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// A userfaultfd with minor faults on shmem, registered on [addr, addr+len).
int minor_fault_uffd(char* addr, size_t len) {
  int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* UFFD_USER_MODE_ONLY */));
  if (fd < 0) die("userfaultfd");
  struct uffdio_api api = {};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_MINOR_SHMEM;
  if (ioctl(fd, UFFDIO_API, &api) != 0) die("UFFDIO_API (minor faults on shmem need Linux 5.14+)");
  struct uffdio_register reg = {};
  reg.range.start = reinterpret_cast<uintptr_t>(addr);
  reg.range.len = len;
  reg.mode = UFFDIO_REGISTER_MODE_MINOR;
  if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0) die("UFFDIO_REGISTER");
  return fd;
}

struct Result {
  double us_per_batch;
  double shootdowns_per_page;  // < 0: not reported by this kernel
};

// Maps the memfd, installs entries for `batch` random pages (by read faults, or with
// UFFDIO_CONTINUE when by_uffd) and zaps them with one process_madvise, `rounds` times.
Result measure(int memfd, size_t npages, size_t batch, size_t rounds, bool by_uffd, int pidfd) {
  const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* view = static_cast<char*>(mmap(nullptr, npages * ps, PROT_READ, MAP_SHARED, memfd, 0));
  if (view == MAP_FAILED) die("mmap");
  const int uffd = by_uffd ? minor_fault_uffd(view, npages * ps) : -1;
  std::mt19937_64 rng(1);
  std::vector<struct iovec> ranges(batch);
  double seconds = 0;
  uint64_t shootdowns = 0;
  for (size_t r = 0; r < rounds; ++r) {
    for (auto& range : ranges) {
      char* page = view + rng() % npages * ps;
      if (by_uffd) {
        struct uffdio_continue c = {};
        c.range.start = reinterpret_cast<uintptr_t>(page);
        c.range.len = ps;
        if (ioctl(uffd, UFFDIO_CONTINUE, &c) != 0 && errno != EEXIST) die("UFFDIO_CONTINUE");
      } else {
        (void)*static_cast<volatile char*>(page);
      }
      range = {page, ps};
    }
    const uint64_t before = dimmap::support::tlb_shootdowns().value_or(0);
    const auto t0 = std::chrono::steady_clock::now();
    if (syscall(SYS_process_madvise, pidfd, ranges.data(), ranges.size(), MADV_DONTNEED, 0) < 0)
      die("process_madvise(MADV_DONTNEED)");
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    shootdowns += dimmap::support::tlb_shootdowns().value_or(0) - before;
  }
  if (uffd >= 0) close(uffd);
  munmap(view, npages * ps);
  const bool counted = dimmap::support::tlb_shootdowns().has_value();
  return {seconds / rounds * 1e6, counted ? double(shootdowns) / double(rounds * batch) : -1.0};
}

}  // namespace

int main(int argc, char** argv) {
  size_t npages = 65536, batch = 64, rounds = 200;
  CLI::App app{"uffd-zap-cost: time one process_madvise(MADV_DONTNEED) of a batch of random pages of a shared "
               "memfd mapping, once for pages mapped by ordinary read faults and once for pages mapped with "
               "UFFDIO_CONTINUE (as the user-space engine once mapped them), while another thread of the process runs "
               "on a second CPU. Prints microseconds per batch and TLB-shootdown interrupts per page."};
  app.add_option("--pages", npages, "Size of the mapping in pages")->capture_default_str()->check(CLI::Range(64, 1 << 24));
  app.add_option("--batch", batch, "Pages per process_madvise call")->capture_default_str()->check(CLI::Range(1, 1024));
  app.add_option("--rounds", rounds, "Batches per measurement")->capture_default_str()->check(CLI::Range(1, 100000));
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;
  if (batch > npages)
    return dimmap::cli::report_usage_error(
        app, "--batch (" + std::to_string(batch) + ") is larger than --pages (" + std::to_string(npages) + ")");

  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::atomic<bool> stop{false};
  std::thread other;
  if (cpus >= 2) {
    pin_to_cpu(0);
    other = std::thread([&] {
      pin_to_cpu(1);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  } else {
    std::fprintf(stderr, "uffd-zap-cost: one CPU: no other CPU to shoot down, the two cases will look alike\n");
  }

  const size_t ps = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const int memfd = memfd_create("uffd-zap-cost", MFD_CLOEXEC);
  if (memfd < 0) die("memfd_create");
  if (ftruncate(memfd, static_cast<off_t>(npages * ps)) != 0) die("ftruncate");
  std::vector<char> page(ps, 7);
  for (size_t i = 0; i < npages; ++i)  // every page in the memfd: both views only map them
    if (pwrite(memfd, page.data(), ps, static_cast<off_t>(i * ps)) != static_cast<ssize_t>(ps)) die("pwrite");
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd < 0) die("pidfd_open");

  // A short unmeasured pass of each first: page tables, caches and CPU frequency settle.
  for (bool by_uffd : {false, true}) measure(memfd, npages, batch, std::max<size_t>(1, rounds / 10), by_uffd, pidfd);
  const Result faults = measure(memfd, npages, batch, rounds, false, pidfd);
  const Result uffd = measure(memfd, npages, batch, rounds, true, pidfd);
  stop = true;
  if (other.joinable()) other.join();

  auto print = [&](const char* name, const Result& r) {
    std::printf("%-22s %8.1f us per batch of %zu", name, r.us_per_batch, batch);
    if (r.shootdowns_per_page >= 0) std::printf(", %.3f TLB shootdowns per page", r.shootdowns_per_page);
    std::printf("\n");
  };
  print("read faults", faults);
  print("UFFDIO_CONTINUE", uffd);
  std::printf("ratio (UFFDIO_CONTINUE / read faults): %.2fx time per batch\n", uffd.us_per_batch / faults.us_per_batch);
  return 0;
}
