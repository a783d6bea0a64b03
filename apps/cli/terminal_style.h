// Colour on a terminal, and never elsewhere: the verdict (FITS green, DOES NOT FIT / WOULD NOT START
// red) and the "warning:" / error prefixes on stderr. `--color=auto` (the default) colours a stream only
// when it is a terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb"; `always` and
// `never` decide alone. JSON and CSV are never coloured.
#pragma once

#include <cstddef>
#include <string>

namespace gpubudget::cli {

// What main.cpp knows of the process's streams; run_cli's default (a library caller, the tests) is no
// terminal, so no colour.
struct Terminal {
  bool out_is_tty = false;
  bool err_is_tty = false;
  bool no_color = false;  // NO_COLOR set and not empty, or TERM=dumb
  std::size_t out_columns = 0;  // stdout's terminal width (0: not a terminal, or unknown: 80 is used)
};

struct ColorChoice {
  bool out = false;
  bool err = false;
};

// `mode` is --color's value: "auto", "always" or "never" (CLI11 checks it).
ColorChoice choose_color(const std::string& mode, const Terminal& terminal);

// `text` with the verdict words coloured; unchanged when it is a JSON document.
std::string color_verdicts(const std::string& text);

// `text` (stderr) with each line's leading "warning:" coloured yellow and "gpubudget:" (an error) red.
std::string color_diagnostics(const std::string& text);

}  // namespace gpubudget::cli
