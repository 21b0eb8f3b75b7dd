// ctl_commands.hpp - what dimmapctl does, one function per subcommand. Each prints its
// result on stdout, its errors (naming the file and the cause) on stderr, and returns the
// process exit status.
#pragma once

#include <cstdint>
#include <string>

namespace dimmapctl {

struct LinkOptions {
  std::string path;
  uint32_t buffer = 0;
  bool read_only = false;  // open the backing file read-only
  bool buffered = false;   // do not ask for O_DIRECT
};

int cmd_version();
int cmd_link(const LinkOptions& options);
int cmd_unlink(const std::string& device);
// Mounts the dimmapfs overlay of dir on mountpoint, its files' mappings cached by buffer.
int cmd_mount(const std::string& dir, const std::string& mountpoint, uint32_t buffer);
int cmd_list();
// device empty: the buffer's counters; else those of the buffer the device uses.
int cmd_stats(const std::string& device, uint32_t buffer, bool json);
int cmd_sync(const std::string& device, uint64_t offset, uint64_t length, bool drop);

}  // namespace dimmapctl
