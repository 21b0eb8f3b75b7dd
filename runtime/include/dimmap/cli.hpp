// cli.hpp - command-line pieces every dimmap tool shares, for CLI11 command lines: size
// checks and the placement settings of a dimmap::PlacementPlan (placement_plan.hpp says what
// each setting means and how flags, DIMMAP_* variables and defaults take precedence).
#pragma once

#include <CLI/CLI.hpp>
#include <dimmap/command_line.hpp>
#include <dimmap/dimmap.h>
#include <dimmap/memory_limit.hpp>
#include <dimmap/placement.hpp>
#include <dimmap/placement_plan.hpp>

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


// Which of the placement settings a command offers (placement_plan.hpp lists them all).
enum PlacementOption : unsigned {
  kPreset = 1u << 0,       // --placement
  kBackend = 1u << 1,      // --backend
  kBuffer = 1u << 2,       // --buffer and --hot-fraction
  kStorage = 1u << 3,      // --storage
  kMemoryDir = 1u << 4,    // --memory-dir
  kDontneed = 1u << 5,     // --dontneed-interval
  kPlaceEach = 1u << 6,    // --place-NAME for every declared structure
  kAllPlacementOptions = (1u << 7) - 1,
};

// Check of one setting's text, the same words as the plan's own validation.
inline CLI::Validator setting_check(Setting setting) {
  return CLI::Validator([setting](std::string& text) { return check_setting(setting, text); },
                        setting == Setting::buffer ? "SIZE" : "");
}

// Registers the chosen placement settings of `plan` on app, in the "Placement" group, with the
// same help text in every tool. Once the command line is parsed, the plan validates every
// setting (flags and DIMMAP_* variables): a bad one is a usage error before any data is opened.
inline void add_placement_options(CLI::App& app, PlacementPlan& plan, unsigned which = kAllPlacementOptions) {
  PlacementSettings& s = plan.settings();
  const auto add = [&](Setting setting, std::string& target, const std::string& flag = "", const std::string& help = "") {
    const SettingInfo& info = setting_info(setting);
    std::string text = help.empty() ? info.help : help;
    if (info.variable) text += std::string(" {") + info.variable + "}";
    app.add_option(flag.empty() ? info.flag : flag, target, text)->check(setting_check(setting))->group("Placement");
  };
  if (which & kPreset) {
    std::string help = setting_info(Setting::placement).help;
    help += std::string(" [") + to_string(plan.default_preset()) + "]";
    add(Setting::placement, s.placement, "", help);
  }
  if (which & kBackend) add(Setting::backend, s.backend);
  if (which & kBuffer) {
    add(Setting::buffer, s.buffer);
    add(Setting::hot_fraction, s.hot_fraction);
  }
  if (which & kStorage) add(Setting::storage, s.storage);
  if (which & kMemoryDir) {
    // An empty --memory-dir (as in --memory-dir '') means anonymous memory, like "anonymous".
    const SettingInfo& info = setting_info(Setting::memory_dir);
    app.add_option_function<std::string>(
           info.flag, [&s](const std::string& dir) { s.memory_dir = dir.empty() ? "anonymous" : dir; },
           std::string(info.help) + " {" + info.variable + "}")
        ->group("Placement");
  }
  if (which & kDontneed) add(Setting::dontneed_interval, s.dontneed_interval);
  if (which & kPlaceEach)
    for (const Structure& st : plan.structures())
      add(Setting::place, s.place[st.name], "--place-" + st.name);
  const CLI::App* top = &app;
  while (top->get_parent()) top = top->get_parent();
  app.final_callback([&plan, top] {
    plan.set_tool_name(top->get_name().empty() ? "dimmap" : tool_name(*top));
    try {
      plan.validate();
    } catch (const Error& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

}  // namespace cli

}  // namespace dimmap
