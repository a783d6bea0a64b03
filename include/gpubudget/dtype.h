// Element data types of stored tensors and of the KV cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpubudget {

enum class Dtype {
  kBFloat16,
  kFloat16,
  kFloat32,
  kFloat8E4M3,
  kFloat8E5M2,
  kUInt8,
  kInt32,
  kInt64,
};

// Bytes of one element. Every Dtype here is a whole number of bytes; sub-byte formats (NVFP4, INT4)
// are described by QuantFormat as packed uint8/int32 storage.
constexpr std::int64_t element_bytes(Dtype d) {
  switch (d) {
    case Dtype::kBFloat16:
    case Dtype::kFloat16:
      return 2;
    case Dtype::kFloat32:
    case Dtype::kInt32:
      return 4;
    case Dtype::kInt64:
      return 8;
    case Dtype::kFloat8E4M3:
    case Dtype::kFloat8E5M2:
    case Dtype::kUInt8:
      return 1;
  }
  return 0;
}

// vLLM's name of a dtype ("bfloat16", "float8_e4m3fn", ...); static storage.
std::string_view dtype_name(Dtype d);

// Parses a torch/HF dtype spelling ("bfloat16", "float16", "half", "float32", "float"...).
std::optional<Dtype> parse_torch_dtype(std::string_view name);

}  // namespace gpubudget
