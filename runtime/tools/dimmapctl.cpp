// dimmapctl - manage dimmap.ko: link a block device or file to /dev/dimmapN, or mount a
// directory's dimmapfs overlay; unlink, list links, show buffer statistics, write back or drop pages.
#include <CLI/CLI.hpp>
#include <dimmap/command_line.hpp>

#include "ctl_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dimmapctl: manage the DI-MMAP kernel module (dimmap.ko). Two ways to map storage through the "
               "module's buffer: 'link' binds a block device or regular file to a new /dev/dimmapN to mmap; 'mount' "
               "shows every file of a directory under a mount point (dimmapfs), where mmap of a file goes through "
               "the buffer (umount writes everything back)."};
  app.require_subcommand(1);

  app.add_subcommand("version", "Show the module's ABI and buffer configuration");

  dimmapctl::LinkOptions link;
  auto* link_cmd = app.add_subcommand("link", "Create /dev/dimmapN for PATH and print its name (needs CAP_SYS_ADMIN)");
  link_cmd->add_option("path", link.path, "Block device or regular file")->required();
  link_cmd->add_option("--buffer", link.buffer, "Which of the module's buffers caches it")->capture_default_str();
  link_cmd->add_flag("--read-only", link.read_only, "Open PATH read-only (writable mappings are refused)");
  link_cmd->add_flag("--buffered", link.buffered, "Do not open PATH with O_DIRECT");

  std::string device;
  auto* unlink_cmd = app.add_subcommand("unlink", "Write back and remove /dev/dimmapN (needs CAP_SYS_ADMIN)");
  unlink_cmd->add_option("device", device, "N, dimmapN or /dev/dimmapN")->required();

  std::string mount_dir, mountpoint;
  uint32_t mount_buffer = 0;
  auto* mount_cmd = app.add_subcommand("mount", "Mount the dimmapfs overlay of DIR on MOUNTPOINT (needs CAP_SYS_ADMIN; "
                                                "same as mount -t dimmapfs -o source=DIR,buffer=B none MOUNTPOINT)");
  mount_cmd->add_option("dir", mount_dir, "Directory whose files to show")->required()->check(CLI::ExistingDirectory);
  mount_cmd->add_option("mountpoint", mountpoint, "Where")->required()->check(CLI::ExistingDirectory);
  mount_cmd->add_option("--buffer", mount_buffer, "Which of the module's buffers caches the mapped files")
      ->capture_default_str();

  app.add_subcommand("list", "List the links: device (or dimmapfs), backing file, size, buffer, flags, opens");

  uint32_t buffer = 0;
  bool json = false;
  auto* stats_cmd = app.add_subcommand("stats", "Counters of a buffer: faults, hits, recoveries, hot promotions, "
                                                "evictions, writebacks");
  auto* stats_dev = stats_cmd->add_option("device", device, "Show the buffer of this device (N or /dev/dimmapN)");
  stats_cmd->add_option("--buffer", buffer, "Show this buffer")->excludes(stats_dev);
  stats_cmd->add_flag("--json", json, "Print one JSON object");

  uint64_t offset = 0, length = 0;
  bool drop = false;
  auto* sync_cmd = app.add_subcommand("sync", "Write back a device's dirty pages (mmap_sync_buffers); with --drop "
                                              "also free them (flush_buffer, needs CAP_SYS_ADMIN)");
  sync_cmd->add_option("device", device, "N, dimmapN or /dev/dimmapN")->required();
  sync_cmd->add_option("--offset", offset, "First byte (page aligned)")->capture_default_str();
  sync_cmd->add_option("--length", length, "Bytes (page aligned; 0 = to the end)")->capture_default_str();
  sync_cmd->add_flag("--drop", drop, "Also drop the pages from the buffer");

  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;

  if (app.got_subcommand("version")) return dimmapctl::cmd_version();
  if (app.got_subcommand(link_cmd)) return dimmapctl::cmd_link(link);
  if (app.got_subcommand(unlink_cmd)) return dimmapctl::cmd_unlink(device);
  if (app.got_subcommand(mount_cmd)) return dimmapctl::cmd_mount(mount_dir, mountpoint, mount_buffer);
  if (app.got_subcommand("list")) return dimmapctl::cmd_list();
  if (app.got_subcommand(stats_cmd)) return dimmapctl::cmd_stats(device, buffer, json);
  if (app.got_subcommand(sync_cmd)) return dimmapctl::cmd_sync(device, offset, length, drop);
  return 2;
}
