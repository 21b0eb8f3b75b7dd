// lriot.hpp - the Livermore Random I/O Testbench.
//
// P processes x T threads perform 4 KiB operations on one file, following a repeatable page
// sequence that is unique per process (see sequence.hpp). A read fetches one page; a write is
// a read-modify-write of one page (load, modify, store, so the page is dirtied). Four ways to
// reach the file are compared:
//   direct  pread/pwrite with O_DIRECT (the storage device's own rate)
//   stdio   pread/pwrite through the Linux page cache (standard, buffered I/O)
//   mmap    a MAP_SHARED Linux memory map; writes made durable with a final msync
//   dimmap  a DI-MMAP mapping (libdimmap) with a fixed buffer; final dimmap_msync
// The headline rate includes the final sync (msync / fdatasync) of write runs; the sync's time
// is reported separately too.
#pragma once

#include <dimmap/dimmap.h>
#include <lriot/sequence.hpp>

#include <cstdint>
#include <string>

namespace lriot {

enum class Mode { direct, stdio, mmap, dimmap };

Mode parse_mode(const std::string& text);  // throws dimmap::Error naming the choices
const char* to_string(Mode mode);
Pattern parse_pattern(const std::string& text);
const char* to_string(Pattern pattern);

struct Config {
  std::string file;
  Mode mode = Mode::mmap;
  unsigned procs = 1;
  unsigned threads = 16;  // per process
  // Pattern, partition shares, write fraction and seed; pages and procs are filled in by run().
  SequenceParams sequence;
  uint64_t ops = 0;       // operations in all (split evenly over processes); 0 = no limit
  double seconds = 10;    // stop after this long; 0 = no limit (then ops must be set)
  // Run the load this long before the measured part: a steady state, not a cold start.
  // Every count and time of the result starts after it (needs seconds > 0 and no ops limit).
  double warmup_seconds = 0;
  uint64_t buffer_bytes = 0;  // dimmap: buffer for all processes together; 0 = DIMMAP_BUFFER
  double hot_fraction = -1;   // dimmap: share of the buffer for hot pages; < 0 = DIMMAP_HOT_FRACTION
  bool random_advice = true;  // mmap: MADV_RANDOM, stdio: POSIX_FADV_RANDOM (no readahead)
  bool verify = false;        // check every page read and the whole file before and after
  double progress_seconds = 0;  // print progress on stderr this often; 0 = never
};

// Checks what can be checked without the file; throws dimmap::Error naming the flag.
void validate(const Config& config);

// What the whole machine spent (see src/host_counters.hpp).
struct HostCounters {
  double busy_seconds = 0;      // CPU time of all CPUs neither idle nor waiting for I/O (steal excluded)
  double iowait_seconds = 0;    // idle CPU time while a task on that CPU waited for I/O
  uint64_t tlb_shootdowns = 0;  // /proc/interrupts "TLB" (x86), summed over the CPUs
  uint64_t major_faults = 0;    // /proc/vmstat pgmajfault
};

struct Result {
  Config config;
  uint64_t file_bytes = 0;
  uint64_t pages = 0;
  uint64_t hot_pages = 0;           // partitioned runs
  uint64_t buffer_bytes_per_proc = 0;  // dimmap
  double resident_at_start = -1;    // share of the file in the Linux page cache at the start

  uint64_t ops = 0, reads = 0, writes = 0;  // measured: after the warm-up
  uint64_t warmup_reads = 0, warmup_writes = 0;
  double run_seconds = 0;   // from the common start (or the warm-up's end) until the last operation
  double sync_seconds = 0;  // the longest final msync / fdatasync of a process
  double seconds = 0;       // from the common start (or the warm-up's end) until every process had synced
  double iops() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double run_iops() const { return run_seconds > 0 ? static_cast<double>(ops) / run_seconds : 0; }

  bool has_dimmap_stats = false;
  struct dimmap_stats dimmap = {};  // summed over processes; counters after the warm-up

  // Requests the file's block device completed in the measured part (every program's, as
  // /sys/dev/block/MAJ:MIN/stat counts them); none where the file is not on a block device.
  bool has_device_requests = false;
  uint64_t device_reads = 0, device_writes = 0;

  // The whole machine's CPU time, TLB shootdowns and major faults in the measured part (every
  // program's); none where /proc/stat cannot be read.
  bool has_host = false;
  HostCounters host;

  // --verify: pages that failed a check during the run, and the file checked afterwards.
  bool verified = false;
  uint64_t mismatches = 0;
  std::string first_mismatch;
  uint64_t bad_pages_after = 0;
  uint64_t counter_delta = 0;  // sum of the write counters after minus before
  bool ok() const { return !verified || (mismatches == 0 && bad_pages_after == 0 && counter_delta == writes + warmup_writes); }
};

// Runs the benchmark. Throws dimmap::Error for bad input (missing or too small file, a buffer
// too small, a file system without O_DIRECT, ...) and for processes that fail or die.
Result run(const Config& config);

// The result as readable text (several lines) and as one JSON object.
std::string to_text(const Result& result);
std::string to_json(const Result& result);

}  // namespace lriot
