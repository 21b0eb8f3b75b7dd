// uffd-miss-floor - the least a user-space miss can cost on this kernel.
//
// A miss served in user space on the kernel's fault path needs, at the very least: the fault
// reaching user space (here a SIGBUS in the faulting thread, UFFD_FEATURE_SIGBUS: the cheapest
// way), the read of the page from its file, the store of the page into the memfd (pwrite),
// the return from the signal, the kernel mapping the page on the retried access, and, once the
// buffer is full, taking a page back (one process_madvise(MADV_REMOVE) per batch of 64). This
// tool does exactly that and nothing else - no policy, no lock, no bookkeeping but a ring of
// resident pages - on one thread reading random pages of a file far bigger than its buffer,
// and prints misses/s and the CPU time per miss (getrusage: unaffected by other load). Beside
// the engine's own rate (apps/lriot/bench/engine-vs-mmap --miss-cost) it says how much of a
// miss is the engine and how much the mechanism; beside Linux mmap's CPU per miss, how close
// any user-space engine can come on a machine whose CPUs are the bottleneck.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/support/json_summary.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kBatch = 64;  // pages given back per process_madvise, as the engine's eviction

struct Floor {
  int file = -1, memfd = -1, self = -1;  // self: a pidfd of this process, for process_madvise
  char* base = nullptr;
  char* alias = nullptr;  // a second, unregistered mapping of the memfd (--store=alias)
  size_t pages = 0, capacity = 0;
  std::vector<size_t> ring;  // resident pages, oldest first
  size_t head = 0, resident = 0;
  uint64_t misses = 0;
  alignas(4096) char page[kPage];
};

Floor g;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "uffd-miss-floor: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// Gives the oldest batch of resident pages back to the memfd: the next touch misses again.
void give_back() {
  iovec iov[kBatch];
  for (size_t i = 0; i < kBatch; ++i) {
    iov[i].iov_base = g.base + g.ring[(g.head + i) % g.capacity] * kPage;
    iov[i].iov_len = kPage;
  }
  if (syscall(SYS_process_madvise, g.self, iov, kBatch, MADV_REMOVE, 0) < 0) die("process_madvise");
  g.head = (g.head + kBatch) % g.capacity;
  g.resident -= kBatch;
}

void on_sigbus(int, siginfo_t* info, void*) {
  const size_t p = (reinterpret_cast<char*>(info->si_addr) - g.base) / kPage;
  if (g.resident == g.capacity) give_back();
  const off_t off = static_cast<off_t>(p * kPage);
  if (g.alias) {  // one copy: the read lands in the memfd's page through the alias
    if (pread(g.file, g.alias + off, kPage, off) != static_cast<ssize_t>(kPage)) die("pread into the alias");
  } else {
    if (pread(g.file, g.page, kPage, off) != static_cast<ssize_t>(kPage)) die("pread");
    if (pwrite(g.memfd, g.page, kPage, off) != static_cast<ssize_t>(kPage)) die("pwrite");
  }
  g.ring[(g.head + g.resident++) % g.capacity] = p;
  g.misses++;
}

double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uffd-miss-floor: one thread reads random pages of FILE through a userfaultfd-registered memfd "
               "mapping whose misses it serves with the bare minimum (SIGBUS, pread, pwrite into the memfd, "
               "batched MADV_REMOVE); prints misses/s and CPU microseconds per miss"};
  std::string path;
  std::string buffer_text = "8M";
  double seconds = 3;
  bool direct = false, busy = false;
  std::string store = "pwrite";
  std::string json_path;
  app.add_option("file", path, "The file to read (e.g. on /dev/shm, so that no device time counts)")->required()
      ->check(CLI::ExistingFile);
  app.add_option("--resident", buffer_text, "Resident pages at most, as a size (the buffer of the bare mechanism)")->capture_default_str()
      ->check(dimmap::cli::size_check());
  app.add_option("--seconds", seconds, "How long to run")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_flag("--direct", direct, "Read FILE with O_DIRECT (a file on a disk: the device's time counts then)");
  app.add_option("--store", store, "How a page gets into the memfd: pwrite (a copy from a bounce buffer), or alias "
                 "(the file is read straight into the memfd's page through a second mapping)")
      ->check(CLI::IsMember({"pwrite", "alias"}))->capture_default_str();
  app.add_flag("--busy-thread", busy, "Keep a second thread of the process running (on another CPU), so that every "
               "TLB flush must reach it, as in a program with many threads");
  app.add_option("--json", json_path, "Also write the run's numbers as one JSON object to this file (the summary "
                 "every measuring tool writes; rate = misses/s)");
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;

  g.file = open(path.c_str(), O_RDONLY | (direct ? O_DIRECT : 0));
  if (g.file < 0) die(path);
  const off_t size = lseek(g.file, 0, SEEK_END);
  g.pages = static_cast<size_t>(size) / kPage;
  uint64_t buffer_bytes = 0;
  dimmap_parse_size(buffer_text.c_str(), &buffer_bytes);  // checked while parsing
  g.capacity = buffer_bytes / kPage;
  if (g.capacity < 2 * kBatch || g.pages < 4 * g.capacity) {
    std::fprintf(stderr, "uffd-miss-floor: %s: want a file at least 4x --resident, and --resident >= 512K\n", path.c_str());
    return 2;
  }
  g.ring.resize(g.capacity);
  g.self = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (g.self < 0) die("pidfd_open");
  g.memfd = memfd_create("uffd-miss-floor", 0);
  if (g.memfd < 0 || ftruncate(g.memfd, size) != 0) die("memfd");
  g.base = static_cast<char*>(mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, g.memfd, 0));
  if (g.base == MAP_FAILED) die("mmap");
  if (store == "alias") {
    g.alias = static_cast<char*>(mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, g.memfd, 0));
    if (g.alias == MAP_FAILED) die("mmap (alias)");
  }
  std::atomic<bool> stop{false};
  std::thread spinner;
  if (busy) spinner = std::thread([&stop] { while (!stop.load(std::memory_order_relaxed)) {} });
  const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
  if (uffd < 0) die("userfaultfd");
  uffdio_api api = {UFFD_API, UFFD_FEATURE_SIGBUS | UFFD_FEATURE_MISSING_SHMEM, 0};
  if (ioctl(uffd, UFFDIO_API, &api) != 0) die("UFFDIO_API");
  uffdio_register reg = {{reinterpret_cast<uintptr_t>(g.base), static_cast<uint64_t>(size)},
                         UFFDIO_REGISTER_MODE_MISSING, 0};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) die("UFFDIO_REGISTER");
  struct sigaction sa = {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGBUS, &sa, nullptr);

  std::mt19937_64 rng(42);
  std::uniform_int_distribution<size_t> pick(0, g.pages - 1);
  uint64_t sum = 0;  // printed, so that the reads are not optimized away (and can be checked)
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  double elapsed = 0;
  uint64_t reads = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 1024; ++i, ++reads) sum += static_cast<unsigned char>(g.base[pick(rng) * kPage]);
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const double cpu = cpu_seconds() - cpu0;
  stop = true;
  if (spinner.joinable()) spinner.join();
  std::printf("uffd-miss-floor: %.1fK misses/s (%.0f%% of %llu reads), %.2f us of CPU per miss, "
              "%.2f us of wall time (sum of the bytes read %llu)\n",
              static_cast<double>(g.misses) / elapsed / 1e3, 100.0 * static_cast<double>(g.misses) / reads,
              static_cast<unsigned long long>(reads), cpu * 1e6 / static_cast<double>(g.misses),
              elapsed * 1e6 / static_cast<double>(g.misses), static_cast<unsigned long long>(sum));
  if (!json_path.empty()) {
    const double misses = static_cast<double>(g.misses);
    try {
      dimmap::json::write_file(json_path, dimmap::json::summary("uffd-miss-floor", elapsed, misses / elapsed, "misses/s")
                                              .add("reads", reads)
                                              .add("misses", g.misses)
                                              .add("cpu_us_per_miss", cpu * 1e6 / misses)
                                              .add("wall_us_per_miss", elapsed * 1e6 / misses)
                                              .add("byte_sum", sum)
                                              .str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uffd-miss-floor: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
