// kmod_client.hpp - thin wrappers over dimmap.ko's control ioctls (<dimmap/dimmap_uapi.h>),
// shared by libdimmap's kmod engine and dimmapctl. Header-only so that neither depends
// on the other's build. Every function returns 0 (or an fd) or -errno.
#pragma once

#include <dimmap/dimmap_uapi.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace dimmap::kmod {

inline constexpr const char* kControlPath = "/dev/" DIMMAP_CTL_NAME;

inline std::string device_path(uint32_t id) { return "/dev/" DIMMAP_DEV_PREFIX + std::to_string(id); }

inline int open_control() {
  const int fd = ::open(kControlPath, O_RDONLY | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

inline int checked_ioctl(int ctl, unsigned long cmd, void* arg) {
  return ::ioctl(ctl, cmd, arg) == 0 ? 0 : -errno;
}

inline int version(int ctl, dimmap_version* out) {
  std::memset(out, 0, sizeof *out);
  return checked_ioctl(ctl, DIMMAP_IOC_VERSION, out);
}

inline int link(int ctl, int fd, uint32_t buffer, dimmap_link_req* out) {
  std::memset(out, 0, sizeof *out);
  out->fd = fd;
  out->buffer = buffer;
  return checked_ioctl(ctl, DIMMAP_IOC_LINK, out);
}

inline int unlink(int ctl, uint32_t id) {
  dimmap_unlink_req req{};
  req.id = id;
  return checked_ioctl(ctl, DIMMAP_IOC_UNLINK, &req);
}

// -ENOENT when no link has this id.
inline int info(int ctl, uint32_t id, dimmap_link_info* out) {
  std::memset(out, 0, sizeof *out);
  out->id = id;
  return checked_ioctl(ctl, DIMMAP_IOC_INFO, out);
}

inline int stats(int ctl, uint32_t buffer, dimmap_kstats* out) {
  dimmap_stats_req req{};
  req.buffer = buffer;
  const int rc = checked_ioctl(ctl, DIMMAP_IOC_STATS, &req);
  *out = req.stats;
  return rc;
}

// Writes back (and with DIMMAP_SYNC_DROP frees) [offset, offset + length) of link id;
// length 0 means to the end.
inline int sync(int ctl, uint32_t id, uint64_t offset, uint64_t length, uint32_t flags, dimmap_sync_req* out) {
  std::memset(out, 0, sizeof *out);
  out->id = id;
  out->flags = flags;
  out->offset = offset;
  out->length = length;
  return checked_ioctl(ctl, DIMMAP_IOC_SYNC, out);
}

// Whether a link's backing file is the file st describes.
inline bool same_file(const dimmap_link_info& info, const struct stat& st) {
  if (S_ISBLK(st.st_mode))
    return (info.flags & DIMMAP_LINK_BLOCKDEV) && info.rdev_major == major(st.st_rdev) &&
           info.rdev_minor == minor(st.st_rdev);
  return !(info.flags & DIMMAP_LINK_BLOCKDEV) && info.dev_major == major(st.st_dev) &&
         info.dev_minor == minor(st.st_dev) && info.ino == st.st_ino;
}

// The link whose backing file is st's, or -ENOENT.
inline int find_link(int ctl, const struct stat& st, dimmap_link_info* out) {
  for (uint32_t id = 0; id < DIMMAP_MAX_LINKS; ++id) {
    const int rc = info(ctl, id, out);
    if (rc == -ENOENT) continue;
    if (rc < 0) return rc;
    if (same_file(*out, st)) return 0;
  }
  return -ENOENT;
}

// Accepts "3", "dimmap3" and "/dev/dimmap3".
inline int parse_id(std::string_view text, uint32_t* id) {
  for (std::string_view prefix : {std::string_view("/dev/"), std::string_view(DIMMAP_DEV_PREFIX)})
    if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return -EINVAL;
  const unsigned long n = std::strtoul(std::string(text).c_str(), nullptr, 10);
  if (n >= DIMMAP_MAX_LINKS) return -EINVAL;
  *id = static_cast<uint32_t>(n);
  return 0;
}

}  // namespace dimmap::kmod
