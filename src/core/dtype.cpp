#include "gpubudget/dtype.h"

namespace gpubudget {

std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::kBFloat16: return "bfloat16";
    case Dtype::kFloat16: return "float16";
    case Dtype::kFloat32: return "float32";
    case Dtype::kFloat8E4M3: return "float8_e4m3fn";
    case Dtype::kFloat8E5M2: return "float8_e5m2";
    case Dtype::kUInt8: return "uint8";
    case Dtype::kInt32: return "int32";
    case Dtype::kInt64: return "int64";
  }
  return "?";
}

std::optional<Dtype> parse_torch_dtype(std::string_view name) {
  if (name == "bfloat16" || name == "torch.bfloat16") return Dtype::kBFloat16;
  if (name == "float16" || name == "half" || name == "torch.float16") return Dtype::kFloat16;
  if (name == "float32" || name == "float" || name == "torch.float32") return Dtype::kFloat32;
  return std::nullopt;
}

}  // namespace gpubudget
