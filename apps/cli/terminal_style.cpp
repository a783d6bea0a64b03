#include "terminal_style.h"

#include <cstddef>
#include <string_view>

namespace gpubudget::cli {
namespace {

constexpr std::string_view kGreen = "\x1b[1;32m";
constexpr std::string_view kRed = "\x1b[1;31m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kReset = "\x1b[0m";

// Every `word` after `lead` in `text` wrapped in `color` (`lead` itself is left as it is).
void wrap_all(std::string& text, std::string_view lead, std::string_view word, std::string_view color) {
  const std::string whole = std::string(lead) + std::string(word);
  for (std::size_t at = text.find(whole); at != std::string::npos; at = text.find(whole, at)) {
    text.insert(at + whole.size(), kReset);
    text.insert(at + lead.size(), color);
    at += whole.size() + color.size() + kReset.size();
  }
}

}  // namespace

ColorChoice choose_color(const std::string& mode, const Terminal& terminal) {
  if (mode == "always") return {true, true};
  if (mode == "never") return {false, false};
  return {terminal.out_is_tty && !terminal.no_color, terminal.err_is_tty && !terminal.no_color};
}

std::string color_verdicts(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \n");
  if (first == std::string::npos || text[first] == '{' || text[first] == '[') return text;
  std::string out = text;
  wrap_all(out, "-> ", "DOES NOT FIT", kRed);
  wrap_all(out, "", "WOULD NOT START", kRed);
  wrap_all(out, "-> ", "FITS", kGreen);
  return out;
}

std::string color_diagnostics(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 64);
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\n', begin);
    const std::string_view line(text.data() + begin, (end == std::string::npos ? text.size() : end + 1) - begin);
    begin += line.size();
    const std::string_view prefix = line.substr(0, 8) == "warning:"      ? line.substr(0, 8)
                                    : line.substr(0, 10) == "gpubudget:" ? line.substr(0, 10)
                                                                         : std::string_view();
    if (prefix.empty()) {
      out.append(line);
    } else {
      out.append(prefix.size() == 8 ? kYellow : kRed).append(prefix).append(kReset).append(line.substr(prefix.size()));
    }
  }
  return out;
}

}  // namespace gpubudget::cli
