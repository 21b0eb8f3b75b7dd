// dimmap-budget - run a command inside a fresh memory cgroup of a given size.
//
//   dimmap-budget --memory=1G [--drop-caches] [--evict=FILE] -- CMD ARGS...
//
// Exit status: the command's (128 + signal if it was killed, 137 after an OOM kill);
// 2 for a usage error, 125 if dimmap-budget itself failed, 126 if CMD could not be executed,
// 127 if not found.
#include <CLI/CLI.hpp>
#include <budget/budget.hpp>
#include <dimmap/cli.hpp>
#include <dimmap/support/json_summary.hpp>
#include <dimmap/placement.hpp>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int kOwnFailure = 125;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dimmap-budget --memory=SIZE [options] -- CMD [ARGS...]\n"
               "Runs CMD inside a fresh memory cgroup (v1 or v2) limited to --memory (heap + page cache), reports its "
               "peak memory and whether the OOM killer fired on stderr, and removes the cgroup afterwards. Exits with "
               "CMD's status (128 + signal if killed), or 2 for bad options, 125 if dimmap-budget failed, 126/127 if CMD "
               "cannot run.",
               "dimmap-budget"};
  std::string memory;
  budget::Options options;
  std::string report_file;
  bool quiet = false;
  std::vector<std::string> command;
  app.add_option("--memory", memory, "Memory budget for heap + page cache, e.g. 512M, 4G")
      ->required()
      ->check(dimmap::cli::size_check());
  app.add_flag("--drop-caches", options.drop_caches,
               "sync and drop the whole page cache first, so mmap runs start cold (affects the whole machine)");
  app.add_option("--evict", options.evict_files,
                 "Drop FILE's pages from the page cache first (repeatable; a cold start for just that file)");
  app.add_option("--name", options.name, "Name in the cgroup's directory name")->capture_default_str();
  app.add_option("--cgroup-parent", options.cgroup_parent,
                 "Make the cgroup in this cgroup directory (default: inside our own memory cgroup)");
  app.add_option("--report", report_file, "Also write the report as JSON to this file");
  app.add_flag("-q,--quiet", quiet, "Do not print the report on stderr");
  app.prefix_command();  // everything from CMD on belongs to the command, even its options
  if (const auto status = dimmap::cli::parse(app, argc, argv)) return *status;
  command = app.remaining();
  // prefix_command() hands an unknown option over as the command: without "--" before it, a
  // word starting with '-' is a mistyped option, not a program.
  if (!command.empty() && command.front() != "--" && command.front().rfind('-', 0) == 0)
    return dimmap::cli::report_usage_error(app, "unknown option '" + command.front() + "'");
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty())
    return dimmap::cli::report_usage_error(app, "no command given (dimmap-budget --memory=SIZE -- CMD [ARGS...])");
  options.memory_bytes = dimmap::parse_size(memory, "--memory");  // checked while parsing
  if (options.memory_bytes < budget::kMinBudget)
    return dimmap::cli::report_usage_error(app, "--memory: budget '" + memory + "' is too small (at least " +
                                                    dimmap::format_size(budget::kMinBudget) + ")");
  try {
    budget::Report report = budget::run(options, command);
    if (!quiet) std::fprintf(stderr, "dimmap-budget: %s\n", budget::describe(report).c_str());
    if (!report_file.empty()) dimmap::json::write_file(report_file, budget::to_json(report));
    return report.exit_status;
  } catch (const budget::LaunchError& e) {
    std::fprintf(stderr, "dimmap-budget: %s\n", e.what());
    return e.error_number() == ENOENT ? 127 : 126;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dimmap-budget: %s\n", e.what());
    return kOwnFailure;
  }
}
