// host_counters.hpp - what the whole machine spent while LRIOT measured: CPU time, TLB
// shootdowns and major faults, from /proc. Beside the device's requests these say where an
// I/O policy's time goes when it is not the device: a mode that keeps the device busy with
// fewer operations a second is paying in CPU, in cross-CPU TLB flushes or in faults.
#pragma once

#include "lriot/lriot.hpp"

namespace lriot::detail {

// The counters since boot; false if /proc/stat cannot be read (the others count 0 where their
// line is missing, as on kernels without a TLB interrupt line).
bool read_host_counters(HostCounters* out);

// now - then, field by field.
HostCounters host_counters_since(const HostCounters& now, const HostCounters& then);

}  // namespace lriot::detail
