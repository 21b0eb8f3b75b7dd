// watchdog.hpp - turns a hang into a failure with a diagnosis.
//
// A Watchdog armed for N seconds, if not destroyed in time, prints what every thread of the
// process is blocked in (its kernel stack and wait channel: a thread stuck in a page fault
// shows handle_userfault, one stuck on storage shows the file system) and ends the process
// with exit status 124, as timeout(1) does. CTest's own timeout is the second line of defence.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace dimmap::reliability {

// Prints every thread's name, state, wait channel and kernel stack to stderr.
void dump_thread_stacks();

class Watchdog {
 public:
  Watchdog(double seconds, std::string what);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace dimmap::reliability
