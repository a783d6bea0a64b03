// The family table (families.h). Architectures are vLLM's registry names
// (vllm/model_executor/models/registry.py): vLLM picks the implementation by that name, so a name it
// does not register for the model type does not start, and gpubudget refuses it rather than guess.
#include "model/families.h"

#include <array>

#include <fmt/format.h>

#include "gpubudget/model_config.h"

namespace gpubudget::detail {

#define GPUBUDGET_FAMILY(stem) const Family& family_##stem();
#include "model/family_list.inc"
#undef GPUBUDGET_FAMILY

std::span<const Family* const> families() {
  // Every file of model/families/, one entry each (model/family_list.inc, written by src/sources.cmake
  // from the folder's files), in the order of their file names.
#define GPUBUDGET_FAMILY(stem) &family_##stem(),
  static const std::array kFamilies = {
#include "model/family_list.inc"
  };
#undef GPUBUDGET_FAMILY
  return kFamilies;
}

FamilyMatch family_for_model_type(std::string_view model_type) {
  for (const Family* family : families()) {
    for (const ModelType& type : family->model_types) {
      if (type.name == model_type) return {family, &type};
    }
  }
  return {};
}

namespace {

struct Hint {
  std::string_view prefix;
  std::string_view text;
};

// Model types known to need more than the generic path: each is refused with its reason.
constexpr Hint kHints[] = {
    // Architectures no modelled vLLM serves: an answer, not a gap in gpubudget.
    {"mllama", "Llama 3.2 Vision (MllamaForConditionalGeneration) has no implementation in vLLM 0.11 or later: "
               "vLLM removed its encoder-decoder support in #24907 (2025-09-15); gpubudget models 0.11 and later"},
    {"step3p7", "vLLM (its main branch of 2026-05) registers no Step-3.7 architecture (it has Step3TextForCausalLM "
                "and Step3p5ForCausalLM); not modelled"},
    {"minimax_m3", "vLLM (its main branch of 2026-05) registers no MiniMax-M3 architecture (it has MiniMax-M2 and "
                   "MiniMax-Text-01); not modelled"},
};

const Hint* hint_for(std::string_view model_type) {
  for (const auto& hint : kHints) {
    if (model_type.substr(0, hint.prefix.size()) == hint.prefix) return &hint;
  }
  return nullptr;
}

}  // namespace

bool generic_path_allowed(std::string_view model_type) { return hint_for(model_type) == nullptr; }

}  // namespace gpubudget::detail

namespace gpubudget {

std::vector<FamilyInfo> list_families() {
  std::vector<FamilyInfo> out;
  for (const detail::Family* family : detail::families()) {
    FamilyInfo info;
    info.name = std::string(family->name);
    for (const auto& type : family->model_types) info.model_types.emplace_back(type.name);
    for (const auto& arch : family->architectures) info.architectures.emplace_back(arch);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace gpubudget

namespace gpubudget::detail {

std::string closest_family_hint(std::string_view model_type) {
  if (const Hint* hint = hint_for(model_type)) return std::string(hint->text);
  std::string types;
  for (const Family* family : families()) {
    for (const ModelType& type : family->model_types) types += fmt::format("{}{}", types.empty() ? "" : ", ", type.name);
  }
  return "supported model types: " + types;
}

}  // namespace gpubudget::detail
