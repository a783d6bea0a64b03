#include "text_width.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace gpubudget::cli {
namespace {

std::size_t longest_line(const std::string& text) {
  std::size_t longest = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
  return longest;
}

TEST(TextWidth, WordsWrapAtSpacesUnderTheIndent) {
  EXPECT_EQ(wrap_paragraph("one two three four", 2, 11), "  one two\n  three\n  four\n");
}

TEST(TextWidth, APathLongerThanALineIsCutAfterADirectory) {
  // A checkout under a long directory: the path alone is wider than the line (40 columns, 4 indent).
  const std::string path = "/check/work/main/configs/models/Qwen__Qwen3-Next-80B-A3B-Instruct/config.json";
  const std::string wrapped = wrap_paragraph("(" + path + ")", 4, 40);
  EXPECT_EQ(wrapped,
            "    (/check/work/main/configs/models/\n"
            "    Qwen__Qwen3-Next-80B-A3B-Instruct/\n"
            "    config.json)\n");
  // No slash within reach: cut at the line's end, every character kept.
  EXPECT_EQ(wrap_paragraph(std::string(10, 'x'), 0, 4), "xxxx\nxxxx\nxx\n");
}

TEST(TextWidth, LongLinesFitTheWidthWhateverTheirWords) {
  const std::string line = "Qwen3NextForCausalLM (/a/very/long/checkout/directory/that/goes/on/configs/models/"
                           "Qwen__Qwen3-Next-80B-A3B-Instruct/config.json) on 2 x H100, TP=2 PP=1 DP=1\n";
  EXPECT_LE(longest_line(wrap_long_lines(line, 80)), 80U);
  EXPECT_EQ(wrap_long_lines(line, 0), line);
  // Verdicts stay whole.
  const std::string verdict = "Requested length 262,144 (the model's maximum): needs 17.16 GiB of KV cache per "
                              "GPU -> DOES NOT FIT\n";
  EXPECT_EQ(wrap_long_lines(verdict, 60),
            "Requested length 262,144 (the model's maximum):\n    needs 17.16 GiB of KV cache per GPU -> DOES NOT FIT\n");
}

}  // namespace
}  // namespace gpubudget::cli
