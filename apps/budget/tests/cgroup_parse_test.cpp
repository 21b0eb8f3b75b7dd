// Unit tests of the cgroup discovery parsers on fixtures of real /proc files.
#include <budget/cgroup.hpp>
#include <gtest/gtest.h>

namespace budget {
namespace {

// Lines as a cgroup-v1 machine (this project's CI) and a v2 machine print them.
const char kMountinfo[] =
    "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "37 25 0:33 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "38 25 0:34 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "40 25 0:35 /sub /mnt/with\\040space rw shared:7 - cgroup cgroup rw,cpuacct,memory\n";

TEST(CgroupParse, FindsV1AndV2MountsWithTheirControllers) {
  std::vector<CgroupMount> m = parse_cgroup_mounts(kMountinfo);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].mount_point, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(m[1].version, CgroupVersion::v1);
  EXPECT_EQ(m[1].controllers, std::vector<std::string>{"memory"});
  EXPECT_TRUE(m[2].controllers.empty()) << "name=systemd is not a controller";
  EXPECT_EQ(m[3].version, CgroupVersion::v2);
  EXPECT_EQ(m[3].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m[4].mount_point, "/mnt/with space") << "octal escapes are decoded";
  EXPECT_EQ(m[4].root, "/sub");
  EXPECT_EQ(m[4].controllers, (std::vector<std::string>{"cpuacct", "memory"}));
}

TEST(CgroupParse, ProcSelfCgroupMapsEachControllerAndTheV2Path) {
  auto paths = parse_proc_cgroup(
      "9:name=systemd:/\n4:memory:/process_api/c0d8\n2:cpu,cpuacct:/a:b\n0::/user.slice/x.scope\n");
  EXPECT_EQ(paths["memory"], "/process_api/c0d8");
  EXPECT_EQ(paths["cpu"], "/a:b") << "paths may contain ':'";
  EXPECT_EQ(paths["cpuacct"], "/a:b");
  EXPECT_EQ(paths[""], "/user.slice/x.scope");
}

TEST(CgroupParse, CgroupDirMapsHierarchyPathsUnderTheMount) {
  CgroupMount root{CgroupVersion::v1, "/", "/sys/fs/cgroup/memory", {"memory"}};
  EXPECT_EQ(cgroup_dir(root, "/"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(cgroup_dir(root, "/a/b"), "/sys/fs/cgroup/memory/a/b");
  CgroupMount sub{CgroupVersion::v2, "/sub", "/mnt/cg", {}};
  EXPECT_EQ(cgroup_dir(sub, "/sub"), "/mnt/cg");
  EXPECT_EQ(cgroup_dir(sub, "/sub/x"), "/mnt/cg/x");
  EXPECT_EQ(cgroup_dir(sub, "/subway"), "") << "a prefix of a name is not a parent";
  EXPECT_EQ(cgroup_dir(sub, "/other"), "");
}

}  // namespace
}  // namespace budget
