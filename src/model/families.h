// The architecture families gpubudget parses, in one table (families.cpp): which language-model
// `model_type`s each one reads, which config.json `architectures` vLLM registers for them, and the
// parser that turns such a config into a ModelSpec. Adding an architecture is one parser file
// (src/hf/<family>.cpp) and one row here.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "model/parse_context.h"

namespace gpubudget::detail {

// A language-model `model_type` a family reads.
struct ModelType {
  std::string_view name;
  // The config class's max_position_embeddings, for a sparse config that omits it (0: none).
  std::int64_t default_max_position = 0;
};

// A config key of a family's models that its vLLM implementation does not read (or reads to a structure
// the parser builds anyway), with the value that makes it so, and why (config_keys.cpp).
struct ReviewedConfigKey {
  std::string_view key;
  std::string_view value;  // the JSON text the value must dump to, "" = any
  std::string_view reason;
};

// A family: registered by its own file, model/families/<stem>.cpp, as `const Family& family_<stem>()`
// (every file of the folder is one family; src/sources.cmake lists them in model/family_list.inc).
struct Family {
  std::string_view name;                            // ModelSpec::family
  std::span<const ModelType> model_types;
  std::span<const std::string_view> architectures;  // config.json `architectures[0]` vLLM registers for them
  std::span<const ReviewedConfigKey> reviewed_keys;  // keys of these models without an effect on memory
  void (*parse)(const ParseContext& context, ModelSpec& model);
  // Whether a config of this family may be an EAGLE draft head (parse_eagle_head reads its eagle_config
  // and head layout: vLLM's EAGLE / EAGLE-3 drafters are built on these families' decoder layers).
  bool reads_eagle_head = false;
};

// Every family, in the order of their files' names. A model type belongs to one family only.
std::span<const Family* const> families();
// The family that reads `model_type` and its entry, or nullptrs.
struct FamilyMatch {
  const Family* family = nullptr;
  const ModelType* model_type = nullptr;
};
FamilyMatch family_for_model_type(std::string_view model_type);
// For an unsupported model_type: what it is and the closest supported family.
std::string closest_family_hint(std::string_view model_type);
// Whether the generic path may size an unsupported model_type from its headers: false for the types
// vLLM does not serve at all or serves with an attention the generic layout would get wrong.
bool generic_path_allowed(std::string_view model_type);

}  // namespace gpubudget::detail
