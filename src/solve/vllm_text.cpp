// vLLM's number formatting (vllm_text.h).
#include "solve/vllm_text.h"

#include <fmt/format.h>

namespace gpubudget {

std::string format_vllm_gib(Bytes b, bool fixed_two_decimals) {
  // "%.2f" and Python's round(x, 2) both round the exact binary value, exact ties to even; so does fmt.
  std::string text = format_two_decimals(to_gib(b));
  if (fixed_two_decimals) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text += '0';
  return text;
}

std::string format_two_decimals(double value) { return fmt::format("{:.2f}", value); }

}  // namespace gpubudget
