// kmod_client_test - what can be checked of the kernel-module client without the module:
// device names, and the clear error of DIMMAP_ENGINE=kmod when dimmap.ko is not loaded.
// The module itself is tested inside a VM (runtime/kernel, label kernel).
#include <dimmap/dimmap.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "kmod_client.hpp"

namespace {

TEST(KmodClient, ParsesDeviceNames) {
  uint32_t id = 99;
  EXPECT_EQ(dimmap::kmod::parse_id("3", &id), 0);
  EXPECT_EQ(id, 3u);
  EXPECT_EQ(dimmap::kmod::parse_id("dimmap17", &id), 0);
  EXPECT_EQ(id, 17u);
  EXPECT_EQ(dimmap::kmod::parse_id("/dev/dimmap255", &id), 0);
  EXPECT_EQ(id, 255u);
  for (const char* bad : {"", "dimmap", "/dev/dimmap", "256", "-1", "3x", "/dev/vda", "dimmap 3", "99999999999"})
    EXPECT_EQ(dimmap::kmod::parse_id(bad, &id), -EINVAL) << bad;
  EXPECT_EQ(dimmap::kmod::device_path(12), "/dev/dimmap12");
}

TEST(KmodEngine, ExplainsAMissingModule) {
  if (access(dimmap::kmod::kControlPath, F_OK) == 0) GTEST_SKIP() << "dimmap.ko is loaded on this machine";
  dimmap_config cfg;
  ASSERT_EQ(dimmap_config_init(&cfg), 0);
  cfg.engine = DIMMAP_ENGINE_KMOD;
  dimmap_instance* inst = nullptr;
  EXPECT_EQ(dimmap_instance_create(&cfg, &inst), -ENODEV);
  EXPECT_EQ(inst, nullptr);
  const std::string why = dimmap_last_error();
  EXPECT_NE(why.find("/dev/dimmap_ctl"), std::string::npos) << why;
  EXPECT_NE(why.find("insmod"), std::string::npos) << why;
}

}  // namespace
