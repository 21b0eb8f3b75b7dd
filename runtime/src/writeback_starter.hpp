// writeback_starter.hpp - starts the writeback of file ranges without waiting for it.
//
// sync_file_range(SYNC_FILE_RANGE_WRITE) only starts writes, but the call itself can block for
// long: the block layer's writeback throttling (wbt) holds buffered writes back while reads are
// in flight, and the caller sleeps in the submission. The pagecache engine's keeper must not
// sleep there (while it does, nothing keeps the mapped pages within the buffer), so the calls
// go through io_uring, which runs them on its own kernel workers. Without io_uring (no
// liburing at build time, a kernel or sandbox that refuses it, or DIMMAP_IO=threads) each call
// is made at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

struct io_uring;

namespace dimmap::detail {

class WritebackStarter {
 public:
  // depth bounds the calls in flight.
  explicit WritebackStarter(unsigned depth);
  ~WritebackStarter();  // waits for the calls in flight
  WritebackStarter(const WritebackStarter&) = delete;
  WritebackStarter& operator=(const WritebackStarter&) = delete;

  // Whether calls run beside the caller (io_uring), not in start().
  bool asynchronous() const { return ring_ != nullptr; }

  // Queues the start of [off, off + len) of fd's writeback, to go at the next submit() (made
  // at once without io_uring); tag comes back from finished(). False when depth calls are in
  // flight: try again later.
  bool start(int fd, uint64_t off, uint64_t len, uint64_t tag);
  void submit();

  // Appends the tags of the calls that returned since the last look; with wait, waits for
  // every call in flight first (before the descriptors they use are closed).
  void finished(std::vector<uint64_t>* tags, bool wait);

  size_t in_flight() const { return in_flight_; }

 private:
  io_uring* ring_ = nullptr;
  unsigned depth_;
  size_t in_flight_ = 0;
  size_t queued_ = 0;                // prepared, not yet submitted
  std::vector<uint64_t> done_now_;  // the calls made at once (no io_uring)
};

}  // namespace dimmap::detail
