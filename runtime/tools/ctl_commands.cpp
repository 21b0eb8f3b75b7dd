// ctl_commands.cpp - dimmapctl's subcommands over dimmap.ko's control device.
#include "ctl_commands.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "kmod_client.hpp"

namespace dimmapctl {
namespace {

namespace kmod = dimmap::kmod;

int error(const std::string& what, int err, const char* hint = "") {
  std::fprintf(stderr, "dimmapctl: %s: %s%s\n", what.c_str(), std::strerror(err), hint);
  return 1;
}

// The control device, or -1 after printing why it cannot be opened.
int open_control() {
  const int ctl = kmod::open_control();
  if (ctl >= 0) return ctl;
  error(kmod::kControlPath, -ctl, -ctl == ENOENT ? " (is dimmap.ko loaded? insmod dimmap.ko)" : "");
  return -1;
}

class Control {
 public:
  Control() : fd_(open_control()) {}
  ~Control() {
    if (fd_ >= 0) close(fd_);
  }
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string format_size(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return text;
}

std::string describe_flags(uint32_t flags) {
  std::string s = flags & DIMMAP_LINK_WRITABLE ? "rw" : "ro";
  if (flags & DIMMAP_LINK_DIRECT) s += ",direct";
  if (flags & DIMMAP_LINK_BLOCKDEV) s += ",blockdev";
  return s;
}

int parse_device(const std::string& device, uint32_t* id) {
  if (kmod::parse_id(device, id) == 0) return 0;
  std::fprintf(stderr, "dimmapctl: '%s' is not a dimmap device (N, dimmapN or /dev/dimmapN, N < %u)\n",
               device.c_str(), DIMMAP_MAX_LINKS);
  return 1;
}

// Opens the backing file read-write (or read-only) with O_DIRECT when allowed.
int open_backing(const LinkOptions& o) {
  const int mode = (o.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
  int fd = o.buffered ? -1 : ::open(o.path.c_str(), mode | O_DIRECT);
  if (fd < 0 && (o.buffered || errno == EINVAL)) {
    fd = ::open(o.path.c_str(), mode);
    if (fd >= 0 && !o.buffered)
      std::fprintf(stderr, "dimmapctl: %s does not support O_DIRECT: its pages may also sit in the page cache\n",
                   o.path.c_str());
  }
  if (fd < 0) error("cannot open " + o.path, errno, errno == EROFS || errno == EACCES ? " (try --read-only)" : "");
  return fd;
}

void print_stats_text(uint32_t buffer, const dimmap_kstats& s) {
  std::printf("buffer %u: %llu of %llu pages resident (%llu known dirty)\n", buffer,
              static_cast<unsigned long long>(s.resident_pages), static_cast<unsigned long long>(s.buffer_pages),
              static_cast<unsigned long long>(s.dirty_pages));
  const std::pair<const char*, uint64_t> rows[] = {
      {"faults", s.faults},
      {"misses", s.misses},
      {"hits", s.hits},
      {"recoveries", s.recoveries},
      {"hot promotions", s.hot_promotions},
      {"demotions", s.demotions},
      {"evictions", s.evictions},
      {"eviction batches", s.eviction_batches},
      {"writebacks", s.writebacks},
      {"write requests", s.write_ios},
      {"bytes read", s.bytes_read},
      {"bytes written", s.bytes_written},
      {"read errors", s.read_errors},
      {"write errors", s.write_errors},
      {"replaced pages", s.replaced_pages},
  };
  for (const auto& [name, value] : rows) std::printf("  %-17s %llu\n", name, static_cast<unsigned long long>(value));
}

void print_stats_json(uint32_t buffer, const dimmap_kstats& s) {
  std::printf(
      "{\"buffer\": %u, \"faults\": %llu, \"misses\": %llu, \"hits\": %llu, \"recoveries\": %llu, "
      "\"hot_promotions\": %llu, \"demotions\": %llu, \"evictions\": %llu, \"eviction_batches\": %llu, "
      "\"writebacks\": %llu, \"write_ios\": %llu, \"bytes_read\": %llu, \"bytes_written\": %llu, "
      "\"read_errors\": %llu, \"write_errors\": %llu, \"replaced_pages\": %llu, \"buffer_pages\": %llu, "
      "\"resident_pages\": %llu, \"dirty_pages\": %llu}\n",
      buffer, static_cast<unsigned long long>(s.faults), static_cast<unsigned long long>(s.misses),
      static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.recoveries),
      static_cast<unsigned long long>(s.hot_promotions), static_cast<unsigned long long>(s.demotions),
      static_cast<unsigned long long>(s.evictions), static_cast<unsigned long long>(s.eviction_batches),
      static_cast<unsigned long long>(s.writebacks), static_cast<unsigned long long>(s.write_ios),
      static_cast<unsigned long long>(s.bytes_read), static_cast<unsigned long long>(s.bytes_written),
      static_cast<unsigned long long>(s.read_errors), static_cast<unsigned long long>(s.write_errors),
      static_cast<unsigned long long>(s.replaced_pages), static_cast<unsigned long long>(s.buffer_pages),
      static_cast<unsigned long long>(s.resident_pages), static_cast<unsigned long long>(s.dirty_pages));
}

}  // namespace

int cmd_version() {
  Control ctl;
  if (!ctl.ok()) return 1;
  dimmap_version v;
  if (int rc = kmod::version(ctl.fd(), &v); rc < 0) return error("version", -rc);
  std::printf("dimmap.ko ABI %u: %u buffer(s) of %llu pages (%s each), hot FIFO %u%%, eviction queue %u%%, "
              "batch %u, up to %u links\n",
              v.abi, v.buffers, static_cast<unsigned long long>(v.buffer_pages),
              format_size(v.buffer_pages * v.page_size).c_str(), v.hot_percent, v.evict_percent, v.evict_batch,
              v.max_links);
  return 0;
}

int cmd_link(const LinkOptions& o) {
  Control ctl;
  if (!ctl.ok()) return 1;
  const int fd = open_backing(o);
  if (fd < 0) return 1;
  dimmap_link_req req;
  const int rc = kmod::link(ctl.fd(), fd, o.buffer, &req);
  struct stat st;
  const bool have_stat = fstat(fd, &st) == 0;
  close(fd);
  if (rc == -EBUSY && have_stat) {
    dimmap_link_info info;
    if (kmod::find_link(ctl.fd(), st, &info) == 0)
      return error("link " + o.path, EBUSY, (" (already linked as " + kmod::device_path(info.id) + ")").c_str());
  }
  if (rc == -EPERM) return error("link " + o.path, EPERM, " (linking needs CAP_SYS_ADMIN)");
  if (rc == -EINVAL) return error("link " + o.path, EINVAL, " (not a block device or regular file of at least a "
                                                            "page, or no such buffer: see dimmapctl version)");
  if (rc < 0) return error("link " + o.path, -rc);
  std::printf("%s\n", kmod::device_path(req.id).c_str());
  return 0;
}

int cmd_unlink(const std::string& device) {
  uint32_t id;
  if (parse_device(device, &id)) return 1;
  Control ctl;
  if (!ctl.ok()) return 1;
  const int rc = kmod::unlink(ctl.fd(), id);
  if (rc == -EBUSY) return error("unlink " + kmod::device_path(id), EBUSY, " (it is open or mapped)");
  if (rc < 0) return error("unlink " + kmod::device_path(id), -rc);
  return 0;
}

int cmd_mount(const std::string& dir, const std::string& mountpoint, uint32_t buffer) {
  if (dir.find(',') != std::string::npos)
    return error("mount " + dir, EINVAL, " (a directory name with a comma cannot be passed as source=)");
  const std::string options = "source=" + dir + ",buffer=" + std::to_string(buffer);
  if (mount("none", mountpoint.c_str(), "dimmapfs", 0, options.c_str()) == 0) return 0;
  const int err = errno;
  const char* hint = err == ENODEV   ? " (is dimmap.ko loaded? insmod dimmap.ko)"
                     : err == EINVAL ? " (is it a directory, and the buffer one the module has? dmesg says which)"
                     : err == EPERM  ? " (needs CAP_SYS_ADMIN)"
                                     : "";
  return error("mount " + dir + " on " + mountpoint, err, hint);
}

int cmd_list() {
  Control ctl;
  if (!ctl.ok()) return 1;
  for (uint32_t id = 0; id < DIMMAP_MAX_LINKS; ++id) {
    dimmap_link_info info;
    const int rc = kmod::info(ctl.fd(), id, &info);
    if (rc == -ENOENT) continue;
    if (rc < 0) return error("info " + kmod::device_path(id), -rc);
    const std::string name = info.flags & DIMMAP_LINK_OVERLAY ? "dimmapfs" : kmod::device_path(id);
    std::printf("%s\t%s\t%s\tbuffer %u\t%s\topens %u\n", name.c_str(),
                info.path[0] ? info.path : "?", format_size(info.size).c_str(), info.buffer,
                describe_flags(info.flags).c_str(), info.opens);
  }
  return 0;
}

int cmd_stats(const std::string& device, uint32_t buffer, bool json) {
  Control ctl;
  if (!ctl.ok()) return 1;
  if (!device.empty()) {
    uint32_t id;
    if (parse_device(device, &id)) return 1;
    dimmap_link_info info;
    if (int rc = kmod::info(ctl.fd(), id, &info); rc < 0) return error("info " + kmod::device_path(id), -rc);
    buffer = info.buffer;
  }
  dimmap_kstats s;
  if (int rc = kmod::stats(ctl.fd(), buffer, &s); rc < 0)
    return error("stats of buffer " + std::to_string(buffer), -rc);
  if (json)
    print_stats_json(buffer, s);
  else
    print_stats_text(buffer, s);
  return 0;
}

int cmd_sync(const std::string& device, uint64_t offset, uint64_t length, bool drop) {
  uint32_t id;
  if (parse_device(device, &id)) return 1;
  Control ctl;
  if (!ctl.ok()) return 1;
  dimmap_sync_req req;
  const int rc = kmod::sync(ctl.fd(), id, offset, length, drop ? DIMMAP_SYNC_DROP : 0, &req);
  if (rc == -EINVAL) return error("sync " + kmod::device_path(id), EINVAL, " (offset and length must be page aligned)");
  if (rc < 0) return error("sync " + kmod::device_path(id), -rc, rc == -EPERM ? " (--drop needs CAP_SYS_ADMIN)" : "");
  std::printf("%s: wrote %llu pages, dropped %llu\n", kmod::device_path(id).c_str(),
              static_cast<unsigned long long>(req.written), static_cast<unsigned long long>(req.dropped));
  return 0;
}

}  // namespace dimmapctl
