// pin_to_cpu.hpp - tests that need threads on given CPUs (a starved thread, a flush that must
// reach another CPU) pin them with this.
#pragma once

#include <pthread.h>
#include <sched.h>

namespace dimmap::testing {

// Runs the calling thread on `cpu` only (unchanged where the cpuset does not allow it).
inline void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace dimmap::testing
