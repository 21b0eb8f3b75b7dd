// dimmap-soak - the soak test's command line (arguments only; see soak.hpp).
#include <CLI/CLI.hpp>
#include <dimmap/placement.hpp>

#include <cstdio>
#include <string>

#include "soak.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Soak test of the DI-MMAP engine: many threads read and write random pages of a file through a "
               "buffer much smaller than the file for minutes, checking every read, the runtime's counters, the "
               "process's memory and finally the file. Exit status 0 pass, 1 fail, 3 deadlock."};
  dimmap::reliability::SoakConfig c;
  std::string size = "256M";
  bool quiet = false;
  app.add_option("--dir", c.dir, "Directory for the scratch file (removed at once; on real storage)")
      ->capture_default_str();
  app.add_option("--file-size", size, "Size of the scratch file")->capture_default_str();
  app.add_option("--buffer-ratio", c.buffer_ratio, "The buffer is this fraction (1/N) of the file")
      ->capture_default_str();
  app.add_option("--threads", c.threads, "Threads")->capture_default_str();
  app.add_option("--seconds", c.seconds, "Duration")->capture_default_str();
  app.add_option("--write-fraction", c.write_fraction, "Share of operations that write a whole page")
      ->capture_default_str();
  app.add_option("--sample", c.sample_seconds, "Seconds between samples of counters and memory")
      ->capture_default_str();
  app.add_option("--stall", c.stall_seconds, "Seconds without any completed operation that count as a deadlock")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "Seed")->capture_default_str();
  app.add_flag("--quiet", quiet, "No progress lines on stderr");
  CLI11_PARSE(app, argc, argv);
  c.progress = !quiet;
  try {
    c.file_bytes = dimmap::parse_size(size, "--file-size");
    const auto result = dimmap::reliability::run_soak(c);
    std::fputs(dimmap::reliability::to_text(c, result).c_str(), stdout);
    return result.failures.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dimmap-soak: %s\n", e.what());
    return 2;
  }
}
