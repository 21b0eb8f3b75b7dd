// cli.hpp - the placement flags every dimmap tool shares, for CLI11 command lines.
//
//   --backend=mmap|dimmap   what "on storage" means
//   --storage=DIR           where files on storage live
//   --memory-dir=DIR        tmpfs for in-memory files ("" = anonymous memory)
//   --buffer=SIZE           DI-MMAP buffer size (one buffer shared by the tool's regions);
//                           without it DIMMAP_BUFFER, else half the memory limit, at most 256M
//                           (memory_limit.hpp), printed on stderr when the buffer is made
//   --hot-fraction=F        share of the buffer for the hot-page FIFO
//   --dontneed-interval=S   mmap only: MADV_DONTNEED helper every S seconds (0 = off)
//
// Applications map their own presets (in-memory, semi-external, full-external) onto
// memory_placement() and storage_placement().
#pragma once

#include <CLI/CLI.hpp>
#include <dimmap/command_line.hpp>
#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace dimmap {

namespace cli {

// Check for a size option ("4096", "256M", "4G"): a bad size is a usage error naming the text,
// found while parsing instead of once the run has started. Zero is refused unless allowed.
inline CLI::Validator size_check(bool allow_zero = false) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        uint64_t bytes = 0;
        if (dimmap_parse_size(text.c_str(), &bytes) < 0) return dimmap_last_error();
        if (bytes == 0 && !allow_zero) return "size '" + text + "' must be larger than 0";
        return "";
      },
      "SIZE");
}

}  // namespace cli

struct PlacementFlags {
  std::string backend = "mmap";
  std::string storage = ".";
  std::string memory_dir = "/dev/shm";
  std::string buffer;  // "" = not given: DIMMAP_BUFFER, else the memory-limit default
  double hot_fraction = -1.0;  // < 0: DIMMAP_HOT_FRACTION or 0.75
  unsigned dontneed_interval = 0;

  void add_to(CLI::App& app) {
    app.add_option("--backend", backend, "What 'on storage' means: mmap (Linux page cache) or dimmap")
        ->check(CLI::IsMember({"mmap", "dimmap"}))
        ->capture_default_str();
    app.add_option("--storage", storage, "Directory for files on storage")->capture_default_str();
    app.add_option("--memory-dir", memory_dir, "tmpfs directory for in-memory files ('' = anonymous)")
        ->capture_default_str();
    app.add_option("--buffer", buffer,
                   "DI-MMAP buffer size (e.g. 256M, 4G) [DIMMAP_BUFFER, else half the memory limit "
                   "(cgroup or MemAvailable), at most 256M]")
        ->check(cli::size_check());
    app_ = &app;
    app.add_option("--hot-fraction", hot_fraction, "Share of the DI-MMAP buffer for hot pages [0,1)")
        ->check(CLI::Range(-1.0, 0.999));
    app.add_option("--dontneed-interval", dontneed_interval,
                   "mmap backend: MADV_DONTNEED helper thread period in seconds (0 = off)");
  }

  // The DI-MMAP buffer size of this run: --buffer, else DIMMAP_BUFFER, else the default for
  // the memory limit. The first call prints a size that was not given on the command line,
  // and a warning when the size asked for is more than the memory limit, on stderr.
  uint64_t buffer_bytes() {
    if (!buffer_bytes_) {
      const BufferChoice choice = choose_buffer(buffer, memory_limit());
      const std::string tool = tool_for_messages();
      if (!choice.warning.empty()) std::fprintf(stderr, "%s: warning: %s\n", tool.c_str(), choice.warning.c_str());
      if (buffer.empty())
        std::fprintf(stderr, "%s: DI-MMAP buffer %s: %s\n", tool.c_str(), format_size(choice.bytes).c_str(),
                     choice.why.c_str());
      buffer_bytes_ = choice.bytes;
    }
    return *buffer_bytes_;
  }

  // The DI-MMAP buffer all storage regions of this run share (created on first use).
  std::shared_ptr<Buffer> shared_buffer() {
    if (!buffer_) buffer_ = Buffer::create(buffer_bytes(), hot_fraction);
    return buffer_;
  }

  Placement storage_placement() {
    switch (parse_backend(backend)) {
      case Backend::dimmap:
        return Placement::dimmap(storage, shared_buffer());
      case Backend::mmap: {
        Placement p = Placement::mmap(storage);
        p.dontneed_interval_s = dontneed_interval;
        return p;
      }
      case Backend::memory:
        break;
    }
    return memory_placement();
  }

  Placement memory_placement() const {
    return memory_dir.empty() ? Placement::anonymous() : Placement::memory(memory_dir);
  }

 private:
  // The top command's name (CLI11 names an unnamed app after argv[0] only while parsing).
  std::string tool_for_messages() const {
    const CLI::App* top = app_;
    while (top && top->get_parent()) top = top->get_parent();
    return top && !top->get_name().empty() ? cli::tool_name(*top) : "dimmap";
  }

  const CLI::App* app_ = nullptr;
  std::optional<uint64_t> buffer_bytes_;
  std::shared_ptr<Buffer> buffer_;
};

}  // namespace dimmap
