// budget-test-helper - a program with known memory behaviour for the budget tests.
//   budget-test-helper alloc MIB   allocate and touch MIB MiB, print "touched MIB MiB", exit 0
//   budget-test-helper orphan      leave a child sleeping in the cgroup, exit 0
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc == 3 && !std::strcmp(argv[1], "alloc")) {
    const size_t mib = std::strtoul(argv[2], nullptr, 10);
    const size_t bytes = mib << 20;
    char* p = static_cast<char*>(std::malloc(bytes));
    if (!p) return 2;
    // Touch every page with a non-zero byte so each one is really charged.
    for (size_t i = 0; i < bytes; i += 4096) p[i] = static_cast<char>(i >> 12 | 1);
    std::printf("touched %zu MiB\n", mib);
    const int status = p[bytes / 2] == 0;  // keeps the stores observable
    std::free(p);
    return status;
  }
  if (argc == 2 && !std::strcmp(argv[1], "orphan")) {
    if (fork() == 0) {
      sleep(60);
      _exit(0);
    }
    return 0;
  }
  std::fprintf(stderr, "usage: budget-test-helper alloc MIB | orphan\n");
  return 2;
}
