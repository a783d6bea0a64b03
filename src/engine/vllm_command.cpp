#include "gpubudget/vllm_command.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpubudget/engine_args.h"
#include "gpubudget/error.h"

namespace gpubudget {

namespace {

// vLLM flags that gpubudget reads, by their long name (and vLLM's short aliases).
const std::set<std::string>& value_flags() {
  static const std::set<std::string> kFlags = {
      "--tensor-parallel-size",   "--pipeline-parallel-size", "--data-parallel-size",
      "--decode-context-parallel-size", "--gpu-memory-utilization", "--dtype",
      "--kv-cache-dtype",         "--max-model-len",          "--max-num-seqs",
      "--max-num-batched-tokens", "--block-size",             "--mamba-cache-mode",
      "--kv-cache-memory-bytes",  "--num-redundant-experts",  "--mamba-cache-dtype",
      "--mamba-ssm-cache-dtype",  "--mamba-block-size",       "--num-gpu-blocks-override",
      "--kv-transfer-config",     "--revision",               "--download-dir",
      "--kv-offloading-size",     "--kv-offloading-backend",
      "--max-loras",              "--max-lora-rank",
      "--lora-dtype",             "--quantization",           "--cpu-offload-gb",
      "--limit-mm-per-prompt",    "--mm-encoder-tp-mode",     "--attention-backend",
      "--mm-processor-kwargs",    "--all2all-backend",
      "--optimization-level",     "--max-cudagraph-capture-size", "--offload-group-size",
      "--offload-num-in-group",   "--offload-prefetch-step",  "--entry-point"};
  return kFlags;
}

const std::set<std::string>& switch_flags() {
  static const std::set<std::string> kFlags = {"--enforce-eager",
                                               "--enable-expert-parallel",
                                               "--skip-mm-profiling",
                                               "--enable-prefix-caching",
                                               "--no-enable-prefix-caching",
                                               "--disable-hybrid-kv-cache-manager",
                                               "--no-disable-hybrid-kv-cache-manager",
                                               "--enable-lora",
                                               "--fully-sharded-loras",
                                               "--language-model-only"};
  return kFlags;
}

// Flags the parser reads besides those: their own handling below.
const std::set<std::string>& special_flags() {
  static const std::set<std::string> kFlags = {"--model", "--kv-cache-dtype-skip-layers", "--eplb-config",
                                               "--lora-target-modules", "--cudagraph-capture-sizes",
                                               "--compilation-config",
                                               "--speculative-config", "--spec-method", "--spec-model",
                                               "--spec-tokens"};
  return kFlags;
}

// Environment variables that change what vLLM allocates on a GPU and that gpubudget does not model
// (vllm/envs.py): the sampler path of the profile run, all-to-all and FlashInfer workspaces, the MoE
// FP4 workspace, the sparse indexer's logits buffer, the V2 model runner.
bool changes_memory_unmodelled(const std::string& var) {
  static const std::set<std::string> kVars = {"VLLM_USE_FLASHINFER_SAMPLER",
                                              "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE",
                                              "VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE",
                                              "VLLM_SPARSE_INDEXER_MAX_LOGITS_MB",
                                              "VLLM_USE_V2_MODEL_RUNNER"};
  return kVars.count(var) != 0;
}

// vLLM accepts underscores as well as dashes in long options; a short alias (-tp) is its long flag.
std::string long_name(const std::string& flag, const EngineArgs& engine_args) {
  std::string out = flag;
  if (out.rfind("--", 0) == 0) std::replace(out.begin() + 2, out.end(), '_', '-');
  if (out.rfind("--", 0) != 0) {
    if (const EngineFlag* f = engine_args.find(out)) return f->flag;
    // -O3 / -O=3: --optimization-level.
    if (out.rfind("-O", 0) == 0) return "--optimization-level";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& modelled_vllm_env_vars() {
  static const std::vector<std::string> kVars = {"VLLM_PP_LAYER_PARTITION",
                                                 "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
                                                 "VLLM_ATTENTION_BACKEND",
                                                 "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE",
                                                 "VLLM_ALL2ALL_BACKEND",
                                                 "VLLM_DEEPEP_BUFFER_SIZE_MB",
                                                 "VLLM_NIXL_EP_MAX_NUM_RANKS",
                                                 "VLLM_MLA_DISABLE"};
  return kVars;
}

bool vllm_command_reads(const std::string& flag) {
  return value_flags().count(flag) != 0 || switch_flags().count(flag) != 0 || special_flags().count(flag) != 0;
}

VllmCommand translate_vllm_command(const std::vector<std::string>& tokens, const EngineArgs& engine_args,
                                   bool bare_flags) {
  VllmCommand out;
  std::size_t i = 0;
  std::vector<std::string> env;
  for (; i < tokens.size(); ++i) {
    const auto eq = tokens[i].find('=');
    if (eq == std::string::npos || eq == 0 || tokens[i][0] == '-') break;
    env.push_back(tokens[i]);
  }
  // The server command itself. `vllm serve MODEL` takes the positional model over `--model` (vLLM's
  // serve subcommand sets args.model from model_tag when both are given).
  std::string model;
  std::string flag_model;  // --model, used only without a positional one
  if (i + 1 < tokens.size() && tokens[i] == "vllm" && tokens[i + 1] == "serve") {
    i += 2;
    if (i < tokens.size() && tokens[i].rfind("-", 0) != 0) model = tokens[i++];
  } else if (i + 2 < tokens.size() && (tokens[i] == "python" || tokens[i] == "python3") && tokens[i + 1] == "-m" &&
             tokens[i + 2] == "vllm.entrypoints.openai.api_server") {
    i += 3;
  } else if (!bare_flags || (i < tokens.size() && tokens[i].rfind("-", 0) != 0)) {
    throw ArgumentError(bare_flags ? "vllm arguments: expected `vllm serve MODEL ...`, `python -m "
                                     "vllm.entrypoints.openai.api_server ...` or the engine arguments alone (--flag ...)"
                                   : "after `--`, expected `vllm serve MODEL ...` or `python -m "
                                     "vllm.entrypoints.openai.api_server ...`");
  }
  std::vector<std::string> flags;
  // --compilation-config and --speculative-config as JSON and as dotted keys (-cc.cudagraph_mode=NONE),
  // merged as vLLM does; --spec-method / --spec-model / --spec-tokens set speculative keys
  // (EngineArgs.create_speculative_config).
  nlohmann::json compilation = nlohmann::json::object();
  nlohmann::json speculative = nlohmann::json::object();
  // A dotted value is JSON when it parses as a JSON scalar or list (3, true, [1,2,4]), else the text.
  const auto dotted_value = [](const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    return j.is_discarded() || j.is_object() ? nlohmann::json(text) : j;
  };
  for (; i < tokens.size(); ++i) {
    std::string word = tokens[i];
    if (word.rfind("-", 0) != 0) {
      if (model.empty()) {
        model = word;  // `vllm serve --flags MODEL` puts the model late
        continue;
      }
      throw ArgumentError(fmt::format("vllm command: unexpected word \"{}\"", word));
    }
    std::string value;
    bool has_inline = false;
    if (const auto eq = word.find('='); eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
      has_inline = true;
    }
    const bool glued_level = word.rfind("-O", 0) == 0 && word.size() > 2 && word[2] != '=';  // -O3
    const std::string name = long_name(word, engine_args);
    auto take_value = [&]() -> std::string {
      if (has_inline) return value;
      if (i + 1 >= tokens.size()) throw ArgumentError(fmt::format("vllm command: {} needs a value", word));
      return tokens[++i];
    };
    const auto dotted = [&](std::string_view short_prefix, std::string_view long_prefix) -> std::string {
      if (name.rfind(short_prefix, 0) == 0) return name.substr(short_prefix.size());
      if (name.rfind(long_prefix, 0) == 0) return name.substr(long_prefix.size());
      return "";
    };
    // -O.KEY is the compilation config's dotted form too (FlexibleArgumentParser), not a level.
    std::string dotted_compilation = dotted("-cc.", "--compilation-config.");
    if (word.rfind("-O.", 0) == 0) dotted_compilation = word.substr(3);
    const std::string dotted_speculative = dotted("-sc.", "--speculative-config.");
    const auto json_object = [&](const std::string& flag) {
      const std::string text = take_value();
      const auto j = nlohmann::json::parse(text, nullptr, false);
      if (!j.is_object()) throw ArgumentError(fmt::format("vllm command: {} is not a JSON object: {}", flag, text));
      return j;
    };
    static const std::map<std::string, std::string> kSpeculativeShorthands = {
        {"--spec-method", "method"}, {"--spec-model", "model"}, {"--spec-tokens", "num_speculative_tokens"}};
    if (name == "--model") {
      flag_model = take_value();
    } else if (!dotted_compilation.empty()) {
      compilation[dotted_compilation] = dotted_value(take_value());
    } else if (!dotted_speculative.empty()) {
      speculative[dotted_speculative] = dotted_value(take_value());
    } else if (name == "--compilation-config") {
      compilation.update(json_object(name));
    } else if (name == "--speculative-config") {
      speculative.update(json_object(name));
    } else if (const auto shorthand = kSpeculativeShorthands.find(name); shorthand != kSpeculativeShorthands.end()) {
      const std::string& key = shorthand->second;
      if (speculative.contains(key)) {
        throw ArgumentError(fmt::format("vllm command: {} and --speculative-config['{}'] are mutually exclusive", name, key));
      }
      speculative[key] = key == "num_speculative_tokens" ? dotted_value(take_value()) : nlohmann::json(take_value());
    } else if (value_flags().count(name) != 0) {
      flags.push_back(name);
      flags.push_back(glued_level ? word.substr(2) : take_value());
    } else if (switch_flags().count(name) != 0) {
      flags.push_back(name);
    } else if (name == "--kv-cache-dtype-skip-layers" || name == "--lora-target-modules" ||
               name == "--cudagraph-capture-sizes") {
      // vLLM's list flags (nargs="+"): one or more words up to the next flag.
      std::string layers = take_value();
      while (!has_inline && i + 1 < tokens.size() && tokens[i + 1].rfind("-", 0) != 0) layers += "," + tokens[++i];
      flags.push_back(name);
      flags.push_back(layers);
    } else if (name == "--eplb-config") {
      const std::string text = take_value();
      try {
        const auto j = nlohmann::json::parse(text);
        if (j.is_object() && j.contains("num_redundant_experts")) {
          const auto& r = j["num_redundant_experts"];
          // A float (2e52) would be undefined behaviour to convert: only integers are taken.
          if (!r.is_number_integer() || (r.is_number_unsigned() && r.get<std::uint64_t>() > 1000000) ||
              (!r.is_number_unsigned() && (r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > 1000000))) {
            throw ArgumentError(fmt::format("vllm command: --eplb-config num_redundant_experts must be an integer in "
                                         "[0, 1000000], got {}",
                                         r.dump()));
          }
          flags.push_back("--num-redundant-experts");
          flags.push_back(std::to_string(r.get<std::int64_t>()));
        }
      } catch (const nlohmann::json::exception&) {
        throw ArgumentError(fmt::format("vllm command: --eplb-config is not JSON: {}", text));
      }
    } else if (const EngineFlag* known = engine_args.find(name)) {
      // Classified in configs/vllm-engine-args.json: its value (if any) is skipped; a read flag's other
      // spellings (--no-enforce-eager) are vLLM's default.
      if (known->takes_value && !glued_level && (has_inline || i + 1 < tokens.size())) take_value();
      if (known->status == EngineFlagStatus::kNotModelled) {
        out.notes.push_back({NoticeCode::kFlagNotModelled,
                             fmt::format("{} changes GPU memory in ways gpubudget does not model; the budget is "
                                         "without it (configs/vllm-engine-args.json says how)",
                                         word)});
      } else {
        out.ignored.push_back(word);
      }
    } else {
      const bool takes_value = has_inline || (i + 1 < tokens.size() && tokens[i + 1].rfind("-", 0) != 0);
      if (takes_value) take_value();
      out.notes.push_back(
          {NoticeCode::kFlagUnknown,
           fmt::format("{} is not one of vLLM's engine arguments (main branch of 2026-05, commit {}); "
                       "gpubudget does not know what it does to GPU memory and the budget is without it",
                       word, engine_args.vllm_commit.substr(0, 9))});
    }
  }
  if (!model.empty() && !flag_model.empty() && flag_model != model) {
    out.notes.push_back({NoticeCode::kModelNamedTwice,
                         fmt::format("the vllm command names two models: `vllm serve {}` and `--model {}`; vLLM serves "
                                     "the positional {}, and so does this budget",
                                     model, flag_model, model)});
  }
  if (!compilation.empty()) {
    flags.push_back("--compilation-config");
    flags.push_back(compilation.dump());
  }
  if (!speculative.empty()) {
    flags.push_back("--speculative-config");
    flags.push_back(speculative.dump());
  }
  if (model.empty()) model = flag_model;
  if (model.empty() && !bare_flags) throw ArgumentError("vllm command: no model (vllm serve MODEL or --model MODEL)");
  out.flags.push_back(model);
  out.flags.insert(out.flags.end(), flags.begin(), flags.end());
  for (const auto& assignment : env) {
    const std::string var = assignment.substr(0, assignment.find('='));
    const auto& modelled = modelled_vllm_env_vars();
    if (std::find(modelled.begin(), modelled.end(), var) != modelled.end()) {
      out.flags.push_back("--vllm-env");
      out.flags.push_back(assignment);
    } else if (changes_memory_unmodelled(var)) {
      out.notes.push_back(
          {NoticeCode::kEnvVarNotModelled,
           fmt::format("{} changes GPU memory in ways gpubudget does not model; the budget is without it", var)});
    } else if (var.rfind("VLLM_", 0) == 0) {
      out.ignored.push_back(var);
    }
  }
  return out;
}

}  // namespace gpubudget
