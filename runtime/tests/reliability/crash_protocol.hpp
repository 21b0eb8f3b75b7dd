// crash_protocol.hpp - what crash_writer tells the crash-consistency test through a pipe.
//
// Before a thread writes a round it sends `start`; after the msync covering the round
// returned it sends `durable`. A round writes version `version` into every word of pages
// first, first + stride, ... (count pages). Messages are smaller than PIPE_BUF, so each
// arrives whole or not at all, even when the writer is killed.
#pragma once

#include <cstdint>

namespace dimmap::reliability {

enum class CrashMsg : uint32_t { start = 1, durable = 2 };

struct CrashRecord {
  CrashMsg type;
  uint32_t version;
  uint32_t first;
  uint32_t stride;
  uint32_t count;
  uint32_t thread;
};
static_assert(sizeof(CrashRecord) == 24);

}  // namespace dimmap::reliability
