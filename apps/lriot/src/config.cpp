// config.cpp - names of modes and patterns, and the checks of a configuration.
#include <dimmap/placement.hpp>
#include <lriot/lriot.hpp>

#include <cmath>

namespace lriot {

Mode parse_mode(const std::string& text) {
  if (text == "direct") return Mode::direct;
  if (text == "stdio") return Mode::stdio;
  if (text == "mmap") return Mode::mmap;
  if (text == "dimmap") return Mode::dimmap;
  throw dimmap::Error("unknown mode '" + text + "' (use direct, stdio, mmap or dimmap)");
}

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::direct: return "direct";
    case Mode::stdio: return "stdio";
    case Mode::mmap: return "mmap";
    case Mode::dimmap: return "dimmap";
  }
  return "?";
}

Pattern parse_pattern(const std::string& text) {
  if (text == "uniform") return Pattern::uniform;
  if (text == "partitioned") return Pattern::partitioned;
  throw dimmap::Error("unknown pattern '" + text + "' (use uniform or partitioned)");
}

const char* to_string(Pattern pattern) { return pattern == Pattern::uniform ? "uniform" : "partitioned"; }

void validate(const Config& c) {
  using dimmap::Error;
  if (c.file.empty()) throw Error("--file is required");
  if (c.procs == 0) throw Error("--procs must be at least 1");
  if (c.threads == 0) throw Error("--threads must be at least 1");
  if (c.procs > 1024 || c.threads > 4096) throw Error("--procs is limited to 1024 and --threads to 4096");
  if (!(c.seconds >= 0) || !std::isfinite(c.seconds)) throw Error("--seconds must be a number >= 0");
  if (c.ops == 0 && c.seconds == 0) throw Error("give --ops or --seconds (or both) to say when to stop");
  if (!(c.warmup_seconds >= 0) || !std::isfinite(c.warmup_seconds)) throw Error("--warmup must be a number >= 0");
  if (c.warmup_seconds > 0 && (c.seconds == 0 || c.ops != 0))
    throw Error("--warmup needs a run bounded by --seconds alone (the measured seconds after it), not by --ops");
  const SequenceParams& s = c.sequence;
  if (!(s.write_fraction >= 0.0 && s.write_fraction <= 1.0)) throw Error("--write-fraction must be between 0 and 1");
  if (!(s.partition_ops >= 0.0 && s.partition_ops <= 1.0)) throw Error("--partition-ops must be between 0 and 1");
  if (!(s.partition_space > 0.0 && s.partition_space < 1.0))
    throw Error("--partition-space must be strictly between 0 and 1");
  if (!(c.hot_fraction < 1.0)) throw Error("--hot-fraction must be below 1");
  if (c.mode == Mode::dimmap && c.buffer_bytes) {
    const uint64_t per_proc = c.buffer_bytes / c.procs;
    const uint64_t min = uint64_t{DIMMAP_MIN_BUFFER_PAGES} * 4096;
    if (per_proc < min) {
      const std::string share = c.procs > 1 ? " gives each of the " + std::to_string(c.procs) + " processes " +
                                                  dimmap::format_size(per_proc) + ","
                                            : " is";
      throw Error("--buffer=" + dimmap::format_size(c.buffer_bytes) + share + " less than the " +
                  std::to_string(DIMMAP_MIN_BUFFER_PAGES) + " pages (" + dimmap::format_size(min) +
                  ") a DI-MMAP buffer needs");
    }
  }
}

}  // namespace lriot
