// The launch line in the library (vllm_args.h): arguments as given -> the Deployment vLLM builds,
// the table every front end reads them by, and the word splitting of a pasted line.
#include "gpubudget/vllm_args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/argument_values.h"
#include "gpubudget/error.h"
#include "gpubudget/limits.h"

namespace gpubudget {

namespace {

std::vector<std::int64_t> parse_partition(const std::string& flag, const std::string& text) {
  std::vector<std::int64_t> layers;
  for (const auto& part : split_list(text)) layers.push_back(parse_human_int(flag, part));
  return layers;
}

}  // namespace

Deployment resolve_vllm_arguments(const VllmArguments& o, const ModelSpec& model, VllmProfile& profile,
                                  const ModelLoader& load_draft, std::vector<Notice>& warnings) {
  Deployment d = o.deployment;
  apply_launch_options(o.launch, model, load_draft, warnings, d);
  d.dtype = parse_model_dtype_choice(o.dtype);
  d.kv_cache_dtype = parse_kv_cache_dtype_choice(o.kv_cache_dtype);
  d.entry_point = parse_entry_point(o.entry_point);
  if (!o.mamba_cache_mode.empty()) d.mamba_cache_mode = parse_mamba_cache_mode(o.mamba_cache_mode);
  const MaxModelLenFlag length = parse_max_model_len(o.max_model_len);
  d.max_model_len = length.length;
  d.max_model_len_auto = length.auto_fit;
  d.mamba_cache_dtype = parse_mamba_dtype_choice(o.mamba_cache_dtype, "--mamba-cache-dtype");
  d.mamba_ssm_cache_dtype = parse_mamba_dtype_choice(o.mamba_ssm_cache_dtype, "--mamba-ssm-cache-dtype");
  d.enable_prefix_caching = paired_flag("--enable-prefix-caching", o.enable_prefix_caching, o.no_enable_prefix_caching);
  d.disable_hybrid_kv_cache_manager = paired_flag("--disable-hybrid-kv-cache-manager",
                                                  o.disable_hybrid_kv_cache_manager,
                                                  o.no_disable_hybrid_kv_cache_manager);
  if (!o.kv_transfer_config.empty()) d.kv_connector = kv_connector_of("--kv-transfer-config", o.kv_transfer_config);
  if (!o.kv_offloading_backend.empty() && o.kv_offloading_size.empty()) {
    throw ArgumentError("--kv-offloading-backend without --kv-offloading-size: vLLM offloads nothing");
  }
  if (!o.kv_offloading_size.empty()) {
    // VllmConfig._post_init_kv_transfer_config: the size (GiB over all ranks, CPU memory) selects a
    // connector; its blocks are copies in host memory and the GPU KV cache keeps its size.
    const double gib = parse_gib("--kv-offloading-size", o.kv_offloading_size);
    if (!(gib > 0 && gib <= 1 << 20)) {
      throw ArgumentError(fmt::format("--kv-offloading-size {}: expected GiB above 0, up to 1048576", o.kv_offloading_size));
    }
    const std::string backend = o.kv_offloading_backend.empty() ? "native" : o.kv_offloading_backend;
    if (backend != "native" && backend != "lmcache") {
      throw ArgumentError(fmt::format("--kv-offloading-backend {}: expected native or lmcache", backend));
    }
    if (!d.kv_connector.empty()) {
      throw ArgumentError("--kv-offloading-size with --kv-transfer-config: give one of them (vLLM rewrites the connector)");
    }
    d.kv_connector = backend == "native" ? "OffloadingConnector" : "LMCacheConnectorV1";
    if (backend == "lmcache") {
      warnings.push_back({NoticeCode::kKvOffloadingPartial,
                          "--kv-offloading-backend lmcache: LMCache's GPU staging buffer (tens of MiB) is allocated "
                          "after vLLM sizes the KV cache and is not counted"});
    }
  }
  if (!o.kv_cache_memory_bytes.empty()) {
    d.kv_cache_memory = Bytes(parse_human_int("--kv-cache-memory-bytes", o.kv_cache_memory_bytes));
  }
  if (!o.max_num_batched_tokens.empty()) {
    d.max_num_batched_tokens = parse_human_int("--max-num-batched-tokens", o.max_num_batched_tokens);
  }
  if (!o.pp_layer_partition.empty()) d.pp_layer_partition = parse_partition("--pp-layer-partition", o.pp_layer_partition);
  for (const auto& assignment : o.vllm_env) {
    const auto eq = assignment.find('=');
    const std::string var = assignment.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : assignment.substr(eq + 1);
    if (var == "VLLM_PP_LAYER_PARTITION") {
      const auto layers = parse_partition(var, value);
      if (!d.pp_layer_partition.empty() && d.pp_layer_partition != layers) {
        throw ArgumentError("--pp-layer-partition and VLLM_PP_LAYER_PARTITION disagree");
      }
      d.pp_layer_partition = layers;
    } else if (var == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") {
      // Whether vLLM charges its CUDA-graph memory estimate to the KV budget (the profile's
      // charges_cudagraph_memory is the version's default).
      profile.charges_cudagraph_memory = env_bool(var, value);
    } else if (var == "VLLM_ATTENTION_BACKEND") {
      // Read by the versions whose profile has attention_backend_env (then --attention-backend).
      if (!profile.attention_backend_env) {
        warnings.push_back(
            {NoticeCode::kEnvVarRemoved, fmt::format("vLLM {} ignores VLLM_ATTENTION_BACKEND (removed; use "
                                                     "--attention-backend); the budget uses vLLM's own choice",
                                                     profile.version)});
      } else if (!d.attention_backend.empty() && d.attention_backend != value) {
        throw ArgumentError("--attention-backend and VLLM_ATTENTION_BACKEND disagree");
      } else {
        d.attention_backend = value;
      }
    } else if (var == "VLLM_ALL2ALL_BACKEND") {
      // Read when --all2all-backend is not given, until the variable's removal (0.16).
      if (!profile.all2all.backend_env) {
        warnings.push_back({NoticeCode::kEnvVarRemoved,
                            fmt::format("vLLM {} ignores VLLM_ALL2ALL_BACKEND (removed; use --all2all-backend); "
                                        "the budget uses vLLM's default",
                                        profile.version)});
      } else if (!o.launch.all2all_backend.empty() && o.launch.all2all_backend != value) {
        throw ArgumentError("--all2all-backend and VLLM_ALL2ALL_BACKEND disagree");
      } else {
        d.all2all_backend = parse_all2all_backend(value, var);
      }
    } else if (var == "VLLM_DEEPEP_BUFFER_SIZE_MB") {
      d.deepep_buffer_size_mb = parse_human_int(var, value);
      if (d.deepep_buffer_size_mb < 1 || d.deepep_buffer_size_mb > (1 << 20)) {
        throw ArgumentError(fmt::format("--vllm-env {}={}: expected MiB from 1 to 1048576", var, value));
      }
    } else if (var == "VLLM_NIXL_EP_MAX_NUM_RANKS") {
      d.nixl_ep_max_num_ranks = parse_human_int(var, value);
      if (d.nixl_ep_max_num_ranks < 1 || d.nixl_ep_max_num_ranks > 4096) {
        throw ArgumentError(fmt::format("--vllm-env {}={}: expected ranks from 1 to 4096", var, value));
      }
    } else if (var == "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE") {
      d.allow_chunked_local_attn_with_hybrid_kv_cache = env_bool(var, value);
    } else if (var == "VLLM_MLA_DISABLE") {
      // envs.py reads bool(int(value)): any integer other than 0 disables MLA, anything else is an error.
      const bool integer = !value.empty() && value.find_first_not_of("0123456789", value[0] == '-' ? 1 : 0) ==
                                                 std::string::npos && value != "-";
      if (!integer) throw ArgumentError(fmt::format("--vllm-env {}={}: expected an integer (vLLM reads bool(int(value)))", var, value));
      d.mla_disabled = value.find_first_not_of("-0") != std::string::npos;
    } else {
      throw ArgumentError(fmt::format("--vllm-env: {} is not a variable gpubudget models ({})", var,
                                   fmt::join(modelled_vllm_env_vars(), ", ")));
    }
  }
  return d;
}

namespace {

// A count as vLLM's argparse reads an int: decimal digits (a sign for the signed ones), within
// [min, max]. ArgumentError naming the flag otherwise.
std::int64_t integer_in(std::string_view flag, const std::string& text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, error] = std::from_chars(first, last, value);
  if (text.empty() || error != std::errc() || end != last || value < min || value > max) {
    throw ArgumentError(fmt::format("{}: expected an integer from {} to {}, got {}", flag, min, max, text));
  }
  return value;
}

// Any int64: the library checks the range where the value is used (LoRA sizes, -O, offload groups).
std::int64_t integer(std::string_view flag, const std::string& text) {
  return integer_in(flag, text, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
}

std::vector<std::string> word_list(const std::string& text) { return split_list(text); }

std::vector<std::int64_t> integer_list(std::string_view flag, const std::string& text) {
  std::vector<std::int64_t> out;
  for (const auto& part : split_list(text)) out.push_back(integer(flag, part));
  return out;
}

using A = VllmArguments;
using V = const std::string&;
using F = std::string_view;

// clang-format off
// Every engine argument the library reads, with the members it sets. The order is the CLI's help order.
constexpr VllmArgument kArguments[] = {
    {"--tensor-parallel-size", true, "tensor_parallel_size",
     [](F f, V v, A& a) { a.deployment.tensor_parallel_size = integer_in(f, v, 1, kMaxTensorParallelSize); }},
    {"--pipeline-parallel-size", true, "pipeline_parallel_size",
     [](F f, V v, A& a) { a.deployment.pipeline_parallel_size = integer_in(f, v, 1, kMaxPipelineParallelSize); }},
    {"--data-parallel-size", true, "data_parallel_size",
     [](F f, V v, A& a) { a.deployment.data_parallel_size = integer_in(f, v, 1, kMaxDataParallelSize); }},
    {"--enable-expert-parallel", false, "enable_expert_parallel",
     [](F, V, A& a) { a.deployment.enable_expert_parallel = true; }},
    {"--num-redundant-experts", true, "num_redundant_experts",
     [](F f, V v, A& a) { a.deployment.num_redundant_experts = integer_in(f, v, 0, kMaxRedundantExperts); }},
    {"--decode-context-parallel-size", true, "decode_context_parallel_size",
     [](F f, V v, A& a) { a.deployment.decode_context_parallel_size = integer_in(f, v, 1, kMaxDecodeContextParallelSize); }},
    {"--pp-layer-partition", true, "pp_layer_partition", [](F, V v, A& a) { a.pp_layer_partition = v; }},
    {"--vllm-env", true,
     "pp_layer_partition attention_backend all2all_backend deepep_buffer_size_mb nixl_ep_max_num_ranks "
     "allow_chunked_local_attn_with_hybrid_kv_cache mla_disabled",
     [](F, V v, A& a) { a.vllm_env.push_back(v); }},
    {"--gpu-memory-utilization", true, "gpu_memory_utilization",
     [](F f, V v, A& a) { a.deployment.gpu_memory_utilization = parse_fraction(std::string(f), v); }},
    {"--dtype", true, "dtype", [](F, V v, A& a) { a.dtype = v; }},
    {"--kv-cache-dtype", true, "kv_cache_dtype", [](F, V v, A& a) { a.kv_cache_dtype = v; }},
    {"--max-model-len", true, "max_model_len max_model_len_auto", [](F, V v, A& a) { a.max_model_len = v; }},
    {"--max-num-seqs", true, "max_num_seqs",
     [](F f, V v, A& a) { a.deployment.max_num_seqs = integer_in(f, v, 1, kMaxNumSeqs); }},
    {"--max-num-batched-tokens", true, "max_num_batched_tokens", [](F, V v, A& a) { a.max_num_batched_tokens = v; }},
    {"--block-size", true, "block_size",
     [](F f, V v, A& a) { a.deployment.block_size = integer_in(f, v, 1, kMaxBlockSize); }},
    {"--enforce-eager", false, "enforce_eager", [](F, V, A& a) { a.deployment.enforce_eager = true; }},
    {"--skip-mm-profiling", false, "skip_mm_profiling", [](F, V, A& a) { a.deployment.skip_mm_profiling = true; }},
    {"--speculative-config", true, "speculative", [](F, V v, A& a) { a.launch.speculative_config = v; }},
    {"--enable-lora", false, "lora", [](F, V, A& a) { a.launch.enable_lora = true; }},
    {"--max-loras", true, "lora", [](F f, V v, A& a) { a.launch.max_loras = integer(f, v); }},
    {"--max-lora-rank", true, "lora", [](F f, V v, A& a) { a.launch.max_lora_rank = integer(f, v); }},
    {"--lora-dtype", true, "lora", [](F, V v, A& a) { a.launch.lora_dtype = v; }},
    {"--fully-sharded-loras", false, "lora", [](F, V, A& a) { a.launch.fully_sharded_loras = true; }},
    {"--lora-target-modules", true, "lora", [](F, V v, A& a) { a.launch.lora_target_modules = word_list(v); }},
    {"--quantization", true, "quantization", [](F, V v, A& a) { a.launch.quantization = v; }},
    {"--cpu-offload-gb", true, "cpu_offload_gb",
     [](F f, V v, A& a) { a.launch.cpu_offload_gb = parse_gib(std::string(f), v); }},
    {"--offload-group-size", true, "offload_group_size",
     [](F f, V v, A& a) { a.launch.offload_group_size = integer(f, v); }},
    {"--offload-num-in-group", true, "offload_num_in_group",
     [](F f, V v, A& a) { a.launch.offload_num_in_group = integer(f, v); }},
    {"--offload-prefetch-step", true, "offload_prefetch_step",
     [](F f, V v, A& a) { a.launch.offload_prefetch_step = integer(f, v); }},
    {"--limit-mm-per-prompt", true, "language_model_only disabled_modalities",
     [](F, V v, A& a) { a.launch.limit_mm_per_prompt = v; }},
    {"--language-model-only", false, "language_model_only", [](F, V, A& a) { a.launch.language_model_only = true; }},
    {"--all2all-backend", true, "all2all_backend", [](F, V v, A& a) { a.launch.all2all_backend = v; }},
    {"--mm-processor-kwargs", true, "mm_max_pixels", [](F, V v, A& a) { a.launch.mm_processor_kwargs = v; }},
    {"--mm-encoder-tp-mode", true, "mm_encoder_tp_mode", [](F, V v, A& a) { a.launch.mm_encoder_tp_mode = v; }},
    {"--attention-backend", true, "attention_backend", [](F, V v, A& a) { a.launch.attention_backend = v; }},
    {"--optimization-level", true, "optimization_level",
     [](F f, V v, A& a) { a.launch.optimization_level = integer(f, v); }},
    {"--compilation-config", true, "cudagraph_mode cudagraph_capture_sizes max_cudagraph_capture_size",
     [](F, V v, A& a) { a.launch.compilation_config = v; }},
    {"--cudagraph-capture-sizes", true, "cudagraph_capture_sizes",
     [](F f, V v, A& a) { a.launch.cudagraph_capture_sizes = integer_list(f, v); }},
    {"--max-cudagraph-capture-size", true, "max_cudagraph_capture_size",
     [](F f, V v, A& a) { a.launch.max_cudagraph_capture_size = integer(f, v); }},
    {"--entry-point", true, "entry_point", [](F, V v, A& a) { a.entry_point = v; }},
    {"--mamba-cache-mode", true, "mamba_cache_mode", [](F, V v, A& a) { a.mamba_cache_mode = v; }},
    {"--enable-prefix-caching", false, "enable_prefix_caching", [](F, V, A& a) { a.enable_prefix_caching = true; }},
    {"--no-enable-prefix-caching", false, "enable_prefix_caching", [](F, V, A& a) { a.no_enable_prefix_caching = true; }},
    {"--mamba-cache-dtype", true, "mamba_cache_dtype", [](F, V v, A& a) { a.mamba_cache_dtype = v; }},
    {"--mamba-ssm-cache-dtype", true, "mamba_ssm_cache_dtype", [](F, V v, A& a) { a.mamba_ssm_cache_dtype = v; }},
    {"--mamba-block-size", true, "mamba_block_size",
     [](F f, V v, A& a) { a.deployment.mamba_block_size = integer_in(f, v, 1, kMaxMambaBlockSize); }},
    {"--num-gpu-blocks-override", true, "num_gpu_blocks_override",
     [](F f, V v, A& a) { a.deployment.num_gpu_blocks_override = integer_in(f, v, 1, kMaxNumGpuBlocks); }},
    {"--kv-cache-dtype-skip-layers", true, "kv_cache_dtype_skip_layers",
     [](F, V v, A& a) { a.deployment.kv_cache_dtype_skip_layers = word_list(v); }},
    {"--disable-hybrid-kv-cache-manager", false, "disable_hybrid_kv_cache_manager",
     [](F, V, A& a) { a.disable_hybrid_kv_cache_manager = true; }},
    {"--no-disable-hybrid-kv-cache-manager", false, "disable_hybrid_kv_cache_manager",
     [](F, V, A& a) { a.no_disable_hybrid_kv_cache_manager = true; }},
    {"--kv-transfer-config", true, "kv_connector", [](F, V v, A& a) { a.kv_transfer_config = v; }},
    {"--kv-offloading-size", true, "kv_connector", [](F, V v, A& a) { a.kv_offloading_size = v; }},
    {"--kv-offloading-backend", true, "kv_connector", [](F, V v, A& a) { a.kv_offloading_backend = v; }},
    {"--kv-cache-memory-bytes", true, "kv_cache_memory", [](F, V v, A& a) { a.kv_cache_memory_bytes = v; }},
};
// clang-format on

const VllmArgument* find_argument(std::string_view flag) {
  for (const auto& a : kArguments) {
    if (a.flag == flag) return &a;
  }
  return nullptr;
}

}  // namespace

std::span<const VllmArgument> vllm_arguments() { return kArguments; }

VllmLaunchLine parse_vllm_args(const std::vector<std::string>& words, const EngineArgs& engine_args) {
  const VllmCommand command = translate_vllm_command(words, engine_args, /*bare_flags=*/true);
  VllmLaunchLine line;
  line.notes = command.notes;
  line.ignored = command.ignored;
  line.model = command.flags.front();
  std::vector<std::string> environment;  // leading VAR=VALUE words of `flags`
  for (std::size_t i = 1; i < command.flags.size(); ++i) {
    const std::string& flag = command.flags[i];
    const auto value = [&]() -> const std::string& {
      // translate_vllm_command gives every value flag its value.
      if (i + 1 >= command.flags.size()) throw ArgumentError(fmt::format("{} needs a value", flag));
      return command.flags[++i];
    };
    if (flag == "--revision") {
      line.revision = value();
    } else if (flag == "--download-dir") {
      line.download_dir = value();
    } else if (const VllmArgument* argument = find_argument(flag)) {
      const std::string text = argument->takes_value ? value() : std::string();
      argument->apply(flag, text, line.arguments);
      if (flag == "--vllm-env") {
        environment.push_back(text);
      } else {
        line.flags.push_back(flag);
        if (argument->takes_value) line.flags.push_back(text);
      }
    } else {
      // translate_vllm_command only passes on flags that vllm_command_reads(); each has a row above.
      throw ArgumentError(fmt::format("{}: read from the launch line but not by the engine-argument table", flag));
    }
  }
  line.flags.insert(line.flags.begin(), environment.begin(), environment.end());
  return line;
}

LaunchDeployment deployment_from_launch_line(const VllmLaunchLine& line, const ModelSpec& model, VllmProfile& profile,
                                             const ModelLoader& load_draft) {
  LaunchDeployment out;
  out.warnings = line.notes;
  std::vector<Notice> warnings;
  out.deployment = resolve_vllm_arguments(line.arguments, model, profile, load_draft, warnings);
  out.warnings.insert(out.warnings.end(), warnings.begin(), warnings.end());
  return out;
}

std::vector<std::string> split_command_line(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) throw ArgumentError("launch line: it ends with a backslash");
      const char next = line[++i];
      if (next == '\n') continue;  // a continued line
      word += next;
      in_word = true;
    } else if (c == '\'') {
      const auto close = line.find('\'', i + 1);
      if (close == std::string_view::npos) throw ArgumentError("launch line: a single quote is not closed");
      word.append(line.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() && std::string_view("\"\\$`\n").find(line[j + 1]) != std::string_view::npos) {
          if (line[j + 1] != '\n') word += line[j + 1];
          ++j;
        } else if (line[j] == '$' || line[j] == '`') {
          throw ArgumentError(fmt::format("launch line: {} inside double quotes is shell expansion; give the value "
                                          "itself",
                                          line[j]));
        } else {
          word += line[j];
        }
      }
      if (j >= line.size()) throw ArgumentError("launch line: a double quote is not closed");
      i = j;
      in_word = true;
    } else if (std::string_view(";|&<>`$()").find(c) != std::string_view::npos) {
      throw ArgumentError(fmt::format("launch line: '{}' is shell syntax, not part of one vLLM command; give the "
                                      "command alone, with values written out",
                                      c));
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace gpubudget
