// host_counters.cpp - see host_counters.hpp. Formats: Documentation/filesystems/proc.rst
// (/proc/stat's "cpu" line in USER_HZ ticks: user nice system idle iowait irq softirq steal).
#include "host_counters.hpp"

#include <dimmap/support/tlb_shootdowns.hpp>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace lriot::detail {
namespace {

bool read_cpu_line(HostCounters* out) {
  FILE* f = std::fopen("/proc/stat", "re");
  if (!f) return false;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
                            &irq, &softirq);
  std::fclose(f);
  if (n != 7) return false;
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  out->busy_seconds = static_cast<double>(user + nice + system + irq + softirq) * tick;
  out->iowait_seconds = static_cast<double>(iowait) * tick;
  return true;
}

uint64_t major_faults() {
  std::ifstream in("/proc/vmstat");
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value)
    if (name == "pgmajfault") return value;
  return 0;
}

}  // namespace

bool read_host_counters(HostCounters* out) {
  if (!read_cpu_line(out)) return false;
  out->tlb_shootdowns = dimmap::support::tlb_shootdowns().value_or(0);
  out->major_faults = major_faults();
  return true;
}

HostCounters host_counters_since(const HostCounters& now, const HostCounters& then) {
  HostCounters d;
  d.busy_seconds = now.busy_seconds - then.busy_seconds;
  d.iowait_seconds = now.iowait_seconds - then.iowait_seconds;
  d.tlb_shootdowns = now.tlb_shootdowns - then.tlb_shootdowns;
  d.major_faults = now.major_faults - then.major_faults;
  return d;
}

}  // namespace lriot::detail
