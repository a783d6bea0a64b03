// The generic path (docs/methodology.md §Generic): a ModelSpec from the checkpoint's own safetensors
// headers for an architecture no family parser knows.
//
// vLLM serves an architecture it does not register through its Transformers modeling backend
// (vllm/model_executor/models/transformers/): the transformers model is built on the meta device in the
// model dtype, every nn.Linear is replaced by ColumnParallelLinear ("colwise"), RowParallelLinear
// ("rowwise") or ReplicatedLinear (anything the config class's tp_plan does not name), the input
// embedding by a VocabParallelEmbedding and the head by a ParallelLMHead (vocabulary padded to 64),
// MoE experts by one FusedMoE per layer (transformers/moe.py), and every decoder layer gets an Attention
// of max(1, kv_heads / tp) heads of get_head_size(), sliding where layer_types says
// "sliding_attention" (base.py create_attention_instances). The tp_plan is a class attribute, not in
// config.json, so the standard plan of transformers' decoder configs is assumed: q/k/v/gate/up (and
// Phi-3's fused qkv/gate_up) column-wise, o/down row-wise. Whatever matches no rule is counted whole
// on every GPU and named in the assumptions, so the figure errs towards less KV cache.
#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/safetensors.h"
#include "model/blocks.h"
#include "model/generic.h"
#include "model/hparams.h"

namespace gpubudget::detail {

namespace {

// Where a tensor sits: inside decoder layer `layer` (its name after the layer number in `rest`), or
// outside the layers (layer -1, `rest` the whole name).
struct TensorPlace {
  std::string container;  // e.g. "model.layers" ("" outside)
  std::int64_t layer = -1;
  std::string rest;       // e.g. "self_attn.q_proj.weight"
};

bool is_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

TensorPlace place_of(const std::string& name) {
  std::size_t start = 0;
  while (start < name.size()) {
    const std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) break;
    const std::string_view part(name.data() + start, dot - start);
    if (part == "layers" || part == "h" || part == "blocks") {
      const std::size_t next = name.find('.', dot + 1);
      const std::string_view index(name.data() + dot + 1, (next == std::string::npos ? name.size() : next) - dot - 1);
      if (next != std::string::npos && is_number(index) && index.size() <= 6) {
        TensorPlace p;
        p.container = name.substr(0, dot);
        std::from_chars(index.data(), index.data() + index.size(), p.layer);
        p.rest = name.substr(next + 1);
        return p;
      }
    }
    start = dot + 1;
  }
  return {"", -1, name};
}

// "a.b.weight" → {"a.b", "weight"}; a name without a dot is its own module.
std::pair<std::string, std::string> split_suffix(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string leaf_of(const std::string& module) {
  const auto dot = module.rfind('.');
  return dot == std::string::npos ? module : module.substr(dot + 1);
}

std::int64_t elements_of(const SafetensorsTensor& t) {
  std::int64_t n = 1;
  for (const auto d : t.shape) n *= d;
  return n;
}

// The standard tp_plan of transformers' decoder configs (LlamaConfig.base_model_tp_plan and kin).
Parallelism standard_parallelism(const std::string& leaf, bool& known) {
  static const std::set<std::string, std::less<>> kColumn = {"q_proj",   "k_proj",  "v_proj",      "gate_proj",
                                                             "up_proj",  "qkv_proj", "gate_up_proj"};
  static const std::set<std::string, std::less<>> kRow = {"o_proj", "down_proj"};
  known = true;
  if (kColumn.contains(leaf)) return Parallelism::kColumn;
  if (kRow.contains(leaf)) return Parallelism::kRow;
  known = false;
  return Parallelism::kReplicated;
}

Component component_of(const std::string& module, const std::string& leaf) {
  if (module.find("shared_expert") != std::string::npos) return Component::kSharedExperts;
  if (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj" || leaf == "o_proj" || leaf == "qkv_proj") {
    return Component::kAttention;
  }
  if (leaf == "gate_proj" || leaf == "up_proj" || leaf == "down_proj" || leaf == "gate_up_proj") {
    return Component::kDenseMlp;
  }
  if (leaf == "gate" || leaf == "router") return Component::kRouter;
  if (module.find("attn") != std::string::npos || module.find("attention") != std::string::npos) {
    return Component::kAttention;
  }
  return module.find("mlp") != std::string::npos ? Component::kDenseMlp : Component::kNorms;
}

// One FusedMoE block: the tensors under "<layer>.<...>.experts.".
struct ExpertTensors {
  std::string module;  // "model.layers.3.mlp.experts"
  std::set<std::int64_t> indices;  // per-expert checkpoints: the expert numbers seen
  std::int64_t gate_elements = 0, up_elements = 0, down_elements = 0;
  std::int64_t fused_experts = 0;  // fused 3-D checkpoints: leading dimension
  std::int64_t down_rows = 0, down_cols = 0;  // one expert's down projection [H, I] (or [I, H])
  std::vector<const SafetensorsTensor*> other;  // biases, scales
};

bool is_expert_projection(const std::string& leaf) {
  return leaf == "gate_proj" || leaf == "up_proj" || leaf == "down_proj" || leaf == "w1" || leaf == "w2" ||
         leaf == "w3" || leaf == "gate_up_proj";
}

std::string summarize(const std::vector<std::string>& names, std::size_t shown = 4) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += fmt::format("{}{}", i ? ", " : "", names[i]);
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

}  // namespace

void parse_generic(const ParseContext& c, const CheckpointHeaders& headers, ModelSpec& model) {
  const JsonReader& t = c.text;
  const std::string where = headers.index_path.empty() ? model.source : headers.index_path;
  if (!c.quantization.method.empty()) {
    throw InputError(fmt::format("{}: unsupported architecture {} (model_type \"{}\") with quantization method \"{}\": "
                                 "the generic path sizes unquantized checkpoints only",
                                 model.source, model.architecture, model.model_type, c.quantization.method));
  }
  if (c.root.has("vision_config") || c.root.has("audio_config")) {
    throw InputError(fmt::format("{}: unsupported multimodal architecture {} (model_type \"{}\"): the generic path "
                                 "sizes language models only",
                                 model.source, model.architecture, model.model_type));
  }
  // Attention the generic cache model (K and V of num_key_value_heads x head_dim per layer) would get
  // wrong is refused: latent attention, and layer types other than full and sliding attention.
  for (const char* latent : {"kv_lora_rank", "q_lora_rank"}) {
    if (t.has(latent) && !t.value()[latent].is_null()) {
      throw InputError(fmt::format("{}: unsupported architecture {} (model_type \"{}\"): {} says latent attention, "
                                   "whose cache the generic path does not size",
                                   t.path(latent), model.architecture, model.model_type, latent));
    }
  }
  for (const auto& type : t.string_list("layer_types")) {
    if (type != "full_attention" && type != "sliding_attention") {
      t.fail("layer_types", fmt::format("\"full_attention\" or \"sliding_attention\" entries (the generic path sizes "
                                        "attention layers only; \"{}\" is not one)",
                                        type));
    }
  }
  HparamsDefaults defaults;
  defaults.intermediate_required = false;
  const CommonHparams h = read_common_hparams(t, defaults);
  model.hidden_size = h.hidden_size;
  const std::int64_t L = h.num_hidden_layers;
  const std::int64_t mtp = t.optional_integer("num_nextn_predict_layers", 0, kMaxLayers).value_or(0);
  const QuantFormat format = c.unquantized();
  const Dtype dtype = c.dtype;
  std::vector<std::string>& assumed = model.generic_assumptions;
  assumed.push_back(fmt::format("{} is served through vLLM's Transformers backend, which must support the "
                                "architecture (its transformers class, with vLLM's attention interface)",
                                model.architecture));
  assumed.push_back("tensor parallelism follows transformers' standard tp_plan: q/k/v/gate/up (and fused qkv/gate_up) "
                    "column-wise, o/down row-wise; a class without a tp_plan cannot run with TP > 1");

  // Group the header tensors by module.
  std::string container;
  std::int64_t header_layers = 0;
  std::map<std::string, std::vector<const SafetensorsTensor*>> modules;  // module name → its tensors
  std::map<std::string, std::int64_t> module_layer;
  std::map<std::string, ExpertTensors> expert_blocks;
  std::map<std::string, std::int64_t> expert_layer;
  for (const auto& file : headers.files) {
    for (const auto& tensor : file.tensors) {
      const TensorPlace p = place_of(tensor.name);
      if (p.layer >= 0) {
        if (!container.empty() && p.container != container) {
          throw InputError(fmt::format("{}: unsupported architecture {}: the checkpoint has two layer stacks ({} and {}); "
                                       "the generic path sizes one decoder stack only",
                                       where, model.architecture, container, p.container));
        }
        container = p.container;
        header_layers = std::max(header_layers, p.layer + 1);
      }
      const auto [module, suffix] = split_suffix(tensor.name);
      // A recurrent mixer (Mamba, linear attention) keeps a per-request state the generic layout cannot
      // size; counting only the attention caches would be silently wrong.
      if (p.layer >= 0 && (leaf_of(module) == "A_log" || leaf_of(module) == "conv1d" || suffix == "A_log" ||
                           p.rest.find("mamba.") != std::string::npos || p.rest.find("linear_attn.") != std::string::npos)) {
        throw InputError(fmt::format("{}: unsupported architecture {} (model_type \"{}\"): {} belongs to a recurrent "
                                     "mixer (Mamba / linear attention), whose state the generic path does not size",
                                     where, model.architecture, model.model_type, tensor.name));
      }
      const auto experts_at = p.rest.find("experts.");
      if (p.layer >= 0 && experts_at != std::string::npos &&
          (experts_at == 0 || p.rest[experts_at - 1] == '.')) {
        const std::string block = tensor.name.substr(0, tensor.name.size() - p.rest.size() + experts_at + 7);
        ExpertTensors& e = expert_blocks[block];
        e.module = block;
        expert_layer[block] = p.layer;
        const std::string after = p.rest.substr(experts_at + 8);  // "3.gate_proj.weight" or "gate_up_proj"
        const auto [inner, inner_suffix] = split_suffix(after);
        const auto first_dot = after.find('.');
        const bool per_expert = first_dot != std::string::npos && is_number(after.substr(0, first_dot));
        const std::string leaf = leaf_of(per_expert ? inner : (inner_suffix == "weight" ? inner : after));
        if (!is_expert_projection(leaf) || (per_expert && (inner_suffix != "weight" || tensor.shape.size() != 2)) ||
            (!per_expert && tensor.shape.size() != 3)) {
          e.other.push_back(&tensor);
          continue;
        }
        const std::int64_t n = elements_of(tensor);
        if (per_expert) {
          std::int64_t index = 0;
          std::from_chars(after.data(), after.data() + first_dot, index);
          e.indices.insert(index);
        } else {
          e.fused_experts = std::max(e.fused_experts, tensor.shape[0]);
        }
        if (leaf == "down_proj" || leaf == "w2") {
          e.down_elements += n;
          e.down_rows = tensor.shape[tensor.shape.size() - 2];
          e.down_cols = tensor.shape.back();
        } else if (leaf == "up_proj" || leaf == "w3") {
          e.up_elements += n;
        } else {
          e.gate_elements += n;  // gate_proj / w1, or the fused gate_up_proj
        }
        continue;
      }
      modules[module].push_back(&tensor);
      module_layer[module] = p.layer;
    }
  }
  if (header_layers == 0) {
    throw InputError(fmt::format("{}: unsupported architecture {}: no tensor of the checkpoint is in a numbered layer "
                                 "stack (layers.N / h.N / blocks.N), so the generic path cannot size it",
                                 where, model.architecture));
  }
  if (header_layers != L && header_layers != L + mtp) {
    throw InputError(fmt::format("{}: the checkpoint's {} holds {} layers but num_hidden_layers is {}; the generic "
                                 "path will not guess which the config means",
                                 where, container, header_layers, L));
  }

  model.layers.resize(static_cast<std::size_t>(L));
  std::vector<LayerSpec> mtp_layers(static_cast<std::size_t>(header_layers - L));
  auto layer_at = [&](std::int64_t index) -> LayerSpec& {
    return index < L ? model.layers[static_cast<std::size_t>(index)]
                     : mtp_layers[static_cast<std::size_t>(index - L)];
  };
  for (std::int64_t i = 0; i < header_layers; ++i) layer_at(i).index = i;

  std::vector<std::string> replicated_linears;
  Bytes replicated_bytes(0);
  std::vector<bool> has_attention(static_cast<std::size_t>(header_layers), false);
  bool embedding_found = false;
  bool head_found = false;
  for (const auto& [module, tensors] : modules) {
    const std::int64_t layer = module_layer[module];
    const SafetensorsTensor* weight = nullptr;
    const SafetensorsTensor* bias = nullptr;
    for (const auto* tensor : tensors) {
      const std::string suffix = split_suffix(tensor->name).second;
      if (suffix == "weight" && tensor->shape.size() >= 2) weight = tensor;
      if (suffix == "bias") bias = tensor;
    }
    const std::string leaf = leaf_of(module);
    const std::string canonical = canonical_module_name(module);
    if (layer < 0 && weight != nullptr && tensors.size() == 1 &&
        (canonical == "embed_tokens" || leaf == "embed_tokens" || leaf == "wte" || leaf == "word_embeddings" ||
         leaf == "tok_embeddings")) {
      if (weight->shape.size() != 2 || weight->shape[0] != model.vocab_size || weight->shape[1] != h.hidden_size) {
        throw InputError(fmt::format("{}: {} has shape [{}] but vocab_size × hidden_size is [{}, {}]", where,
                                     weight->name, fmt::join(weight->shape, ", "), model.vocab_size, h.hidden_size));
      }
      model.embedding_name = module;
      embedding_found = true;
      continue;
    }
    if (layer < 0 && canonical == "lm_head" && weight != nullptr && tensors.size() == 1) {
      if (weight->shape.size() != 2 || weight->shape[0] != model.vocab_size || weight->shape[1] != h.hidden_size) {
        throw InputError(fmt::format("{}: {} has shape [{}] but vocab_size × hidden_size is [{}, {}]", where,
                                     weight->name, fmt::join(weight->shape, ", "), model.vocab_size, h.hidden_size));
      }
      head_found = true;
      continue;
    }
    bool known = false;
    const Parallelism parallelism = standard_parallelism(leaf, known);
    if (layer >= 0 && weight != nullptr && weight->shape.size() == 2 && tensors.size() <= 2) {
      LayerSpec& target = layer_at(layer);
      const Component component = component_of(module, leaf);
      if (component == Component::kAttention && known) has_attention[static_cast<std::size_t>(layer)] = true;
      if (!known && leaf != "gate" && leaf != "router") {
        replicated_linears.push_back(module);
        replicated_bytes += Bytes(elements_of(*weight) * element_bytes(dtype));
      }
      if (leaf == "gate" || leaf == "router") target.is_moe = true;
      target.linears.push_back(make_linear(module, component, parallelism, {weight->shape[0]}, weight->shape[1], format,
                                           bias != nullptr));
      continue;
    }
    // Norms, scalars, tables and anything else: whole on every GPU that holds the layer.
    for (const auto* tensor : tensors) {
      const auto [name, suffix] = split_suffix(tensor->name);
      const ReplicatedTensor r{suffix == "weight" ? name : tensor->name, component_of(module, leaf), elements_of(*tensor),
                               dtype};
      if (tensor->shape.size() >= 2) {
        replicated_linears.push_back(tensor->name);
        replicated_bytes += Bytes(r.elements * element_bytes(dtype));
      }
      if (layer >= 0) {
        layer_at(layer).replicated.push_back(r);
      } else {
        model.final_norms.push_back(r);
      }
    }
  }
  if (!embedding_found) {
    throw InputError(fmt::format("{}: unsupported architecture {}: the checkpoint has no input embedding the generic "
                                 "path recognizes (embed_tokens, wte, word_embeddings, tok_embeddings)",
                                 where, model.architecture));
  }
  if (!model.tie_word_embeddings && !head_found) {
    throw InputError(fmt::format("{}: tie_word_embeddings is false but the checkpoint has no lm_head.weight", where));
  }
  if (model.tie_word_embeddings && head_found) {
    model.checkpoint_stores_tied_head = true;
  }

  for (auto& [block, e] : expert_blocks) {
    LayerSpec& target = layer_at(expert_layer[block]);
    const std::int64_t experts = e.fused_experts > 0 ? e.fused_experts : static_cast<std::int64_t>(e.indices.size());
    const bool gated = e.gate_elements > 0;
    // One expert's down projection is [H, I] (nn.Linear) or [I, H] (fused transformers parameters).
    const std::int64_t intermediate = e.down_rows == h.hidden_size ? e.down_cols : e.down_rows;
    // In long double: hostile shapes must not overflow the products (the headers bound each tensor, not
    // the product of dimensions taken from different tensors).
    const long double expected_down = static_cast<long double>(experts) * static_cast<long double>(intermediate) *
                                      static_cast<long double>(h.hidden_size);
    const long double expected_gate_up = expected_down * (gated ? 2 : 1);
    if (experts <= 0 || intermediate <= 0 || static_cast<long double>(e.down_elements) != expected_down ||
        static_cast<long double>(e.gate_elements) + static_cast<long double>(e.up_elements) != expected_gate_up ||
        (e.fused_experts == 0 && e.indices.size() > 0 && *e.indices.rbegin() + 1 != experts)) {
      throw InputError(fmt::format("{}: the experts under {} do not form {} experts of a gated MLP of hidden size {} "
                                   "(gate/up {} and down {} elements); the generic path will not guess their layout",
                                   where, block, experts, h.hidden_size, e.gate_elements + e.up_elements,
                                   e.down_elements));
    }
    ExpertsModule m;
    m.name = block;
    m.num_experts = experts;
    m.intermediate_size = intermediate;
    m.hidden_size = h.hidden_size;
    m.gated = gated;
    m.format = format;
    target.experts.push_back(m);
    target.is_moe = true;
    for (const auto* tensor : e.other) {
      target.replicated.push_back({tensor->name, Component::kRoutedExperts, elements_of(*tensor), dtype});
    }
    if (!e.other.empty()) {
      assumed.push_back(fmt::format("{} tensors beside the expert weights of {} (biases, scales) counted whole on "
                                    "every GPU",
                                    e.other.size(), block));
    }
  }
  if (!replicated_linears.empty()) {
    assumed.push_back(fmt::format("{} tensors ({:.3f} GiB) match no tensor-parallel rule and are counted whole on every "
                                  "GPU: {}",
                                  replicated_linears.size(), to_gib(replicated_bytes), summarize(replicated_linears)));
  }

  // The KV cache: one Attention per decoder layer (create_attention_instances), sliding where
  // layer_types says "sliding_attention"; without layer_types a sliding_window applies to every
  // layer (cache_config.sliding_window, as for every non-interleaved model).
  const auto window = t.optional_integer("sliding_window", 1, std::int64_t{1} << 32);
  const auto types = t.string_list("layer_types");
  if (!types.empty() && static_cast<std::int64_t>(types.size()) != L) {
    t.fail("layer_types", fmt::format("{} entries (num_hidden_layers)", L));
  }
  std::vector<std::int64_t> without_attention;
  std::int64_t sliding_count = 0;
  for (std::int64_t i = 0; i < L; ++i) {
    const bool sliding = types.empty() ? window.has_value() : types[static_cast<std::size_t>(i)] == "sliding_attention";
    if (sliding && !window) t.fail("sliding_window", "a window size for the sliding-attention layers");
    sliding_count += sliding ? 1 : 0;
    model.layers[static_cast<std::size_t>(i)].attention = standard_attention(
        sliding ? AttentionKind::kSlidingWindow : AttentionKind::kFull, h.num_attention_heads, h.num_key_value_heads,
        h.head_dim, sliding ? *window : 0);
    if (!has_attention[static_cast<std::size_t>(i)]) without_attention.push_back(i);
  }
  assumed.push_back(fmt::format("KV cache: every one of the {} layers holds {} KV heads of {} (num_key_value_heads, "
                                "head_dim){}",
                                L, h.num_key_value_heads, h.head_dim,
                                sliding_count > 0 ? fmt::format(", {} of them a sliding window of {}", sliding_count,
                                                                *window)
                                                  : ""));
  if (!without_attention.empty()) {
    std::vector<std::string> listed;
    for (const auto i : without_attention) listed.push_back(std::to_string(i));
    assumed.push_back(fmt::format("layers {} have no q/k/v projections in the checkpoint, yet vLLM's Transformers "
                                  "backend gives every layer an attention cache; counted as such",
                                  summarize(listed, 8)));
  }
  if (header_layers > L) {
    assumed.push_back(fmt::format("layers {}..{} of the checkpoint are its next-token-prediction layers, which vLLM "
                                  "does not load without speculative decoding",
                                  L, header_layers - 1));
    model.mtp_layers = std::move(mtp_layers);
    model.skipped_mtp_layers = header_layers - L;
  }
  if (std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) { return l.is_moe; })) {
    model.num_experts_per_token = t.optional_integer("num_experts_per_tok", 1, kMaxExperts)
                                      .value_or(t.optional_integer("top_k", 1, kMaxExperts).value_or(1));
  }
  // No rotary cache buffer: the transformers model computes its rotary embedding itself.
}

}  // namespace gpubudget::detail
