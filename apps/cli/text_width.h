// Text that fits a terminal: 80 columns by default, the terminal's width when stdout is one
// (main.cpp asks the kernel). Widths count UTF-8 characters (≈, ± and – are one column each).
#pragma once

#include <cstddef>
#include <string>

namespace gpubudget::cli {

inline constexpr std::size_t kDefaultColumns = 80;

// `text` (one paragraph) cut at spaces into lines of at most `width` columns, each after `indent`
// spaces and ending in '\n'. A word longer than a line (a long path) is cut after a '/' that fits,
// else at the line's end.
std::string wrap_paragraph(const std::string& text, std::size_t indent, std::size_t width);

// Every line of `text` longer than `width` cut at spaces, the continuation indented 4 columns past
// the line's own indentation. A verdict ("-> FITS", "-> DOES NOT FIT") is never split, and a verdict
// line breaks after its clause ("...maximum):") when the rest then fits. Lines that fit are
// unchanged; width 0 changes nothing.
std::string wrap_long_lines(const std::string& text, std::size_t width);

}  // namespace gpubudget::cli
