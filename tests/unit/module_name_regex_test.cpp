// The `re:` matcher of quantization ignore lists (src/core/module_name_regex.h), as Python's
// re.match reads a pattern. This file is compiled twice: into gpubudget_tests against the native
// matcher (RE2) and into gpubudget_regex_std_tests against the WebAssembly build's (std::regex). Each
// expectation is what Python 3 answers for `re.match(pattern, name) is not None`; a matcher may instead
// refuse a pattern it cannot read (InputError naming it), never answer differently.
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "gpubudget/error.h"
#include "core/module_name_regex.h"

namespace gpubudget::detail {
namespace {

struct Case {
  const char* pattern;  // without `re:`
  const char* name;
  bool python_matches;
};

// Patterns of real checkpoints' configs (configs/models: Qwen3-VL, Kimi-K2.5, GLM, Llama-4 NVFP4 …) and
// Python's anchoring: at the start, not at the end.
constexpr Case kReadByBoth[] = {
    {"vision_tower.*", "vision_tower.blocks.0.attn.qkv", true},
    {"vision_tower.*", "language_model.model.vision_tower", false},
    {".*shared_experts.*", "model.layers.3.mlp.shared_experts.down_proj", true},
    {".*self_attn.*", "model.layers.3.mlp.experts.0.up_proj", false},
    {".*mlp\\.(gate|up|gate_up|down)_proj.*", "model.layers.0.mlp.gate_up_proj", true},
    {".*mlp\\.(gate|up|gate_up|down)_proj.*", "model.layers.0.mlp.experts.0.gate_proj", false},
    {".*mlp\\.gate$", "model.layers.5.mlp.gate", true},
    {".*mlp\\.gate$", "model.layers.5.mlp.gate_proj", false},
    {"mlp", "model.layers.0.mlp", false},
    {"model", "model.layers.0.mlp", true},
    {"model\\.layers\\.\\d+\\.mlp\\.experts\\.[0-9]+\\.", "model.layers.12.mlp.experts.7.down_proj", true},
    {"model.layers.[0-2]\\.", "model.layers.3.mlp", false},
    {"lm_head|.*embed_tokens", "model.embed_tokens", true},
};

// Python syntax each matcher either reads as Python does or refuses: named groups and inline flags
// (RE2 reads them; std::regex refuses), lookaheads (std::regex reads them; RE2 refuses).
constexpr Case kReadOrRefused[] = {
    {"(?P<head>model)\\.layers", "model.layers.0", true},
    {"(?i)MODEL\\.layers", "model.layers.0", true},
    {"(?!model\\.vision).*", "model.vision.blocks.0", false},
    {"(?!model\\.vision).*", "model.layers.0", true},
    {"\\Amodel", "model.layers.0", true},
    // Exponential for a backtracking matcher (Python's, std::regex): linear in RE2, refused by std::regex.
    {"(.*)*X(.*)*(.*)*Y", "model.layers.0.self_attn.q_proj.weight_scale_inv.extra", false},
    {"(a+)+b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", false},
};

std::optional<bool> matches(const Case& c) {
  try {
    return compile_module_name_regex(std::string("re:") + c.pattern, c.pattern)->matches_prefix(c.name);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(c.pattern), std::string::npos) << "the refusal names the pattern: " << e.what();
    return std::nullopt;
  }
}

TEST(ModuleNameRegex, RealPatternsMatchAsPythonsReMatch) {
  for (const Case& c : kReadByBoth) {
    const std::optional<bool> got = matches(c);
    ASSERT_TRUE(got.has_value()) << c.pattern << " was refused";
    EXPECT_EQ(*got, c.python_matches) << c.pattern << " on " << c.name;
  }
}

TEST(ModuleNameRegex, PythonOnlySyntaxIsReadAsPythonDoesOrRefused) {
  for (const Case& c : kReadOrRefused) {
    const std::optional<bool> got = matches(c);
    if (got) {
      EXPECT_EQ(*got, c.python_matches) << c.pattern << " on " << c.name;
    }
  }
}

TEST(ModuleNameRegex, AnUnbalancedPatternIsRefused) {
  // Built into both matchers' test binaries (RE2's and std::regex's), so without test_support.h.
  try {
    (void)compile_module_name_regex("re:model.layers.(0|1", "model.layers.(0|1");
    ADD_FAILURE() << "an unbalanced pattern was compiled";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("quantization pattern \"re:model.layers.(0|1\" is not a regular expression gpubudget can read"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpubudget::detail
