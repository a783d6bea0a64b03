// vLLM version profiles: configs/vllm/<version>.json.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/profile_loading.h"
#include "core/json_reader.h"
#include "engine/profile_reader.h"

namespace gpubudget {

namespace {

bool parse_version(const std::string& text, std::array<int, 3>& out) {
  const auto parsed = parse_vllm_version(text);
  if (parsed) out = *parsed;
  return parsed.has_value();
}

Bytes gib_field(const detail::JsonReader& r, std::string_view key) {
  return bytes_from_double(r.number(key, 0, 1024) * static_cast<double>(kGiB));
}

// The keys of the "kv_cache" object (KvCacheRules).
void read_kv_cache_rules(const detail::JsonReader& k, KvCacheRules& rules) {
  k.reject_unknown_keys({"kv_cache_dtypes", "block_sizes", "user_block_size", "need", "hybrid_group_ratio",
                         "unify_page_sizes", "auto_fit_max_model_len", "num_gpu_blocks_override", "skip_layers",
                         "modelopt_kv_cache_dtypes", "compressed_tensors_kv_scheme", "fp8_ds_mla_architectures",
                         "chunked_local_keeps_hybrid_manager", "kv_connectors_with_hybrid_manager",
                         "hybrid_manager_flag_overrides", "deepseek_v4_kv_groups", "note"});
  if (k.has("kv_cache_dtypes")) rules.kv_cache_dtypes = k.string_list("kv_cache_dtypes");
  for (const auto& name : rules.kv_cache_dtypes) {
    try {
      (void)parse_kv_cache_dtype_choice(name, k.path("kv_cache_dtypes"));
    } catch (const InputError&) {
      k.fail("kv_cache_dtypes", "--kv-cache-dtype values gpubudget models");
    }
  }
  rules.block_sizes = k.integer_list("block_sizes", 1, 1 << 20);
  const auto pick = [&](std::string_view key, auto& field, const auto& names) {
    if (!k.has(key)) return;
    const auto text = k.string(key);
    for (const auto& [value, name] : names) {
      if (text == name) {
        field = value;
        return;
      }
    }
    std::string expected;
    for (const auto& [value, name] : names) expected += (expected.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    k.fail(key, expected);
  };
  pick("user_block_size", rules.user_block_size,
       std::vector<std::pair<UserBlockSizeRule, std::string_view>>{{UserBlockSizeRule::kForcedByBackend, "forced_by_backend"},
                                                                   {UserBlockSizeRule::kKernelCompatible, "kernel_compatible"}});
  pick("need", rules.need,
       std::vector<std::pair<KvNeedRule, std::string_view>>{{KvNeedRule::kPerLayerSum, "per_layer_sum"},
                                                            {KvNeedRule::kGlobalFirstGroup, "global_first_group"},
                                                            {KvNeedRule::kWorkerFirstGroup, "worker_first_group"},
                                                            {KvNeedRule::kWorkerGroups, "worker_groups"}});
  pick("num_gpu_blocks_override", rules.num_gpu_blocks_override,
       std::vector<std::pair<BlocksOverrideRule, std::string_view>>{{BlocksOverrideRule::kReplacesBlocks, "replaces_blocks"},
                                                                    {BlocksOverrideRule::kSetsMemory, "sets_memory"}});
  pick("compressed_tensors_kv_scheme", rules.compressed_tensors_kv_scheme,
       std::vector<std::pair<CheckpointKvSchemeRule, std::string_view>>{{CheckpointKvSchemeRule::kIgnored, "ignored"},
                                                                        {CheckpointKvSchemeRule::kForcesFp8, "forces_fp8"},
                                                                        {CheckpointKvSchemeRule::kAutoBecomesFp8, "auto_becomes_fp8"}});
  if (k.has("hybrid_group_ratio")) rules.hybrid_group_ratio = k.number("hybrid_group_ratio", 1.0, 100.0);
  rules.unify_page_sizes = k.boolean("unify_page_sizes", rules.unify_page_sizes);
  rules.auto_fit_max_model_len = k.boolean("auto_fit_max_model_len", rules.auto_fit_max_model_len);
  rules.skip_layers = k.boolean("skip_layers", rules.skip_layers);
  if (k.has("modelopt_kv_cache_dtypes")) {
    const detail::JsonReader map = k.object("modelopt_kv_cache_dtypes");
    rules.modelopt_kv_cache_dtypes.clear();
    for (const auto& [algo, _] : map.value().items()) {
      rules.modelopt_kv_cache_dtypes.emplace_back(algo, map.string(algo));
    }
  }
  if (k.has("fp8_ds_mla_architectures")) rules.fp8_ds_mla_architectures = k.string_list("fp8_ds_mla_architectures");
  rules.chunked_local_keeps_hybrid_manager =
      k.boolean("chunked_local_keeps_hybrid_manager", rules.chunked_local_keeps_hybrid_manager);
  if (k.has("kv_connectors_with_hybrid_manager")) {
    rules.kv_connectors_with_hybrid_manager = k.string_list("kv_connectors_with_hybrid_manager");
  }
  rules.hybrid_manager_flag_overrides = k.boolean("hybrid_manager_flag_overrides", rules.hybrid_manager_flag_overrides);
  rules.deepseek_v4_kv_groups = k.boolean("deepseek_v4_kv_groups", rules.deepseek_v4_kv_groups);
}

// The keys of the "hybrid" object (HybridRules).
void read_hybrid_rules(const detail::JsonReader& h, HybridRules& rules) {
  h.reject_unknown_keys({"prefix_caching_default", "prefix_caching", "mamba_prefix_caching_architectures",
                         "mamba_cache_mode_flag", "mamba_block_size_flag", "alignment", "alignment_unit",
                         "alignment_unit_mla", "alignment_unit_blackwell_head_256", "align_block_at_most_batched_tokens", "mamba_dtypes",
                         "gated_delta_net_ssm_dtype_flag", "ssm_dtype_defaults", "note"});
  rules.prefix_caching_default = h.boolean("prefix_caching_default", rules.prefix_caching_default);
  if (h.has("prefix_caching")) {
    rules.prefix_caching = h.string("prefix_caching");
    if (rules.prefix_caching != "never" && rules.prefix_caching != "supporting_models" &&
        rules.prefix_caching != "modes") {
      h.fail("prefix_caching", "\"never\", \"supporting_models\" or \"modes\"");
    }
  }
  if (h.has("mamba_prefix_caching_architectures")) {
    rules.mamba_prefix_caching_architectures = h.string_list("mamba_prefix_caching_architectures");
  }
  rules.mamba_cache_mode_flag = h.boolean("mamba_cache_mode_flag", rules.mamba_cache_mode_flag);
  rules.mamba_block_size_flag = h.boolean("mamba_block_size_flag", rules.mamba_block_size_flag);
  if (h.has("alignment")) {
    rules.alignment = h.string("alignment");
    if (rules.alignment != "fixed" && rules.alignment != "kernel") h.fail("alignment", "\"fixed\" or \"kernel\"");
  }
  if (h.has("alignment_unit")) rules.alignment_unit = h.integer("alignment_unit", 1, 4096);
  if (h.has("alignment_unit_mla")) rules.alignment_unit_mla = h.integer("alignment_unit_mla", 1, 4096);
  if (h.has("alignment_unit_blackwell_head_256")) {
    rules.alignment_unit_blackwell_head_256 = h.integer("alignment_unit_blackwell_head_256", 0, 4096);
  }
  rules.align_block_at_most_batched_tokens =
      h.boolean("align_block_at_most_batched_tokens", rules.align_block_at_most_batched_tokens);
  if (h.has("mamba_dtypes")) rules.mamba_dtypes = h.string_list("mamba_dtypes");
  for (const auto& name : rules.mamba_dtypes) {
    try {
      (void)parse_mamba_dtype_choice(name, h.path("mamba_dtypes"));
    } catch (const InputError&) {
      h.fail("mamba_dtypes", "MambaDType values (auto, float32, float16, bfloat16)");
    }
  }
  rules.gated_delta_net_ssm_dtype_flag = h.boolean("gated_delta_net_ssm_dtype_flag", rules.gated_delta_net_ssm_dtype_flag);
  if (h.has("ssm_dtype_defaults")) {
    const auto& list = h.value()["ssm_dtype_defaults"];
    if (!list.is_array()) h.fail("ssm_dtype_defaults", "an array");
    rules.ssm_dtype_defaults.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const detail::JsonReader e(list[i], h.file(), fmt::format("{}/{}", h.path("ssm_dtype_defaults"), i));
      e.reject_unknown_keys({"architectures", "fallback"});
      SsmDtypeDefault rule{e.string_list("architectures"), e.optional_string("fallback").value_or("")};
      if (!rule.fallback.empty() && !parse_torch_dtype(rule.fallback)) e.fail("fallback", "a torch dtype name");
      rules.ssm_dtype_defaults.push_back(std::move(rule));
    }
  }
}

// A backend table: `map_key` holds the entries by id (vLLM's backend name, with "@variant" when one
// name has several rows: "FLASHMLA@sm10"), so that a profile extending another changes one entry in one
// line; `priority_key` lists every id once, in the order vLLM tries them. Returns (vLLM name, entry).
std::vector<std::pair<std::string, detail::JsonReader>> backends_by_priority(const detail::JsonReader& r,
                                                                             std::string_view map_key,
                                                                             std::string_view priority_key) {
  const detail::JsonReader entries = r.object(map_key);
  const auto priority = r.string_list(priority_key);
  std::vector<std::pair<std::string, detail::JsonReader>> out;
  std::set<std::string> seen;
  for (const auto& id : priority) {
    if (!seen.insert(id).second) r.fail(priority_key, fmt::format("each id once (\"{}\" is listed twice)", id));
    if (!entries.has(id)) r.fail(priority_key, fmt::format("ids of {} entries (\"{}\" has none)", map_key, id));
    out.emplace_back(id.substr(0, id.find('@')), entries.object(id));
  }
  for (const auto& [id, entry] : entries.value().items()) {
    if (!seen.count(id)) r.fail(priority_key, fmt::format("every id of {} (\"{}\" is missing)", map_key, id));
  }
  return out;
}

// A profile file's document: its hand-written rules with, when the file has one, its generated
// coefficients merged in (coefficients/<stem>.json beside it, written by scripts/calibrate-profiles.sh;
// it holds "overheads" and nothing else).
nlohmann::json profile_document(const std::string& text, const std::string& path) {
  nlohmann::json json = detail::parse_json(text, path);
  const auto coefficients_path = detail::coefficients_path_of(path);
  std::error_code ec;
  if (json.is_object() && std::filesystem::is_regular_file(coefficients_path, ec)) {
    const nlohmann::json coefficients =
        detail::parse_json(detail::read_text_file(coefficients_path), coefficients_path);
    const detail::JsonReader c(coefficients, coefficients_path);
    c.reject_unknown_keys({"overheads"});
    (void)c.object("overheads");
    if (json.contains("overheads")) {
      detail::JsonReader(json, path).fail("overheads", fmt::format("absent: {} holds them", coefficients_path));
    }
    json["overheads"] = coefficients["overheads"];
  }
  return json;
}

}  // namespace

std::string detail::coefficients_path_of(const std::string& path) {
  const std::filesystem::path file(path);
  return (file.parent_path() / "coefficients" / file.filename()).string();
}

nlohmann::json detail::resolve_profile_json(const std::string& text, const std::string& path,
                                            const std::string& base_profiles) {
  // "extends": the profile is its base (a file of the same directory) with its own keys merged over
  // it, JSON Merge Patch (RFC 7386): objects merge key by key, null removes a key, anything else
  // replaces. The chain is applied from its root forward, so that a null removes what the bases set.
  std::vector<nlohmann::json> documents = {profile_document(text, path)};
  std::vector<std::string> chain = {path};
  while (documents.back().is_object() && documents.back().contains("extends")) {
    const detail::JsonReader r(documents.back(), chain.back());
    const auto base_name = r.string("extends");
    if (base_name.empty() || base_name.find('/') != std::string::npos || base_name.find('\\') != std::string::npos ||
        base_name.find("..") != std::string::npos) {
      r.fail("extends", "the name of a profile in the same directory (\"0.13\")");
    }
    auto base_path = (std::filesystem::path(chain.back()).parent_path() / (base_name + ".json")).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(base_path, ec) && !base_profiles.empty()) {
      base_path = (std::filesystem::path(base_profiles) / (base_name + ".json")).string();
    }
    if (std::find(chain.begin(), chain.end(), base_path) != chain.end() || chain.size() > 16) {
      r.fail("extends", "a chain of profiles without a cycle (at most 16)");
    }
    documents.back().erase("extends");
    documents.push_back(profile_document(detail::read_text_file(base_path), base_path));
    if (!documents.back().is_object()) detail::JsonReader(documents.back(), base_path).fail("", "a JSON object");
    chain.push_back(base_path);
  }
  nlohmann::json json = std::move(documents.back());
  for (auto it = std::next(documents.rbegin()); it != documents.rend(); ++it) json.merge_patch(*it);
  return json;
}

VllmProfile detail::parse_vllm_profile(const std::string& text, const std::string& path,
                                       const std::string& base_profiles) {
  const nlohmann::json json = detail::resolve_profile_json(text, path, base_profiles);
  const detail::JsonReader r(json, path);
  r.reject_unknown_keys({"schema_version", "version", "description", "default_gpu_memory_utilization",
                         "charges_cudagraph_memory", "kv_tokens_from_concurrency", "attention_backend_env", "optimization_levels",
                         "prefetch_offloader",
                         "kv_cache", "hybrid", "lora", "speculative", "all2all", "cuda_graphs", "messages", "batch_defaults",
                         "attention_backend_priority", "attention_backends", "mxfp4_moe_backend_priority",
                         "mxfp4_moe_backends", "overheads", "calibration", "sources"});
  if (r.integer("schema_version", 1, 1) != 1) r.fail("schema_version", "1");
  VllmProfile p;
  p.source = path;
  p.version = r.string("version");
  p.description = r.optional_string("description").value_or("");
  p.default_gpu_memory_utilization = r.number("default_gpu_memory_utilization", 0.01, 1.0);
  p.charges_cudagraph_memory = r.boolean("charges_cudagraph_memory", false);
  p.kv_tokens_from_concurrency = r.boolean("kv_tokens_from_concurrency", false);
  p.attention_backend_env = r.boolean("attention_backend_env", false);
  p.optimization_levels = r.boolean("optimization_levels", false);
  p.prefetch_offloader = r.boolean("prefetch_offloader", false);
  p.kv_cache.kv_cache_dtypes = {"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla",
                                "int8_per_token_head", "fp8_per_token_head", "nvfp4"};
  p.kv_cache.modelopt_kv_cache_dtypes = {{"fp8", "fp8_e4m3"}, {"nvfp4", "nvfp4"}};
  if (r.has("kv_cache")) read_kv_cache_rules(r.object("kv_cache"), p.kv_cache);
  if (r.has("hybrid")) read_hybrid_rules(r.object("hybrid"), p.hybrid);
  if (r.has("speculative")) {
    const detail::JsonReader sp = r.object("speculative");
    sp.reject_unknown_keys({"mtp_shares_head", "profiled_drafters", "rejection_sampler", "note"});
    p.speculative.mtp_shares_head = sp.boolean("mtp_shares_head", true);
    if (sp.has("profiled_drafters")) {
      p.speculative.profiled_drafters = sp.string_list("profiled_drafters");
      for (const auto& method : p.speculative.profiled_drafters) {
        try {
          parse_speculative_method(method);
        } catch (const InputError&) {
          sp.fail("profiled_drafters", "--speculative-config method names");
        }
      }
    }
    if (sp.has("rejection_sampler")) {
      const detail::JsonReader rs = sp.object("rejection_sampler");
      rs.reject_unknown_keys({"logit_copies", "fp32_bytes", "note"});
      p.speculative.rejection_logit_copies = rs.integer("logit_copies", 0, 64);
      p.speculative.rejection_fp32_bytes = rs.integer("fp32_bytes", 0, 1024);
    }
  }
  if (r.has("all2all")) {
    const detail::JsonReader a = r.object("all2all");
    a.reject_unknown_keys({"deepep_high_throughput_disables_cuda_graphs", "backend_env", "dispatch_tokens", "moe_dp_chunk_size",
                           "batched_dp_moe_default_tokens", "unknown_backends", "fallback_backends", "one_sided_dispatch_formats", "note"});
    p.all2all.deepep_high_throughput_disables_cuda_graphs = a.boolean("deepep_high_throughput_disables_cuda_graphs", true);
    p.all2all.backend_env = a.boolean("backend_env", false);
    const std::string tokens = a.optional_string("dispatch_tokens").value_or("moe_dp_chunk_size");
    if (tokens != "moe_dp_chunk_size" && tokens != "max_num_batched_tokens") {
      a.fail("dispatch_tokens", "\"moe_dp_chunk_size\" or \"max_num_batched_tokens\"");
    }
    p.all2all.dispatch_tokens_are_batched_tokens = tokens == "max_num_batched_tokens";
    p.all2all.moe_dp_chunk_size = a.optional_integer("moe_dp_chunk_size", 1, 1 << 20).value_or(256);
    p.all2all.batched_dp_moe_default_tokens = a.optional_integer("batched_dp_moe_default_tokens", 0, 1 << 20).value_or(0);
    if (a.has("one_sided_dispatch_formats")) {
      p.all2all.one_sided_dispatch_formats = a.string_list("one_sided_dispatch_formats");
      for (const auto& f : p.all2all.one_sided_dispatch_formats) {
        if (f != "nvfp4" && f != "bf16" && f != "mxfp8") a.fail("one_sided_dispatch_formats", "\"nvfp4\", \"bf16\" or \"mxfp8\"");
      }
    }
    for (const char* key : {"unknown_backends", "fallback_backends"}) {
      if (!a.has(key)) continue;
      auto& names = std::string_view(key) == "unknown_backends" ? p.all2all.unknown_backends : p.all2all.fallback_backends;
      names = a.string_list(key);
      for (const auto& n : names) {
        try {
          parse_all2all_backend(n);
        } catch (const InputError&) {
          a.fail(key, "names of --all2all-backend values");
        }
      }
    }
  }
  if (r.has("cuda_graphs")) {
    const detail::JsonReader g = r.object("cuda_graphs");
    g.reject_unknown_keys({"stride_above_256", "max_size_counts_speculative_tokens", "captures_max_num_batched_tokens",
                           "note"});
    p.cuda_graphs.stride_above_256 = g.integer("stride_above_256", 8, 16);
    if (p.cuda_graphs.stride_above_256 != 8 && p.cuda_graphs.stride_above_256 != 16) g.fail("stride_above_256", "8 or 16");
    p.cuda_graphs.max_size_counts_speculative_tokens = g.boolean("max_size_counts_speculative_tokens", true);
    p.cuda_graphs.captures_max_num_batched_tokens = g.boolean("captures_max_num_batched_tokens", true);
  }
  if (r.has("lora")) {
    const detail::JsonReader l = r.object("lora");
    l.reject_unknown_keys({"embedding_architectures", "max_lm_head_vocab", "note"});
    p.lora.embedding_architectures = l.string_list("embedding_architectures");
    p.lora.max_lm_head_vocab = l.integer("max_lm_head_vocab", 1, 1 << 30);
  }

  const detail::JsonReader m = r.object("messages");
  m.reject_unknown_keys({"kv_cache_too_small", "estimate_sentence", "no_kv_memory", "gib_format"});
  p.messages.kv_cache_too_small = m.string("kv_cache_too_small");
  p.messages.estimate_sentence = m.string("estimate_sentence");
  p.messages.no_kv_memory = m.string("no_kv_memory");
  const auto gib_format = m.string("gib_format");
  if (gib_format != "fixed2" && gib_format != "format_gib") m.fail("gib_format", "\"fixed2\" or \"format_gib\"");
  p.messages.gib_fixed_two_decimals = gib_format == "fixed2";

  if (!json.contains("batch_defaults")) r.fail("batch_defaults", "an array");
  const auto& batch = json.at("batch_defaults");
  if (!batch.is_array()) r.fail("batch_defaults", "an array");
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const detail::JsonReader b(batch[i], path, fmt::format("/batch_defaults/{}", i));
    b.reject_unknown_keys({"min_memory_gib", "excluded_device_substring", "max_num_batched_tokens", "max_num_seqs",
                           "llm_class_max_num_batched_tokens", "llm_class_max_num_seqs"});
    BatchDefaults defaults{b.number("min_memory_gib", 0, 1e6),
                           b.optional_string("excluded_device_substring").value_or(""),
                           b.integer("max_num_batched_tokens", 1, std::int64_t{1} << 30),
                           b.integer("max_num_seqs", 1, std::int64_t{1} << 20), 0, 0};
    defaults.llm_class_max_num_batched_tokens =
        b.optional_integer("llm_class_max_num_batched_tokens", 1, std::int64_t{1} << 30)
            .value_or(defaults.max_num_batched_tokens);
    defaults.llm_class_max_num_seqs =
        b.optional_integer("llm_class_max_num_seqs", 1, std::int64_t{1} << 20).value_or(defaults.max_num_seqs);
    p.batch_defaults.push_back(defaults);
  }
  for (const auto& backend_entry : backends_by_priority(r, "attention_backends", "attention_backend_priority")) {
    const std::string& name = backend_entry.first;
    const detail::JsonReader& b = backend_entry.second;  // not a structured binding: lambdas below capture it
    b.reject_unknown_keys({"kind", "platform", "compute_capability_majors", "kv_cache_dtypes", "block_size",
                           "kernel_block_sizes", "kernel_block_multiple", "ignores_user_block_size",
                           "max_query_heads_per_rank", "qk_nope_head_dim", "quantized_kv_layout",
                           "auto_kv_cache_dtype", "kv_cache_dtype_error", "note"});
    AttentionBackend a;
    a.name = name;
    const auto kind = b.string("kind");
    if (kind == "mla" || kind == "mla_sparse") a.kind = AttentionKind::kMla;
    else if (kind == "full") a.kind = AttentionKind::kFull;
    else b.fail("kind", "\"mla\", \"mla_sparse\" or \"full\"");
    a.sparse = kind == "mla_sparse";
    a.quantized_kv_layout = b.optional_string("quantized_kv_layout").value_or("");
    const auto platform = b.string("platform");
    if (platform == "cuda") a.platform = Platform::kCuda;
    else if (platform == "rocm") a.platform = Platform::kRocm;
    else b.fail("platform", "\"cuda\" or \"rocm\"");
    for (const auto cc : b.integer_list("compute_capability_majors", 1, 100)) {
      a.compute_capability_majors.push_back(static_cast<int>(cc));
    }
    a.kv_cache_dtypes = b.string_list("kv_cache_dtypes");
    a.block_size = b.integer("block_size", 1, 4096);
    a.kernel_block_sizes = b.integer_list("kernel_block_sizes", 1, 4096);
    a.kernel_block_multiple = b.optional_integer("kernel_block_multiple", 1, 4096).value_or(0);
    if (!a.kernel_block_sizes.empty() && a.kernel_block_multiple > 0) {
      b.fail("kernel_block_multiple", "absent when kernel_block_sizes is given");
    }
    a.ignores_user_block_size = b.boolean("ignores_user_block_size", false);
    a.max_query_heads_per_rank = b.optional_integer("max_query_heads_per_rank", 1, 1 << 20).value_or(0);
    a.qk_nope_head_dim = b.optional_integer("qk_nope_head_dim", 1, 1 << 20).value_or(0);
    a.auto_kv_cache_dtype = b.optional_string("auto_kv_cache_dtype").value_or("");
    a.kv_cache_dtype_error = b.optional_string("kv_cache_dtype_error").value_or("");
    if (!a.supports_block_size(a.block_size)) b.fail("block_size", "a size the backend's kernel_block_sizes run");
    p.attention_backends.push_back(std::move(a));
  }
  if (json.contains("mxfp4_moe_backends")) {
    for (const auto& backend_entry : backends_by_priority(r, "mxfp4_moe_backends", "mxfp4_moe_backend_priority")) {
      const std::string& name = backend_entry.first;
      const detail::JsonReader& b = backend_entry.second;  // not a structured binding: the lambda below captures it
      b.reject_unknown_keys({"compute_capability_majors", "intermediate_align", "hidden_align",
                             "swizzle_value_align", "swizzle_scale_align", "keeps_checkpoint_scales", "bias_bytes",
                             "for_gpt_oss", "note"});
      Mxfp4MoeBackend backend;
      backend.name = name;
      for (const auto cc : b.integer_list("compute_capability_majors", 1, 100)) {
        backend.compute_capability_majors.push_back(static_cast<int>(cc));
      }
      Mxfp4Packing& x = backend.packing;
      x.intermediate_align = b.integer("intermediate_align", 1, 4096);
      x.hidden_align = b.integer("hidden_align", 1, 4096);
      const auto pair = [&](std::string_view key, std::int64_t& rows, std::int64_t& k) {
        if (!b.has(key)) return;
        const auto v = b.integer_list(key, 1, 4096);
        if (v.size() != 2) b.fail(key, "[rows, K] alignments");
        rows = v[0];
        k = v[1];
      };
      pair("swizzle_value_align", x.value_row_align, x.value_k_align);
      pair("swizzle_scale_align", x.scale_row_align, x.scale_k_align);
      x.keeps_checkpoint_scales = b.boolean("keeps_checkpoint_scales", false);
      x.bias_bytes = b.optional_integer("bias_bytes", 2, 4).value_or(2);
      backend.for_gpt_oss = b.boolean("for_gpt_oss", true);
      p.mxfp4_moe_backends.push_back(std::move(backend));
    }
  }
  const detail::JsonReader o = r.object("overheads");
  o.reject_unknown_keys({"sampler_bytes_per_logit", "forward_activation_factor", "non_torch_single_gpu_gib",
                         "non_torch_multi_nvlink_gib", "non_torch_multi_pcie_gib", "cudagraph_base_gib",
                         "cudagraph_per_layer_gib", "relative_uncertainty", "fit_notes"});
  p.overheads.sampler_bytes_per_logit = o.number("sampler_bytes_per_logit", 0, 1000);
  p.overheads.forward_activation_factor = o.number("forward_activation_factor", 0, 100);
  p.overheads.non_torch_single_gpu = gib_field(o, "non_torch_single_gpu_gib");
  p.overheads.non_torch_multi_nvlink = gib_field(o, "non_torch_multi_nvlink_gib");
  p.overheads.non_torch_multi_pcie = gib_field(o, "non_torch_multi_pcie_gib");
  p.overheads.cudagraph_base = gib_field(o, "cudagraph_base_gib");
  p.overheads.cudagraph_per_layer = gib_field(o, "cudagraph_per_layer_gib");
  p.overheads.relative_uncertainty = o.number("relative_uncertainty", 0, 10);
  return p;
}

namespace {

VllmProfile parse_profile(const std::filesystem::path& path) {
  return detail::parse_vllm_profile(detail::read_text_file(path.string()), path.string());
}

struct ProfileFile {
  std::array<int, 3> version;
  std::filesystem::path path;
};

std::vector<ProfileFile> profile_files(const ConfigDir& configs) {
  std::vector<ProfileFile> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(configs.root / "vllm", ec)) {
    if (entry.path().extension() != ".json") continue;
    std::array<int, 3> v{};
    if (parse_version(entry.path().stem().string(), v)) files.push_back({v, entry.path()});
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  return files;
}

}  // namespace

// Releases older than the oldest profile down to this one are answered with the oldest profile (and a
// note): 0.10 runs the same V1 engine and memory profiling as 0.11. Older ones are refused.
constexpr VllmVersionNumber kOldestAnsweredVersion = {0, 10, 0};

std::optional<VllmVersionNumber> parse_vllm_version(std::string_view text) {
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.remove_prefix(1);
  VllmVersionNumber out{0, 0, 0};
  std::size_t pos = 0;
  for (std::size_t part = 0; part < 3; ++part) {
    std::size_t end = pos;
    while (end < text.size() && end - pos < 7 && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos || end - pos > 6) return part >= 2 ? std::optional(out) : std::nullopt;
    std::from_chars(text.data() + pos, text.data() + end, out[part]);
    if (end >= text.size() || text[end] != '.') {
      return part >= 1 || end == text.size() ? std::optional(out) : std::nullopt;  // "0.15rc1", "0.15", "1"
    }
    pos = end + 1;
  }
  return out;
}

VllmProfile load_vllm_profile(const std::string& version, const ConfigDir& configs) {
  const auto files = profile_files(configs);
  if (files.empty()) {
    throw InputError(fmt::format("{}: no vLLM profiles found", (configs.root / "vllm").string()));
  }
  if (version.empty()) return parse_profile(files.back().path);
  std::array<int, 3> wanted{};
  if (!parse_version(version, wanted)) {
    throw InputError(fmt::format("--vllm-version: expected a version like 0.15 or 0.21.1, got \"{}\"", version));
  }
  const auto name = [](const ProfileFile& f) { return f.path.stem().string(); };
  if (wanted == VllmVersionNumber{0, 0, 0}) {
    // vLLM built from source without a release tag reports 0.0.0 (setuptools-scm fallback).
    VllmProfile p = parse_profile(files.back().path);
    p.version_note = fmt::format("vLLM {} is a build without a release number: the newest profile ({}) is used",
                                 version, name(files.back()));
    return p;
  }
  const ProfileFile* chosen = nullptr;
  for (const auto& f : files) {
    if (f.version <= wanted) chosen = &f;
  }
  if (chosen == nullptr && wanted < kOldestAnsweredVersion) {
    throw InputError(fmt::format("--vllm-version {}: older than {}.{}, the oldest release gpubudget answers with its "
                                 "nearest profile (oldest profile: {})",
                                 version, kOldestAnsweredVersion[0], kOldestAnsweredVersion[1], name(files.front())));
  }
  if (chosen == nullptr) {
    VllmProfile p = parse_profile(files.front().path);
    p.version_note = fmt::format("vLLM {} is older than every modelled version: the oldest profile ({}) is used, and "
                                 "its defaults and rules may differ from that release's",
                                 version, name(files.front()));
    return p;
  }
  VllmProfile p = parse_profile(chosen->path);
  // What follows the numbers: rc / dev / post / a local part.
  const auto numbers_end = version.find_first_not_of("0123456789.vV");
  const bool pre_release = numbers_end != std::string::npos;
  const bool same_minor = chosen->version[0] == wanted[0] && chosen->version[1] == wanted[1];
  if (!same_minor) {
    const bool newest = chosen == &files.back();
    p.version_note = fmt::format("no profile for vLLM {}.{}: the {} profile is used ({})", wanted[0], wanted[1],
                                 name(*chosen),
                                 newest ? "the newest; a later release may differ" : "the newest release before it");
  } else if (pre_release) {
    p.version_note = fmt::format("vLLM {} is a pre-release or development build: the {} profile is used (the "
                                 "build may predate changes that release made)",
                                 version, name(*chosen));
  }
  return p;
}

VllmProfile load_vllm_profile_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: no such profile file", path));
  return parse_profile(path);
}

VllmProfile load_vllm_profile_file(const std::string& path, const ConfigDir& configs) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(fmt::format("{}: no such profile file", path));
  return detail::parse_vllm_profile(detail::read_text_file(path), path, (configs.root / "vllm").string());
}

std::vector<std::string> list_vllm_profiles(const ConfigDir& configs) {
  std::vector<std::string> out;
  for (const auto& f : profile_files(configs)) out.push_back(f.path.stem().string());
  return out;
}

}  // namespace gpubudget
