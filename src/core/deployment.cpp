// The names and parsers of Deployment's enums (deployment.h).
#include "gpubudget/deployment.h"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/dtype.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

constexpr NameTable<ModelDtypeChoice, 4> kModelDtypes{{{ModelDtypeChoice::kAuto, "auto"},
                                                       {ModelDtypeChoice::kBFloat16, "bfloat16"},
                                                       {ModelDtypeChoice::kFloat16, "float16"},
                                                       {ModelDtypeChoice::kFloat32, "float32"}}};
constexpr NameTable<KvCacheDtypeChoice, 11> kKvCacheDtypes{{{KvCacheDtypeChoice::kAuto, "auto"},
                                                            {KvCacheDtypeChoice::kBFloat16, "bfloat16"},
                                                            {KvCacheDtypeChoice::kFloat16, "float16"},
                                                            {KvCacheDtypeChoice::kFp8, "fp8"},
                                                            {KvCacheDtypeChoice::kFp8E4M3, "fp8_e4m3"},
                                                            {KvCacheDtypeChoice::kFp8E5M2, "fp8_e5m2"},
                                                            {KvCacheDtypeChoice::kFp8DsMla, "fp8_ds_mla"},
                                                            {KvCacheDtypeChoice::kFp8Inc, "fp8_inc"},
                                                            {KvCacheDtypeChoice::kInt8PerTokenHead, "int8_per_token_head"},
                                                            {KvCacheDtypeChoice::kFp8PerTokenHead, "fp8_per_token_head"},
                                                            {KvCacheDtypeChoice::kNvfp4, "nvfp4"}}};
constexpr NameTable<EntryPoint, 2> kEntryPoints{{{EntryPoint::kServe, "serve"}, {EntryPoint::kLlm, "llm"}}};
constexpr NameTable<MambaCacheMode, 3> kMambaCacheModes{{{MambaCacheMode::kNone, "none"},
                                                         {MambaCacheMode::kAlign, "align"},
                                                         {MambaCacheMode::kAll, "all"}}};
constexpr NameTable<MambaDtypeChoice, 4> kMambaDtypes{{{MambaDtypeChoice::kAuto, "auto"},
                                                       {MambaDtypeChoice::kFloat32, "float32"},
                                                       {MambaDtypeChoice::kFloat16, "float16"},
                                                       {MambaDtypeChoice::kBFloat16, "bfloat16"}}};

constexpr NameTable<SpeculativeMethod, 9> kSpeculativeMethods{{{SpeculativeMethod::kNone, "none"},
                                                               {SpeculativeMethod::kNgram, "ngram"},
                                                               {SpeculativeMethod::kNgramGpu, "ngram_gpu"},
                                                               {SpeculativeMethod::kSuffix, "suffix"},
                                                               {SpeculativeMethod::kMtp, "mtp"},
                                                               {SpeculativeMethod::kEagle, "eagle"},
                                                               {SpeculativeMethod::kEagle3, "eagle3"},
                                                               {SpeculativeMethod::kDraftModel, "draft_model"},
                                                               {SpeculativeMethod::kMedusa, "medusa"}}};
constexpr NameTable<OnlineQuantization, 4> kOnlineQuantizations{{{OnlineQuantization::kNone, "none"},
                                                                 {OnlineQuantization::kFp8, "fp8"},
                                                                 {OnlineQuantization::kFp8, "fp8_per_tensor"},
                                                                 {OnlineQuantization::kBitsAndBytes, "bitsandbytes"}}};
constexpr NameTable<EncoderTpMode, 2> kEncoderTpModes{{{EncoderTpMode::kWeights, "weights"},
                                                       {EncoderTpMode::kData, "data"}}};
constexpr NameTable<All2AllBackend, 10> kAll2AllBackends{
    {{All2AllBackend::kAllgatherReducescatter, "allgather_reducescatter"},
     {All2AllBackend::kNaive, "naive"},
     {All2AllBackend::kPplx, "pplx"},
     {All2AllBackend::kDeepEpHighThroughput, "deepep_high_throughput"},
     {All2AllBackend::kDeepEpLowLatency, "deepep_low_latency"},
     {All2AllBackend::kFlashInferTwoSided, "flashinfer_nvlink_two_sided"},
     {All2AllBackend::kFlashInferTwoSided, "flashinfer_all2allv"},
     {All2AllBackend::kFlashInferOneSided, "flashinfer_nvlink_one_sided"},
     {All2AllBackend::kMori, "mori"},
     {All2AllBackend::kNixlEp, "nixl_ep"}}};

template <typename Enum, std::size_t N>
std::string_view name_in(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
Enum parse_in(const NameTable<Enum, N>& table, std::string_view text, std::string_view flag) {
  for (const auto& [e, name] : table) {
    if (name == text) return e;
  }
  std::vector<std::string_view> names;
  for (const auto& entry : table) names.push_back(entry.second);
  throw InputError(fmt::format("{}: unsupported value \"{}\" (expected {})", flag, text, fmt::join(names, ", ")));
}

}  // namespace

std::string_view model_dtype_choice_name(ModelDtypeChoice choice) { return name_in(kModelDtypes, choice); }
std::string_view kv_cache_dtype_choice_name(KvCacheDtypeChoice choice) { return name_in(kKvCacheDtypes, choice); }
std::string_view entry_point_name(EntryPoint entry_point) { return name_in(kEntryPoints, entry_point); }
std::string_view mamba_cache_mode_name(MambaCacheMode mode) { return name_in(kMambaCacheModes, mode); }
std::string_view mamba_dtype_choice_name(MambaDtypeChoice choice) { return name_in(kMambaDtypes, choice); }
std::string_view speculative_method_name(SpeculativeMethod method) { return name_in(kSpeculativeMethods, method); }
std::string_view online_quantization_name(OnlineQuantization method) { return name_in(kOnlineQuantizations, method); }
std::string_view encoder_tp_mode_name(EncoderTpMode mode) { return name_in(kEncoderTpModes, mode); }
std::string_view all2all_backend_name(All2AllBackend backend) { return name_in(kAll2AllBackends, backend); }

ModelDtypeChoice parse_model_dtype_choice(std::string_view text, std::string_view flag) {
  if (text == "auto") return ModelDtypeChoice::kAuto;
  if (const auto dtype = parse_torch_dtype(text)) {
    switch (*dtype) {
      case Dtype::kBFloat16: return ModelDtypeChoice::kBFloat16;
      case Dtype::kFloat16: return ModelDtypeChoice::kFloat16;
      case Dtype::kFloat32: return ModelDtypeChoice::kFloat32;
      default: break;
    }
  }
  return parse_in(kModelDtypes, text, flag);  // throws, listing the names
}

KvCacheDtypeChoice parse_kv_cache_dtype_choice(std::string_view text, std::string_view flag) {
  // Layouts newer vLLMs accept whose page arithmetic gpubudget does not reproduce: refused by name
  // rather than listed as unknown.
  for (const std::string_view layout : {"turboquant_", "int4_per_token_head", "nvfp4_4over6", "nvfp4_ds_mla"}) {
    if (text.substr(0, layout.size()) == layout) {
      throw InputError(fmt::format("{}: \"{}\" is a KV-cache layout gpubudget does not model (its page size is not "
                                   "reproduced); choose one of the others",
                                   flag, text));
    }
  }
  return parse_in(kKvCacheDtypes, text, flag);
}

EntryPoint parse_entry_point(std::string_view text, std::string_view flag) {
  return parse_in(kEntryPoints, text, flag);
}

MambaCacheMode parse_mamba_cache_mode(std::string_view text, std::string_view flag) {
  return parse_in(kMambaCacheModes, text, flag);
}

MambaDtypeChoice parse_mamba_dtype_choice(std::string_view text, std::string_view flag) {
  return parse_in(kMambaDtypes, text, flag);
}

SpeculativeMethod parse_speculative_method(std::string_view text, std::string_view flag) {
  return parse_in(kSpeculativeMethods, text, flag);
}

OnlineQuantization parse_online_quantization(std::string_view text, std::string_view flag) {
  return parse_in(kOnlineQuantizations, text, flag);
}

EncoderTpMode parse_encoder_tp_mode(std::string_view text, std::string_view flag) {
  return parse_in(kEncoderTpModes, text, flag);
}

All2AllBackend parse_all2all_backend(std::string_view text, std::string_view flag) {
  return parse_in(kAll2AllBackends, text, flag);
}

}  // namespace gpubudget
