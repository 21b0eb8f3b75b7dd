// io_queue.cpp - io_uring and thread-pool implementations of IoQueue.
#include "io_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "c_boundary.hpp"
#include "log.hpp"

#ifdef DIMMAP_HAVE_LIBURING
#include <liburing.h>
#endif

namespace dimmap::detail {
namespace {

void drain_eventfd(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v)) {
  }
}

void signal_eventfd(int fd) {
  uint64_t one = 1;
  ssize_t rc = write(fd, &one, sizeof one);
  (void)rc;  // EAGAIN means the counter is already non-zero: the reader will wake anyway
}

#ifdef DIMMAP_HAVE_LIBURING
class UringQueue final : public IoQueue {
 public:
  static std::unique_ptr<IoQueue> create(unsigned depth, int* err) {
    auto q = std::unique_ptr<UringQueue>(new UringQueue);
    // Reads and writebacks are each bounded by depth.
    unsigned entries = 1;
    while (entries < 2 * depth) entries <<= 1;
    int rc = io_uring_queue_init(entries, &q->ring_, 0);
    if (rc < 0) {
      *err = rc;
      return nullptr;
    }
    q->ring_ok_ = true;
    q->efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (q->efd_ < 0 || (rc = io_uring_register_eventfd(&q->ring_, q->efd_)) < 0) {
      *err = q->efd_ < 0 ? -errno : rc;
      return nullptr;
    }
    return q;
  }

  ~UringQueue() override {
    if (ring_ok_) io_uring_queue_exit(&ring_);
    if (efd_ >= 0) close(efd_);
  }

  void push(const IoOp& op) override {
    struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (!sqe) {  // submission queue full: start what is there, then retry
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    if (op.write)
      io_uring_prep_write(sqe, op.fd, op.buf, static_cast<unsigned>(op.len), op.offset);
    else
      io_uring_prep_read(sqe, op.fd, op.buf, static_cast<unsigned>(op.len), op.offset);
    io_uring_sqe_set_data64(sqe, op.tag);
  }

  int submit() override {
    int rc = io_uring_submit(&ring_);
    return rc < 0 ? rc : 0;
  }

  size_t reap(IoDone* out, size_t max) override {
    drain_eventfd(efd_);
    struct io_uring_cqe* cqes[256];
    size_t total = 0;
    while (total < max) {
      unsigned want = static_cast<unsigned>(std::min<size_t>(max - total, 256));
      unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, want);
      if (n == 0) break;
      for (unsigned i = 0; i < n; ++i) out[total++] = IoDone{io_uring_cqe_get_data64(cqes[i]), cqes[i]->res};
      io_uring_cq_advance(&ring_, n);
    }
    return total;
  }

  int event_fd() const override { return efd_; }
  const char* name() const override { return "io_uring"; }

 private:
  UringQueue() = default;
  struct io_uring ring_ = {};
  bool ring_ok_ = false;
  int efd_ = -1;
};
#endif

// Blocking pread/pwrite on a pool of threads: works everywhere (e.g. where seccomp
// forbids io_uring), at the cost of a context switch per operation.
class ThreadQueue final : public IoQueue {
 public:
  explicit ThreadQueue(unsigned depth) {
    efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    const unsigned n = std::max(1u, std::min(depth, 64u));
    for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { keep_serving("I/O worker", [this] { work(); }); });
  }

  ~ThreadQueue() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    if (efd_ >= 0) close(efd_);
  }

  void push(const IoOp& op) override { staged_.push_back(op); }

  int submit() override {
    if (staged_.empty()) return 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const IoOp& op : staged_) todo_.push_back(op);
    }
    staged_.clear();
    cv_.notify_all();
    return 0;
  }

  size_t reap(IoDone* out, size_t max) override {
    drain_eventfd(efd_);
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = std::min(max, done_.size());
    for (size_t i = 0; i < n; ++i) out[i] = done_[i];
    done_.erase(done_.begin(), done_.begin() + static_cast<long>(n));
    if (!done_.empty()) signal_eventfd(efd_);
    return n;
  }

  int event_fd() const override { return efd_; }
  const char* name() const override { return "threads"; }

 private:
  void work() {
    for (;;) {
      IoOp op;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !todo_.empty(); });
        if (stop_) return;
        op = todo_.front();
        todo_.pop_front();
      }
      ssize_t rc = op.write ? pwrite(op.fd, op.buf, op.len, static_cast<off_t>(op.offset))
                            : pread(op.fd, op.buf, op.len, static_cast<off_t>(op.offset));
      if (rc < 0) rc = -errno;
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_.push_back(IoDone{op.tag, rc});
      }
      signal_eventfd(efd_);
    }
  }

  int efd_ = -1;
  std::vector<IoOp> staged_;  // touched only by the submitting thread
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<IoOp> todo_;
  std::vector<IoDone> done_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<IoQueue> make_io_queue(unsigned depth, int* err) {
  const char* want = std::getenv("DIMMAP_IO");
  const bool force_threads = want && !std::strcmp(want, "threads");
#ifdef DIMMAP_HAVE_LIBURING
  if (!force_threads) {
    int rc = 0;
    if (auto q = UringQueue::create(depth, &rc)) return q;
    log(LogLevel::info, "io_uring unavailable (%s): using a thread pool for I/O", std::strerror(-rc));
  }
#else
  (void)force_threads;
#endif
  auto q = std::make_unique<ThreadQueue>(depth);
  if (q->event_fd() < 0) {
    *err = fail(errno, "cannot create an eventfd: %s", std::strerror(errno));
    return nullptr;
  }
  return q;
}

}  // namespace dimmap::detail
