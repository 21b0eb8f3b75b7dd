// The engine on what the machine offers: block devices, and a clear error when userfaultfd
// is unavailable (device hidden, system call refused as in a locked-down container).
#include <dimmap/dimmap.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <string>

#include "test_files.hpp"

namespace dimmap::test {
namespace {

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

TEST(EngineEnvironment, MapsABlockDevice) {
  const size_t pages = 2048;
  TempFile f(pages);
  const std::string loop = run("losetup --find --show " + f.path() + " 2>/dev/null");
  if (loop.rfind("/dev/loop", 0) != 0) GTEST_SKIP() << "no loop device (needs root and loop support)";
  int fd = open(loop.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  cfg.buffer_bytes = 128 * kPage;
  dimmap_instance* inst = nullptr;
  ASSERT_EQ(dimmap_instance_create(&cfg, &inst), 0) << dimmap_last_error();
  auto* m = static_cast<uint64_t*>(dimmap_instance_mmap(inst, nullptr, pages * kPage, PROT_READ | PROT_WRITE,
                                                        MAP_SHARED, fd, 0));
  ASSERT_NE(m, MAP_FAILED) << dimmap_last_error();
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(m[p * 512 + 4], pattern_word(p, 4, 0)) << "page " << p;
  for (size_t p = 0; p < pages; p += 5) m[p * 512 + 4] = pattern_word(p, 4, 2);
  ASSERT_EQ(dimmap_msync(m, pages * kPage, MS_SYNC), 0) << dimmap_last_error();
  ASSERT_EQ(dimmap_munmap(m, pages * kPage), 0);
  EXPECT_EQ(dimmap_instance_destroy(inst), 0);
  close(fd);
  run("losetup -d " + loop);
  // Through the loop device onto the file underneath.
  for (size_t p = 0; p < pages; ++p) ASSERT_EQ(f.word_on_disk(p, 4), pattern_word(p, 4, p % 5 ? 0 : 2));
}

// In a child: hide /dev/userfaultfd and refuse the system call, then try to make a buffer on
// the userfaultfd engine, and one on the default engine, which needs no userfaultfd.
// Exit 0: refused with a message about userfaultfd, and the default buffer works; 1: created
// anyway; 2: refused silently; 3: the test could not set itself up; 4: the default buffer
// failed.
int child_without_userfaultfd() {
  if (unshare(CLONE_NEWNS) != 0) return 3;
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 3;
  if (access("/dev/userfaultfd", F_OK) == 0 && mount("/dev/null", "/dev/userfaultfd", nullptr, MS_BIND, nullptr) != 0)
    return 3;
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return 3;
  dimmap_config cfg;
  if (dimmap_config_init(&cfg) != 0) return 3;
  cfg.engine = DIMMAP_ENGINE_UFFD;
  dimmap_instance* inst = nullptr;
  if (dimmap_instance_create(&cfg, &inst) == 0) return 1;
  const std::string why = dimmap_last_error();
  std::fprintf(stderr, "refused as expected: %s\n", why.c_str());
  if (why.find("userfaultfd") == std::string::npos) return 2;
  cfg.engine = DIMMAP_ENGINE_AUTO;
  cfg.perma[0] = '\0';
  if (dimmap_instance_create(&cfg, &inst) != 0) return 4;
  const bool on_pagecache = dimmap_instance_engine(inst) == DIMMAP_ENGINE_PAGECACHE;
  return dimmap_instance_destroy(inst) == 0 && on_pagecache ? 0 : 4;
}

TEST(EngineEnvironment, MissingUserfaultfdIsAClearErrorAndTheDefaultEngineWorks) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(child_without_userfaultfd());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "cannot build a namespace without userfaultfd here (needs root)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a buffer was created anyway; 2: the error did not say why; "
                                       "4: the default engine failed too";
}

}  // namespace
}  // namespace dimmap::test
