// writeback_starter.cpp - sync_file_range(SYNC_FILE_RANGE_WRITE) through io_uring's workers, so
// the caller never sleeps in the block layer's writeback throttling (writeback_starter.hpp).
#include "writeback_starter.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "log.hpp"

#ifdef DIMMAP_HAVE_LIBURING
#include <liburing.h>
#endif

namespace dimmap::detail {

WritebackStarter::WritebackStarter(unsigned depth) : depth_(depth) {
#ifdef DIMMAP_HAVE_LIBURING
  const char* want = std::getenv("DIMMAP_IO");
  if (want && !std::strcmp(want, "threads")) return;  // no io_uring wanted: each call at once
  auto* ring = new io_uring;
  if (int rc = io_uring_queue_init(depth, ring, 0); rc < 0) {
    log(LogLevel::debug, "writeback starts: io_uring refused (%s), each call is made at once", std::strerror(-rc));
    delete ring;
    return;
  }
  ring_ = ring;
#endif
}

WritebackStarter::~WritebackStarter() {
#ifdef DIMMAP_HAVE_LIBURING
  if (!ring_) return;
  std::vector<uint64_t> tags;
  finished(&tags, true);
  io_uring_queue_exit(ring_);
  delete ring_;
#endif
}

bool WritebackStarter::start(int fd, uint64_t off, uint64_t len, uint64_t tag) {
#ifdef DIMMAP_HAVE_LIBURING
  if (ring_) {
    if (in_flight_ >= depth_) return false;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_);
    if (!sqe) return false;
    // io_uring_prep_sync_file_range takes the length as 32 bits: a range is a few MiB at most.
    io_uring_prep_sync_file_range(sqe, fd, static_cast<unsigned>(len), static_cast<off_t>(off), SYNC_FILE_RANGE_WRITE);
    io_uring_sqe_set_data64(sqe, tag);
    ++in_flight_;
    ++queued_;
    return true;
  }
#endif
  sync_file_range(fd, static_cast<off_t>(off), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
  done_now_.push_back(tag);
  return true;
}

void WritebackStarter::submit() {
#ifdef DIMMAP_HAVE_LIBURING
  if (!ring_ || queued_ == 0) return;
  if (int rc = io_uring_submit(ring_); rc < 0) log(LogLevel::warn, "writeback starts: io_uring_submit: %s", std::strerror(-rc));
  queued_ = 0;
#endif
}

void WritebackStarter::finished(std::vector<uint64_t>* tags, bool wait) {
  tags->insert(tags->end(), done_now_.begin(), done_now_.end());
  done_now_.clear();
#ifdef DIMMAP_HAVE_LIBURING
  if (!ring_) return;
  if (wait) submit();
  while (in_flight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    const int rc = wait ? io_uring_wait_cqe(ring_, &cqe) : io_uring_peek_cqe(ring_, &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0 || !cqe) break;
    // A failed start needs no answer here: the write's own failure is what the caller looks
    // for (the file's writeback error), before it drops a page.
    if (cqe->res < 0) log(LogLevel::debug, "writeback start failed: %s", std::strerror(-cqe->res));
    tags->push_back(io_uring_cqe_get_data64(cqe));
    io_uring_cqe_seen(ring_, cqe);
    --in_flight_;
  }
#else
  (void)wait;
#endif
}

}  // namespace dimmap::detail
