// crash-writer - the victim of the crash-consistency test: threads write rounds of pages of
// a pattern file (pattern.hpp) through mmap or dimmap, msync most of them, and report each
// round's start and, once its msync returned, its durability on --ack-fd (crash_protocol.hpp).
// It runs until killed.
#include <CLI/CLI.hpp>
#include <dimmap/dimmap.h>
#include <dimmap/placement.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "crash_protocol.hpp"
#include "pattern.hpp"

namespace {

using dimmap::reliability::CrashMsg;
using dimmap::reliability::CrashRecord;
using dimmap::reliability::kPageBytes;
using dimmap::reliability::kWordsPerPage;
using dimmap::reliability::pattern_word;

struct Options {
  std::string file;
  std::string placement = "dimmap";
  uint32_t pages = 1024;
  unsigned threads = 4;
  uint32_t buffer_pages = 128;
  uint64_t seed = 1;
  int ack_fd = 3;
};

int g_ack_fd = -1;

void send(const CrashRecord& rec) {
  // One write of fewer than PIPE_BUF bytes: atomic.
  while (write(g_ack_fd, &rec, sizeof rec) < 0 && errno == EINTR) {
  }
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "crash-writer: %s\n", what.c_str());
  _exit(1);
}

void writer_thread(uint64_t* words, const Options& opt, unsigned t, bool use_dimmap) {
  std::mt19937_64 rng(opt.seed * 1000 + t);
  const uint32_t owned = (opt.pages - t + opt.threads - 1) / opt.threads;  // pages p with p % threads == t
  for (uint32_t round = 1;; ++round) {
    CrashRecord rec{};
    rec.thread = t;
    rec.version = t + opt.threads * round;
    rec.stride = opt.threads;
    rec.count = 1 + static_cast<uint32_t>(rng() % 16);
    if (rec.count > owned) rec.count = owned;
    rec.first = t + opt.threads * static_cast<uint32_t>(rng() % (owned - rec.count + 1));
    rec.type = CrashMsg::start;
    send(rec);
    for (uint32_t i = 0; i < rec.count; ++i) {
      uint64_t* page = words + (rec.first + uint64_t{i} * rec.stride) * kWordsPerPage;
      const uint64_t p = rec.first + uint64_t{i} * rec.stride;
      for (size_t w = 0; w < kWordsPerPage; ++w) __atomic_store_n(&page[w], pattern_word(p, w, rec.version), __ATOMIC_RELAXED);
    }
    if (rng() % 4 == 0) continue;  // left dirty: written back by eviction or a later msync, maybe
    const uint64_t first_byte = uint64_t{rec.first} * kPageBytes;
    const uint64_t last_page = rec.first + uint64_t{rec.count - 1} * rec.stride;
    const size_t len = static_cast<size_t>((last_page + 1) * kPageBytes - first_byte);
    char* start = reinterpret_cast<char*>(words) + first_byte;
    const int rc = use_dimmap ? dimmap_msync(start, len, MS_SYNC) : msync(start, len, MS_SYNC);
    if (rc != 0) die(std::string("msync failed: ") + (use_dimmap ? dimmap_last_error() : std::strerror(errno)));
    rec.type = CrashMsg::durable;
    send(rec);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes and msyncs rounds of pattern pages until killed, reporting each durable round "
               "(the victim of the crash-consistency test)."};
  Options opt;
  app.add_option("--file", opt.file, "Pattern file to write (made by the test)")->required();
  app.add_option("--placement", opt.placement, "mmap or dimmap")
      ->check(CLI::IsMember({"mmap", "dimmap"}))
      ->capture_default_str();
  app.add_option("--pages", opt.pages, "Pages of the file")->capture_default_str()->check(CLI::Range(1u, 1u << 24));
  app.add_option("--threads", opt.threads, "Writer threads")->capture_default_str()->check(CLI::Range(1u, 256u));
  app.add_option("--buffer-pages", opt.buffer_pages, "DI-MMAP buffer in pages")->capture_default_str();
  app.add_option("--seed", opt.seed, "Seed of the rounds")->capture_default_str();
  app.add_option("--ack-fd", opt.ack_fd, "Descriptor the records go to")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (opt.threads > opt.pages) die("--threads must not exceed --pages");
  g_ack_fd = opt.ack_fd;

  const int fd = open(opt.file.c_str(), O_RDWR);
  if (fd < 0) die(opt.file + ": " + std::strerror(errno));
  const size_t bytes = size_t{opt.pages} * kPageBytes;
  const bool use_dimmap = opt.placement == "dimmap";
  std::unique_ptr<dimmap::Buffer> buffer;
  void* map = MAP_FAILED;
  if (use_dimmap) {
    dimmap_config cfg;
    if (dimmap_config_init(&cfg) != 0) die(dimmap_last_error());
    cfg.buffer_bytes = uint64_t{opt.buffer_pages} * kPageBytes;
    cfg.evict_batch = 8;
    buffer = std::make_unique<dimmap::Buffer>(cfg);
    map = dimmap_instance_mmap(buffer->instance(), nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) die(dimmap_last_error());
  } else {
    map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) die(std::string("mmap: ") + std::strerror(errno));
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < opt.threads; ++t)
    pool.emplace_back(writer_thread, static_cast<uint64_t*>(map), std::cref(opt), t, use_dimmap);
  for (auto& th : pool) th.join();  // never: the threads run until the process is killed
  return 0;
}
