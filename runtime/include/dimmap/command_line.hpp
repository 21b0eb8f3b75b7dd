// command_line.hpp - how every dimmap command-line tool parses its arguments and exits.
//
// Exit status, the same for every tool:
//   0  success (also --help and --version)
//   1  the run failed: a missing, unreadable, empty or malformed input, an I/O error, a
//      failed check (bfs --validate, lriot --verify, ...)
//   2  usage: an unknown option, a missing or bad value, a missing argument
// dimmap-run and dimmap-budget, which exit with their command's status, keep 2 for their own
// usage errors and report their own runtime failures as 125 (as env(1) and timeout(1) do).
//
// Every message goes to stderr as "TOOL: what is wrong", naming the bad value or file.
// Header-only and CLI11-only, so tools that do not link libdimmap (dimmapctl) can use it.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dimmap::cli {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// A usage error only the tool can see after parsing (two options that conflict, a value that
// needs another option): reported like a parse error, with exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The program's name as messages show it (CLI11 names an unnamed app after argv[0]).
inline std::string tool_name(const CLI::App& app) {
  const std::string& name = app.get_name();
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// Prints "TOOL: message" and where to find help on stderr; returns 2.
inline int report_usage_error(const CLI::App& app, const std::string& message) {
  std::cerr << tool_name(app) << ": " << message << "\nRun with --help for more information.\n";
  return kExitUsage;
}

// The exit status for a CLI11 parse outcome: --help and --version print (on stdout) and give 0;
// every other parse error (CLI11's own codes are 100 and up) becomes a usage error, 2.
inline int exit_status(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);
  return report_usage_error(app, e.what());
}

// Parses the command line into app. Returns the exit status when the tool must stop here
// (after --help or a usage error), nothing when it should go on and run.
inline std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exit_status(app, e);
  }
  return std::nullopt;
}

constexpr unsigned kMaxThreads = 4096;

// Check for a --threads option: 1 to 4096 (leave the option out for one thread per core).
inline CLI::Validator thread_count() {
  return CLI::Range(1u, kMaxThreads);
}

// Reads a thread sweep such as "1,2,4" into out; returns "" or what is wrong, naming the item.
inline std::string read_thread_list(const std::string& text, std::vector<unsigned>& out) {
  out.clear();
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    size_t used = 0;
    unsigned long n = 0;
    try {
      n = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || item[0] == '-' || n == 0 || n > kMaxThreads)
      return "'" + item + "' is not a thread count from 1 to " + std::to_string(kMaxThreads);
    out.push_back(static_cast<unsigned>(n));
  }
  return out.empty() ? "no thread count given" : "";
}

// Check for a --threads option that takes a comma-separated sweep; read it with read_thread_list.
inline CLI::Validator thread_list() {
  return CLI::Validator(
      [](std::string& text) {
        std::vector<unsigned> counts;
        return read_thread_list(text, counts);
      },
      "LIST");
}

}  // namespace dimmap::cli
