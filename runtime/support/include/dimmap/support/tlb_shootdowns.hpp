// tlb_shootdowns.hpp - the TLB shootdown interrupts the machine has taken, as the tools that
// measure what an unmap or a run costs count them.
#pragma once

#include <cstdint>
#include <optional>

namespace dimmap::support {

// The sum over the CPUs of /proc/interrupts' "TLB:" line (x86: TLB shootdowns) since boot,
// or nullopt where the kernel has no such line.
std::optional<uint64_t> tlb_shootdowns();

}  // namespace dimmap::support
