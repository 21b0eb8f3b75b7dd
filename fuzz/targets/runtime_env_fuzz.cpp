// Fuzz target: the runtime's configuration from the environment (dimmap_config_init: the
// DIMMAP_* variables, including the DIMMAP_PERMA latency-model spec) and the PerMA model
// parser behind dimmap_perma_latency_ns. Each input line is the value of one variable.
// Properties: a configuration init accepts is one validate accepts; a refusal says why.
#include <dimmap/dimmap.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_input.hpp"

namespace {

const char* const kVariables[] = {"DIMMAP_BUFFER",   "DIMMAP_HOT_FRACTION", "DIMMAP_EVICT_FRACTION",
                                  "DIMMAP_EVICT_BATCH", "DIMMAP_IO_DEPTH",  "DIMMAP_SPIN_US",
                                  "DIMMAP_DIRECT_IO", "DIMMAP_ENGINE",      "DIMMAP_PERMA"};
constexpr size_t kCount = sizeof kVariables / sizeof kVariables[0];

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using dimmap::fuzz::property_failed;
  const auto lines = dimmap::fuzz::set_environment(data, size, kVariables, kCount);
  struct dimmap_config cfg;
  const int rc = dimmap_config_init(&cfg);
  if (rc == 0) {
    if (dimmap_config_validate(&cfg) != 0)
      property_failed(std::string("init accepted a configuration validate refuses: ") + dimmap_last_error());
    if (!(cfg.hot_fraction >= 0 && cfg.hot_fraction < 1) || !(cfg.evict_fraction > 0 && cfg.evict_fraction < 0.5))
      property_failed("accepted fractions out of range");
  } else if (rc != -EINVAL || dimmap_last_error()[0] == '\0') {
    property_failed("a refused configuration must return -EINVAL with a message");
  }

  // The latency model on its own, with DIMMAP_PERMA's line as its spec.
  if (lines.size() == kCount) {
    const std::string spec = lines[kCount - 1].substr(0, lines[kCount - 1].find('\0'));
    uint64_t ns1 = 0, ns64 = 0;
    if (dimmap_perma_latency_ns(spec.c_str(), 1, 4096, &ns1) == 0 &&
        dimmap_perma_latency_ns(spec.c_str(), 64, 4096, &ns64) != 0)
      property_failed("a PerMA spec accepted for 1 request was refused for 64: '" + spec + "'");
  }
  for (const char* v : kVariables) unsetenv(v);
  return 0;
}
