// output_file.cpp - decimal text outputs through the shared atomic output file.
#include <graph/output_file.hpp>

#include <charconv>

namespace graph {

void write_decimal_lines(const std::string& path, const int64_t* values, size_t count) {
  OutputFile out(path);
  char line[32];
  for (size_t i = 0; i < count; ++i) {
    auto [end, ec] = std::to_chars(line, line + sizeof(line) - 1, values[i]);
    *end++ = '\n';
    out.write(line, static_cast<size_t>(end - line));
  }
  out.commit();
}

}  // namespace graph
