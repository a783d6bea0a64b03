// vLLM's number formatting in the messages gpubudget reproduces (VllmMessages).
#pragma once

#include <string>

#include "gpubudget/bytes.h"

namespace gpubudget {

// vLLM's GiB rendering in its messages: "%.2f" or format_gib (round to 2 decimals, trailing zeros
// dropped: "17.16", "12.3"). Exact binary ties round to even, as in Python (7.125 GiB → "7.12").
std::string format_vllm_gib(Bytes b, bool fixed_two_decimals);
// Python's "%.2f" / round(x, 2) digits of `value`: the exact binary value correctly rounded, ties to even.
std::string format_two_decimals(double value);

}  // namespace gpubudget
