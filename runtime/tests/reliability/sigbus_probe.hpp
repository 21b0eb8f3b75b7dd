// sigbus_probe.hpp - touch mapped memory and learn whether the access raised SIGBUS.
//
// The engine reports a page it cannot fill by SIGBUS to the faulting thread (as Linux does
// for a file mapping whose read fails). These helpers catch it per access and per thread;
// a SIGBUS anywhere else still kills the process as usual.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dimmap::reliability {

// Reads *p into *out; false if the access raised SIGBUS (then *out is untouched).
bool try_read(const uint64_t* p, uint64_t* out);
// Stores v at *p; false if the access raised SIGBUS.
bool try_write(uint64_t* p, uint64_t v);
// Writes version `version` of page `page` (pattern.hpp) into the mapped page at p; false on
// SIGBUS (the page may then hold a mix of old and new words).
bool try_fill_page(uint64_t* p, uint64_t page, uint64_t version);

}  // namespace dimmap::reliability
