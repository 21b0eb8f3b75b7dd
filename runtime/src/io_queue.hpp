// io_queue.hpp - asynchronous page reads and writes for the engine's fault server.
// io_uring when the kernel allows it (one system call submits or reaps many requests),
// else a pool of threads doing pread/pwrite. Completions are signalled on an eventfd so
// the server can poll it beside the userfaultfd.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace dimmap::detail {

struct IoOp {
  bool write = false;
  int fd = -1;
  char* buf = nullptr;
  size_t len = 0;
  uint64_t offset = 0;
  uint64_t tag = 0;  // returned with the completion
};

struct IoDone {
  uint64_t tag;
  ssize_t result;  // bytes transferred or -errno
};

class IoQueue {
 public:
  virtual ~IoQueue() = default;
  // Queues an operation; it starts at the next submit().
  virtual void push(const IoOp& op) = 0;
  // Starts everything queued. Returns 0 or -errno.
  virtual int submit() = 0;
  // Moves up to max finished operations into out without blocking; returns how many.
  virtual size_t reap(IoDone* out, size_t max) = 0;
  // Readable when completions may be waiting (reap() clears it).
  virtual int event_fd() const = 0;
  virtual const char* name() const = 0;
  // Nanoseconds until a held completion becomes due (latency models), or -1 if none is held.
  virtual int64_t ns_until_next() const { return -1; }
  // Takes an operation the caller has already done (a read memory could answer at once)
  // whose completion a latency model still holds until it is due; false where no model
  // holds completions (the caller completes it itself).
  virtual bool hold_done(const IoOp&, ssize_t) { return false; }
};

// depth bounds the operations in flight. Prefers io_uring; DIMMAP_IO=threads forces the pool.
std::unique_ptr<IoQueue> make_io_queue(unsigned depth, int* err);

}  // namespace dimmap::detail
