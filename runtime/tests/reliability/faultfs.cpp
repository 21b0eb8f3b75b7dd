// faultfs - a FUSE file system that passes files of a backing directory through and fails
// chosen requests on demand, so tests can feed real I/O errors to the userfaultfd engine
// (which reads and writes through io_uring: an LD_PRELOAD shim on pread/pwrite would never
// see its I/O, a kernel file system does).
//
//   faultfs BACKING_DIR MOUNTPOINT      (stays in the foreground; unmount or SIGTERM to stop)
//
//   faultfs --page-cache BACKING_DIR MOUNTPOINT
//                                       files go through the kernel's page cache instead, so
//                                       they can be mapped with plain mmap (the pagecache engine)
//
// Every file is opened with direct_io, so each read and write reaches this process (no page
// cache in between). The control file MOUNTPOINT/.faultfs takes one rule per line:
//   clear                                      remove every rule
//   OP ACTION [file=NAME] [offset=N] [length=N] [count=N]
//     OP      read | write | fsync
//     ACTION  an errno name (EIO, ENOSPC, EDQUOT, EROFS, EFBIG, ENOTCONN) to fail with, or
//             "hang" to never answer (until the server is killed: the kernel then aborts
//             the connection; requests in flight fail with ECONNABORTED, later ones ENOTCONN)
//     file    only requests on this file (path below the mount, without the leading '/')
//     offset, length   only requests overlapping these bytes (length 0 = to the end)
//     count   fire this many times, then retire (0 = forever)
// Reading the control file returns the counters:
//   reads=N writes=N fsyncs=N failed_reads=N failed_writes=N failed_fsyncs=N hung=N
#define FUSE_USE_VERSION 31
#include <fuse3/fuse.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr const char* kControl = "/.faultfs";

enum class Op { read, write, fsync };

struct Rule {
  Op op = Op::read;
  int err = EIO;        // 0 = hang
  std::string file;     // "" = any file
  uint64_t offset = 0;
  uint64_t length = 0;  // 0 = to the end of the file
  uint64_t count = 0;   // 0 = forever
};

struct Counters {
  std::atomic<uint64_t> requests[3] = {};
  std::atomic<uint64_t> failed[3] = {};
  std::atomic<uint64_t> hung{0};
};

std::string g_backing;
bool g_page_cache = false;  // --page-cache: data files are cached (and mappable) by the kernel
std::mutex g_mu;
std::vector<Rule> g_rules;
Counters g_count;

std::string backing_path(const char* path) { return g_backing + path; }

bool parse_op(const std::string& word, Op* op) {
  if (word == "read") *op = Op::read;
  else if (word == "write") *op = Op::write;
  else if (word == "fsync") *op = Op::fsync;
  else return false;
  return true;
}

int parse_errno(const std::string& word) {
  static const struct {
    const char* name;
    int value;
  } kNames[] = {{"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT},
                {"EROFS", EROFS},   {"EFBIG", EFBIG},   {"ENOTCONN", ENOTCONN}};
  for (const auto& n : kNames)
    if (word == n.name) return n.value;
  return -1;
}

// One control line; returns 0 or -EINVAL.
int apply_control_line(const std::string& line) {
  std::istringstream in(line);
  std::string op_word, action;
  if (!(in >> op_word)) return 0;  // blank line
  if (op_word == "clear") {
    std::lock_guard<std::mutex> lock(g_mu);
    g_rules.clear();
    return 0;
  }
  Rule rule;
  if (!parse_op(op_word, &rule.op) || !(in >> action)) return -EINVAL;
  if (action == "hang") {
    rule.err = 0;
  } else if ((rule.err = parse_errno(action)) < 0) {
    return -EINVAL;
  }
  for (std::string kv; in >> kv;) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) return -EINVAL;
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "file") {
      rule.file = value;
      continue;
    }
    char* end = nullptr;
    const uint64_t n = std::strtoull(value.c_str(), &end, 0);
    if (value.empty() || *end) return -EINVAL;
    if (key == "offset") rule.offset = n;
    else if (key == "length") rule.length = n;
    else if (key == "count") rule.count = n;
    else return -EINVAL;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_rules.push_back(rule);
  return 0;
}

// The errno a request must fail with, 0 to serve it; blocks forever for "hang".
int injected(Op op, const char* path, uint64_t offset, uint64_t size) {
  const int idx = static_cast<int>(op);
  g_count.requests[idx]++;
  int err = -1;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto it = g_rules.begin(); it != g_rules.end(); ++it) {
      if (it->op != op || (!it->file.empty() && it->file != path + 1)) continue;
      const uint64_t end = it->length ? it->offset + it->length : UINT64_MAX;
      if (op != Op::fsync && (offset + size <= it->offset || offset >= end)) continue;
      err = it->err;
      if (it->count && --it->count == 0) g_rules.erase(it);
      break;
    }
  }
  if (err < 0) return 0;
  if (err == 0) {  // hang: the request stays unanswered while this thread sleeps
    g_count.hung++;
    for (;;) pause();
  }
  g_count.failed[idx]++;
  return err;
}

std::string counters_text() {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "reads=%llu writes=%llu fsyncs=%llu failed_reads=%llu failed_writes=%llu failed_fsyncs=%llu "
                "hung=%llu\n",
                static_cast<unsigned long long>(g_count.requests[0].load()),
                static_cast<unsigned long long>(g_count.requests[1].load()),
                static_cast<unsigned long long>(g_count.requests[2].load()),
                static_cast<unsigned long long>(g_count.failed[0].load()),
                static_cast<unsigned long long>(g_count.failed[1].load()),
                static_cast<unsigned long long>(g_count.failed[2].load()),
                static_cast<unsigned long long>(g_count.hung.load()));
  return buf;
}

bool is_control(const char* path) { return std::strcmp(path, kControl) == 0; }

// ---- file system operations ----

void* fs_init(struct fuse_conn_info*, struct fuse_config* cfg) {
  cfg->direct_io = g_page_cache ? 0 : 1;  // every read and write comes here (or, cached, every miss)
  cfg->kernel_cache = 0;
  cfg->attr_timeout = 0;
  cfg->entry_timeout = 0;
  cfg->negative_timeout = 0;
  return nullptr;
}

int fs_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
  if (is_control(path)) {
    std::memset(st, 0, sizeof *st);
    st->st_mode = S_IFREG | 0666;
    st->st_nlink = 1;
    st->st_size = 4096;
    return 0;
  }
  const int rc = fi ? fstat(static_cast<int>(fi->fh), st) : lstat(backing_path(path).c_str(), st);
  return rc == 0 ? 0 : -errno;
}

int fs_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, struct fuse_file_info*,
               enum fuse_readdir_flags) {
  DIR* dir = opendir(backing_path(path).c_str());
  if (!dir) return -errno;
  for (struct dirent* e; (e = readdir(dir)) != nullptr;) fill(buf, e->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  closedir(dir);
  if (std::strcmp(path, "/") == 0) fill(buf, kControl + 1, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  return 0;
}

int fs_open(const char* path, struct fuse_file_info* fi) {
  if (is_control(path)) {
    fi->fh = UINT64_MAX;
    fi->direct_io = 1;
    return 0;
  }
  // O_DIRECT is the kernel's business (direct_io already bypasses its cache); the backing
  // file is opened buffered so any offset and length works.
  const int fd = open(backing_path(path).c_str(), fi->flags & ~(O_DIRECT | O_CREAT | O_EXCL));
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  fi->direct_io = !g_page_cache;
  return 0;
}

int fs_create(const char* path, mode_t mode, struct fuse_file_info* fi) {
  if (is_control(path)) return -EEXIST;
  const int fd = open(backing_path(path).c_str(), (fi->flags & ~O_DIRECT) | O_CREAT, mode);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  fi->direct_io = !g_page_cache;
  return 0;
}

int fs_read(const char* path, char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  if (fi->fh == UINT64_MAX) {
    const std::string text = counters_text();
    if (static_cast<size_t>(off) >= text.size()) return 0;
    const size_t n = std::min(size, text.size() - static_cast<size_t>(off));
    std::memcpy(buf, text.data() + off, n);
    return static_cast<int>(n);
  }
  if (int err = injected(Op::read, path, static_cast<uint64_t>(off), size)) return -err;
  const ssize_t n = pread(static_cast<int>(fi->fh), buf, size, off);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_write(const char* path, const char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  if (fi->fh == UINT64_MAX) {
    std::istringstream lines(std::string(buf, size));
    for (std::string line; std::getline(lines, line);)
      if (int rc = apply_control_line(line); rc < 0) {
        std::fprintf(stderr, "faultfs: bad control line '%s'\n", line.c_str());
        return rc;
      }
    return static_cast<int>(size);
  }
  if (int err = injected(Op::write, path, static_cast<uint64_t>(off), size)) return -err;
  const ssize_t n = pwrite(static_cast<int>(fi->fh), buf, size, off);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_fsync(const char* path, int datasync, struct fuse_file_info* fi) {
  if (fi->fh == UINT64_MAX) return 0;
  if (int err = injected(Op::fsync, path, 0, 0)) return -err;
  const int fd = static_cast<int>(fi->fh);
  return (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : -errno;
}

int fs_release(const char*, struct fuse_file_info* fi) {
  if (fi->fh != UINT64_MAX) close(static_cast<int>(fi->fh));
  return 0;
}

int fs_truncate(const char* path, off_t size, struct fuse_file_info* fi) {
  if (is_control(path)) return 0;  // "echo rule > .faultfs" truncates first
  const int rc = fi && fi->fh != UINT64_MAX ? ftruncate(static_cast<int>(fi->fh), size)
                                            : truncate(backing_path(path).c_str(), size);
  return rc == 0 ? 0 : -errno;
}

int fs_unlink(const char* path) { return unlink(backing_path(path).c_str()) == 0 ? 0 : -errno; }

int fs_statfs(const char*, struct statvfs* st) {
  return statvfs(g_backing.c_str(), st) == 0 ? 0 : -errno;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--page-cache") == 0) {
    g_page_cache = true;
    ++argv;
    --argc;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: faultfs [--page-cache] BACKING_DIR MOUNTPOINT\n"
                         "Passes BACKING_DIR through at MOUNTPOINT and fails requests as told by "
                         "MOUNTPOINT/.faultfs (see the head of faultfs.cpp).\n");
    return 2;
  }
  char* real = realpath(argv[1], nullptr);
  if (!real) {
    std::fprintf(stderr, "faultfs: backing directory '%s': %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  g_backing = real;
  std::free(real);

  struct fuse_operations ops = {};
  ops.init = fs_init;
  ops.getattr = fs_getattr;
  ops.readdir = fs_readdir;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.fsync = fs_fsync;
  ops.release = fs_release;
  ops.truncate = fs_truncate;
  ops.unlink = fs_unlink;
  ops.statfs = fs_statfs;
  // Foreground and multi-threaded: a hung request must not stop the others.
  char prog[] = "faultfs", fg[] = "-f", opt[] = "-o", opts[] = "fsname=faultfs,subtype=faultfs";
  char* fuse_argv[] = {prog, fg, opt, opts, argv[2], nullptr};
  return fuse_main(5, fuse_argv, &ops, nullptr);
}
