#include "sweep_svg.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "text_width.h"

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

std::vector<std::string> lines_of(const std::string& text, std::size_t columns) {
  std::vector<std::string> out;
  std::istringstream wrapped(wrap_paragraph(text, 0, columns));
  for (std::string line; std::getline(wrapped, line);) out.push_back(line);
  return out;
}

// Geometry, in SVG user units (px at 100%). 13 px DejaVu Sans averages under 7.5 px a character, so a
// reason wrapped at kReasonColumns fits the width of the two bar panels.
constexpr int kLabelWidth = 300;  // right-aligned row labels end 10 px before it
constexpr int kPanelWidth = 330;  // each bar panel; bars use at most kBarShare of it, the rest is the value
constexpr double kBarShare = 0.72;
constexpr int kLengthWidth = 230;  // the largest-length figure
constexpr int kRow = 26, kLine = 16, kTop = 96, kBottom = 64;
constexpr std::size_t kReasonColumns = 84;
constexpr double kCharWidth = 7.6;  // a generous average for 13 px text: legend entries never touch
constexpr const char* kFull = "#2e8b57";    // the target length fits
constexpr const char* kShort = "#e08a1e";   // only a shorter length fits
constexpr const char* kRefused = "#9a9a9a";  // refused, no start, no room

}  // namespace

std::string sweep_svg(const SweepChart& chart, const std::vector<SweepRow>& rows) {
  const int tokens_x = kLabelWidth, concurrency_x = kLabelWidth + kPanelWidth, length_x = kLabelWidth + 2 * kPanelWidth;
  const int width = length_x + kLengthWidth;
  const std::int64_t target = std::max<std::int64_t>(chart.target_len, 1);
  std::int64_t max_tokens = target;
  double max_concurrency = 1;
  for (const auto& r : rows) {
    if (!r.valid || !r.starts) continue;
    max_tokens = std::max(max_tokens, r.kv_cache_tokens);
    max_concurrency = std::max(max_concurrency, r.concurrency_at_target);
  }
  auto bar = [](double value, double max) { return kPanelWidth * kBarShare * value / max; };

  // Row heights: a refused row is as tall as its wrapped reason.
  std::vector<std::vector<std::string>> reasons(rows.size());
  std::vector<int> row_top(rows.size() + 1, kTop);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!chart.notes[i].empty()) reasons[i] = lines_of(chart.notes[i], kReasonColumns);
    const int height = std::max(kRow, 10 + kLine * static_cast<int>(reasons[i].size()));
    row_top[i + 1] = row_top[i] + height;
  }
  const int axis_y = row_top.back();
  const int height = axis_y + kBottom;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"16\" y=\"26\" font-size=\"17\" font-weight=\"bold\">{2}</text>\n"
      "<text x=\"16\" y=\"47\" fill=\"#444\">Per GPU configuration: the KV cache in tokens, the requests of {3} tokens "
      "it holds at once, and the largest --max-model-len that fits.</text>\n",
      width, height, escape(chart.title), thousands(target));
  // The legend: a swatch and its words, each entry after the previous one's words.
  double legend_x = 16;
  for (const auto& [colour, words] : {std::pair{kFull, thousands(target) + " tokens fit"},
                                      std::pair{kShort, std::string("only a shorter length fits")},
                                      std::pair{kRefused, std::string("vLLM would refuse it or not start (the reason "
                                                                      "in the row)")}}) {
    svg += fmt::format("<rect x=\"{0:.0f}\" y=\"56\" width=\"12\" height=\"12\" fill=\"{1}\"/>"
                       "<text x=\"{2:.0f}\" y=\"67\" fill=\"#444\">{3}</text>\n",
                       legend_x, colour, legend_x + 18, escape(words));
    legend_x += 18 + kCharWidth * static_cast<double>(words.size()) + 24;
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">KV cache (tokens)</text>\n"
      "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Requests of {} tokens at once</text>\n"
      "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Largest --max-model-len</text>\n",
      tokens_x, kTop - 8, concurrency_x, kTop - 8, thousands(target), length_x + 8, kTop - 8);

  // Reference lines at one request of the target length (tokens = target, concurrency 1x).
  const double one_request_tokens = tokens_x + bar(static_cast<double>(target), static_cast<double>(max_tokens));
  const double one_request = concurrency_x + bar(1, max_concurrency);
  // A bar's figure starts after the bar, and after the reference line when the line would cross it.
  auto figure_x = [](double bar_end, const std::string& figure, double line_x) {
    const double x = bar_end + 6, end = x + kCharWidth * static_cast<double>(figure.size());
    return x < line_x + 4 && end > line_x - 4 ? line_x + 6 : x;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    const int y = row_top[i];
    if (i % 2 == 1) {
      svg += fmt::format("<rect x=\"8\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f6f8\"/>\n", y, width - 16,
                         row_top[i + 1] - y);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 10, y + 17,
                       escape(chart.labels[i]));
    if (!reasons[i].empty()) {
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"6\" height=\"{}\" fill=\"{}\"/>\n", tokens_x, y + 4,
                         row_top[i + 1] - y - 8, kRefused);
      svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#333\">", tokens_x + 14, y + 17);
      for (std::size_t k = 0; k < reasons[i].size(); ++k) {
        svg += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", tokens_x + 14, k == 0 ? 0 : kLine,
                           escape(reasons[i][k]));
      }
      svg += "</text>\n";
      continue;
    }
    const bool full = r.max_model_len >= target;
    const char* colour = full ? kFull : kShort;
    const double tokens_bar = bar(static_cast<double>(r.kv_cache_tokens), static_cast<double>(max_tokens));
    const double concurrency_bar = bar(r.concurrency_at_target, max_concurrency);
    const std::string tokens = thousands(r.kv_cache_tokens), requests = fmt::format("{:.2f}x", r.concurrency_at_target);
    svg += fmt::format(
        "<rect x=\"{0}\" y=\"{1}\" width=\"{2:.1f}\" height=\"{3}\" fill=\"{4}\"/>"
        "<text x=\"{5:.1f}\" y=\"{6}\">{7}</text>\n"
        "<rect x=\"{8}\" y=\"{1}\" width=\"{9:.1f}\" height=\"{3}\" fill=\"{4}\"/>"
        "<text x=\"{10:.1f}\" y=\"{6}\">{11}</text>\n"
        "<text x=\"{12}\" y=\"{6}\" fill=\"{13}\">{14}</text>\n",
        tokens_x, y + 4, tokens_bar, kRow - 8, colour, figure_x(tokens_x + tokens_bar, tokens, one_request_tokens), y + 17,
        tokens, concurrency_x, concurrency_bar, figure_x(concurrency_x + concurrency_bar, requests, one_request), requests,
        length_x + 8,
        full ? "#222" : "#a0560b", thousands(r.max_model_len));
  }
  // The reference lines, through the rows with bars only, so that no reason is crossed.
  for (const auto& [x, text] : {std::pair{one_request_tokens, thousands(target) + " tokens"},
                                std::pair{one_request, std::string("1 request")}}) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!reasons[i].empty()) continue;
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#c0392b\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"5,4\"/>\n",
                         x, row_top[i], row_top[i + 1]);
    }
    svg += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" fill=\"#c0392b\" text-anchor=\"middle\">{2}</text>\n", x,
                       axis_y + 18, escape(text));
  }
  svg += fmt::format("<text x=\"16\" y=\"{}\" fill=\"#444\">The model's own maximum is {} tokens; the largest length "
                     "is capped there. Figures per GPU of the binding worker, from gpubudget's estimate of vLLM's "
                     "startup.</text>\n",
                     axis_y + 44, thousands(chart.model_max));
  svg += "</svg>\n";
  return svg;
}

}  // namespace gpubudget::cli
