// pagecache_log_child FILE PAGES: one pass over FILE (PAGES pages of the test pattern) through a
// 64-page pagecache-engine buffer, in eight bursts 120 ms apart. Run by pagecache_engine_test
// with DIMMAP_LOG=debug in the environment: the log level is read once per process, so the test
// needs a process of its own to see the keeper's debug lines. Exit 0 when every page read right.
#include <dimmap/dimmap.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "test_files.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE PAGES\n", argv[0]);
    return 2;
  }
  const size_t pages = std::strtoull(argv[2], nullptr, 10);
  const int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 2;
  }
  dimmap_config cfg;
  dimmap_config_init(&cfg);
  cfg.buffer_bytes = 64 * dimmap::test::kPage;
  cfg.engine = DIMMAP_ENGINE_PAGECACHE;
  cfg.perma[0] = '\0';  // PerMA needs the userfaultfd engine
  dimmap_instance* inst = nullptr;
  if (dimmap_instance_create(&cfg, &inst) != 0) {
    std::fprintf(stderr, "dimmap_instance_create: %s\n", dimmap_last_error());
    return 2;
  }
  void* addr = dimmap_instance_mmap(inst, nullptr, pages * dimmap::test::kPage, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) {
    std::fprintf(stderr, "dimmap_instance_mmap: %s\n", dimmap_last_error());
    return 2;
  }
  const auto* m = static_cast<const uint64_t*>(addr);
  for (size_t p = 0; p < pages; ++p) {
    if (m[p * 512 + 7] != dimmap::test::pattern_word(p, 7, 0)) {
      std::fprintf(stderr, "page %zu: wrong data\n", p);
      return 1;
    }
    if (p % 128 == 127) std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  dimmap_munmap(addr, pages * dimmap::test::kPage);
  return dimmap_instance_destroy(inst) == 0 ? 0 : 1;
}
