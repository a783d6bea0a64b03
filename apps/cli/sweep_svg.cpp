#include "sweep_svg.h"

#include <algorithm>

#include <fmt/format.h>

namespace gpubudget::cli {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string thousands(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i] != '-' && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

std::string sweep_svg(const SweepChart& chart, const std::vector<SweepRow>& rows) {
  constexpr int kLabelWidth = 330, kBarWidth = 520, kRight = 430, kRow = 26, kTop = 70, kBottom = 50;
  const int width = kLabelWidth + kBarWidth + kRight;
  const int height = kTop + kRow * static_cast<int>(rows.size()) + kBottom;
  std::int64_t scale_max = std::max<std::int64_t>(chart.model_max, 1);
  for (const auto& r : rows) scale_max = std::max(scale_max, r.max_model_len);
  auto x_of = [&](std::int64_t len) {
    return kLabelWidth + static_cast<double>(kBarWidth) * static_cast<double>(len) / static_cast<double>(scale_max);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">{2}</text>\n"
      "<text x=\"16\" y=\"48\" fill=\"#555\">Largest --max-model-len that fits, per configuration "
      "(green: the model's maximum fits; orange: shorter; grey: vLLM would refuse or not start)</text>\n",
      width, height, escape(chart.title));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    const int y = kTop + kRow * static_cast<int>(i);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 10, y + 17,
                       escape(chart.labels[i]));
    const bool full = r.valid && r.starts && r.max_model_len >= chart.model_max;
    const char* colour = !r.valid || !r.starts ? "#b0b0b0" : full ? "#2e8b57" : "#e08a1e";
    if (r.valid && r.max_model_len > 0) {
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", kLabelWidth, y + 4,
                         x_of(r.max_model_len) - kLabelWidth, kRow - 8, colour);
    }
    const std::string value = r.valid ? thousands(r.max_model_len) : "refused";
    const std::string note = chart.notes[i].empty() ? "" : " — " + chart.notes[i];
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#222\">{}{}</text>\n",
                       (r.valid && r.max_model_len > 0 ? x_of(r.max_model_len) : kLabelWidth) + 6, y + 17,
                       escape(value), escape(note));
  }
  const double max_x = x_of(chart.model_max);
  const int axis_y = kTop + kRow * static_cast<int>(rows.size());
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#c0392b\" stroke-width=\"2\" "
                     "stroke-dasharray=\"6,4\"/>\n",
                     max_x, kTop - 6, axis_y + 4);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#c0392b\" text-anchor=\"middle\">model maximum {}</text>\n",
                     max_x, axis_y + 22, thousands(chart.model_max));
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", kLabelWidth, axis_y,
                     kLabelWidth + kBarWidth);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">0</text>\n", kLabelWidth - 4, axis_y + 22);
  svg += "</svg>\n";
  return svg;
}

}  // namespace gpubudget::cli
