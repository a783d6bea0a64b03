// The drafters of speculative decoding (drafters.h). Sources are vLLM's (upstream 9aaf83ef5):
// model_executor/models/{deepseek_mtp,llama_eagle,llama_eagle3,medusa}.py, v1/spec_decode/{llm_base_proposer,
// draft_model,medusa}.py and config/speculative.py.
#include "engine/drafters.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"

namespace gpubudget::detail {

namespace {

bool is_vocabulary_table(const ReplicatedTensor& t) {
  return t.component == Component::kEmbedding || t.component == Component::kLmHead;
}

// One rank's share of a vocabulary table of `rows` x `hidden` (VocabParallelEmbedding / ParallelLMHead:
// rows padded to 64, then split over TP), for the assumptions' figures.
Bytes vocabulary_table_share(std::int64_t rows, std::int64_t hidden, Dtype dtype, std::int64_t tp) {
  return Bytes(round_up(rows, 64) / tp * hidden * element_bytes(dtype));
}

// The draft's rotary caches that the target does not already hold: get_rope shares one instance per
// setting across the process, so a cache of the target's size and dtype is taken to be the target's.
// `never_shared`: every cache is the draft's own (its setting is known to differ).
void add_own_rotary_caches(const ModelSpec& target, const ModelSpec& draft, const std::string& prefix, Drafter& d,
                           bool never_shared = false) {
  for (const auto& b : draft.buffers) {
    const bool shared =
        !never_shared && std::any_of(target.buffers.begin(), target.buffers.end(), [&](const ReplicatedTensor& t) {
          return t.name == b.name && t.elements == b.elements && t.dtype == b.dtype;
        });
    if (shared) continue;
    ReplicatedTensor own = b;
    own.name = prefix + b.name;
    d.tensors.push_back(std::move(own));
  }
}

// The draft's decoder layers, numbered after the target's `target_layers` and renamed from
// "model.layers.{i}." to `prefix` + "{target_layers + i}." (vLLM: start_layer_id = the target's layer count).
std::vector<LayerSpec> renumbered_layers(const ModelSpec& draft, std::int64_t target_layers, const std::string& from,
                                         const std::string& to, bool keep_index_in_name) {
  std::vector<LayerSpec> out;
  for (LayerSpec layer : draft.layers) {
    const std::int64_t i = layer.index;
    layer.index = target_layers + i;
    rename_layer_modules(layer, fmt::format("{}{}.", from, i),
                         fmt::format("{}{}.", to, keep_index_in_name ? i : target_layers + i));
    out.push_back(std::move(layer));
  }
  return out;
}

// A ReplicatedLinear without bias (the EAGLE heads' fc).
LinearModule replicated_linear(std::string name, std::int64_t outputs, std::int64_t inputs, const QuantFormat& format) {
  LinearModule m;
  m.name = std::move(name);
  m.parallelism = Parallelism::kReplicated;
  m.output_sizes = {outputs};
  m.input_size = inputs;
  m.format = format;
  return m;
}

void check_draft_tensor_parallel(const Deployment& d, bool must_equal, Drafter& drafter) {
  if (!d.speculative.draft_tensor_parallel_size) return;
  const std::int64_t draft_tp = *d.speculative.draft_tensor_parallel_size, tp = d.tensor_parallel_size;
  if (draft_tp == tp) return;
  if (must_equal) {
    // DraftModelProposer._raise_if_draft_tp_mismatch
    throw InputError(fmt::format("--speculative-config draft_tensor_parallel_size {}: vLLM requires the draft model "
                                 "to run at the target's --tensor-parallel-size {} (\"'draft_tensor_parallel_size' and "
                                 "'tensor_parallel_size' must be the same\")",
                                 draft_tp, tp));
  }
  if (draft_tp != 1) {
    // SpeculativeConfig._verify_and_get_draft_tp
    throw InputError(fmt::format("--speculative-config draft_tensor_parallel_size {}: vLLM accepts 1 or the target's "
                                 "--tensor-parallel-size {} (\"cannot be other value than 1 or target model "
                                 "tensor_parallel_size\")",
                                 draft_tp, tp));
  }
  drafter.assumptions.push_back(fmt::format(
      "draft_tensor_parallel_size 1 is accepted by vLLM, but the draft's layers take the global TP group "
      "(linear.py, vocab_parallel_embedding.py), so the draft is counted split over TP {} like the target",
      tp));
}

}  // namespace

Drafter mtp_drafter(ModelSpec& m, std::int64_t pipeline_stages, bool shares_head) {
  if (m.mtp_layers.empty() && m.mtp_linears.empty()) {
    throw InputError(fmt::format("--speculative-config method mtp: {} has no MTP / next-n layers in its config "
                                 "(num_nextn_predict_layers or the family's own key)",
                                 m.source));
  }
  // EagleProposer.load_model (_maybe_share_embeddings, _maybe_share_lm_head) replaces the MTP model's
  // head (every shared_head.head) with the target's and, with a single pipeline stage, its embedding
  // too; with several stages the draft keeps one embedding of its own, split over TP like the target's.
  Drafter d;
  d.method = "mtp";
  d.source = m.source;
  d.in_target_checkpoint = true;
  d.hidden_size = m.hidden_size;
  d.layers = std::move(m.mtp_layers);
  d.linears = std::move(m.mtp_linears);
  bool own_embedding = pipeline_stages > 1;
  for (auto& t : m.mtp_tensors) {
    if (own_embedding && t.component == Component::kEmbedding) {
      d.vocab_tables.push_back(std::move(t));
      own_embedding = false;
    } else if (!shares_head && t.component == Component::kLmHead) {
      d.vocab_tables.push_back(std::move(t));
    } else {
      (is_vocabulary_table(t) ? d.shared_with_target : d.tensors).push_back(std::move(t));
    }
  }
  m.mtp_layers.clear();
  m.mtp_linears.clear();
  m.mtp_tensors.clear();
  m.skipped_mtp_layers = 0;
  return d;
}

namespace {

// The head's config as vLLM can run it, or InputError: a Llama head for either method
// (llama_eagle.py, llama_eagle3.py), a DeepSeek head for EAGLE-3 only (deepseek_eagle3.py; EAGLEConfig
// names it Eagle3{architecture}, and no EagleDeepseek* head is registered for EAGLE-1).
void check_eagle_head(const ModelSpec& target, const ModelSpec& head, const Deployment& dep, const std::string& flag) {
  const bool eagle3 = dep.speculative.method == SpeculativeMethod::kEagle3;
  if (has_mla_attention(head)) {  // deepseek_eagle3.py: the MLA head (EAGLE-3 only)
    const auto refuse = [&](std::string_view why) {
      throw InputError(fmt::format("{}: {} ({}): {}", flag, head.source, head.architecture, why));
    };
    if (!eagle3) {
      refuse("vLLM's DeepSeek EAGLE head is EAGLE-3's (deepseek_eagle3.py Eagle3DeepseekV2ForCausalLM); give method "
             "eagle3");
    }
    if (!head.eagle_head) {
      refuse("a whole DeepSeek model, not an EAGLE-3 head (no Eagle3Deepseek architecture and none of EAGLE's keys "
             "draft_vocab_size, target_hidden_size, eagle_config)");
    }
    if (head.sparse_attention) refuse("an EAGLE-3 head with DeepSeek sparse attention (an indexer) is not modelled");
    if (dep.mla_disabled) refuse("an MLA EAGLE-3 head with VLLM_MLA_DISABLE=1 is not modelled");
    if (!has_mla_attention(target)) refuse("an MLA head beside a target without MLA layers is not modelled");
  } else if (head.model_type != "llama") {
    throw InputError(fmt::format("{}: {} is a {} model (model_type \"{}\"); the EAGLE heads modelled are vLLM's Llama "
                                 "ones (llama_eagle.py, llama_eagle3.py: model_type llama) and the DeepSeek EAGLE-3 "
                                 "head (deepseek_eagle3.py)",
                                 flag, head.source, head.architecture, head.model_type));
  }
  if (!head.quantization.method.empty()) {
    throw InputError(fmt::format("{}: {} is a {} checkpoint; quantized EAGLE heads are not modelled", flag,
                                 head.source, head.quantization.method));
  }
  if (head.layers.empty()) throw InputError(fmt::format("{}: {} has no decoder layers", flag, head.source));
}

}  // namespace

Drafter eagle_drafter(const ModelSpec& target, const ModelSpec& checkpoint_head, const Deployment& dep) {
  const bool eagle3 = dep.speculative.method == SpeculativeMethod::kEagle3;
  const std::string flag = fmt::format("--speculative-config method {}", eagle3 ? "eagle3" : "eagle");
  check_eagle_head(target, checkpoint_head, dep, flag);
  const bool mla_head = has_mla_attention(checkpoint_head);
  // The draft ModelConfig takes the target's dtype (SpeculativeConfig: dtype=target_model_config.dtype).
  const ModelSpec head = with_dtype(checkpoint_head, target.dtype);
  const EagleHeadConfig config = head.eagle_head.value_or(EagleHeadConfig{});
  const std::int64_t H = head.hidden_size, tp = dep.tensor_parallel_size;
  const auto target_layers = static_cast<std::int64_t>(target.layers.size());
  const Dtype dt = head.dtype;
  QuantFormat plain;
  plain.kind = QuantKind::kUnquantized;
  plain.dtype = dt;

  Drafter d;
  d.method = eagle3 ? "eagle3" : "eagle";
  d.source = head.source;
  d.hidden_size = H;
  check_draft_tensor_parallel(dep, false, d);
  d.layers = renumbered_layers(head, target_layers, "model.layers.", "model.layers.", false);
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    LayerSpec& layer = d.layers[i];
    const std::string p = fmt::format("model.layers.{}.", layer.index);
    if (eagle3) {
      // Layer 0 reads [embeds, hidden] (2H): LlamaDecoderLayer's qkv_proj (llama_eagle3.py),
      // DeepseekV2MLAAttention's input_size for its first projections (deepseek_eagle3.py); every layer
      // has a hidden_norm [H].
      if (i == 0) {
        for (auto& l : layer.linears) {
          const bool reads_hidden =
              mla_head ? (l.name == p + "self_attn.fused_qkv_a_proj" || l.name == p + "self_attn.q_proj" ||
                          l.name == p + "self_attn.kv_a_proj_with_mqa")
                       : l.name == p + "self_attn.qkv_proj";
          if (reads_hidden) l.input_size = 2 * H;
        }
      }
      layer.replicated.push_back({p + "hidden_norm", Component::kNorms, H, dt});
    } else if (i == 0) {
      // llama_eagle.py: layer 0's input_layernorm is an Identity.
      std::erase_if(layer.replicated, [&](const ReplicatedTensor& t) { return t.name == p + "input_layernorm"; });
    }
  }
  if (eagle3) {
    // fc = ReplicatedLinear(3 x target hidden -> H): LlamaModel (llama_eagle3.py) builds it when the head
    // uses the target's auxiliary hidden states, with an input_norm over fc's input under norm_before_fc;
    // DeepseekV2Eagle3Model always, without one. Then the final norm; Eagle3*ForCausalLM: lm_head
    // [draft_vocab_size, H], draft_id_to_target_id int64.
    const std::int64_t fc_input = 3 * (config.target_hidden_size > 0 ? config.target_hidden_size : H);
    if (mla_head || config.use_aux_hidden_state) {
      d.linears.push_back(replicated_linear("model.fc", H, fc_input, plain));
      if (!mla_head && config.norm_before_fc) {
        d.tensors.push_back({"model.input_norm", Component::kNorms, fc_input, dt});
      }
    }
    d.tensors.push_back({"model.norm", Component::kNorms, H, dt});
    const std::int64_t draft_vocab = config.draft_vocab_size > 0 ? config.draft_vocab_size : head.vocab_size;
    d.tensors.push_back({"draft_id_to_target_id", Component::kNorms, draft_vocab, Dtype::kInt64});
    // _maybe_share_lm_head: the target's head replaces one the checkpoint lacks, or an identical copy.
    if (config.stores_lm_head.value_or(true)) {
      d.vocab_tables.push_back({"lm_head", Component::kLmHead, draft_vocab * H, dt});
      if (draft_vocab == target.vocab_size && head.hidden_size == target.hidden_size) {
        d.assumptions.push_back(fmt::format(
            "the EAGLE-3 head's own lm_head is counted ({} B per GPU); if the checkpoint's copy is identical to the "
            "target's, vLLM shares the target's instead",
            vocabulary_table_share(draft_vocab, H, dt, tp).count()));
      }
    }
  } else {
    // LlamaModel (llama_eagle.py): fc = ReplicatedLinear(2H -> H), no final norm, no lm_head (the
    // target's is always used).
    d.linears.push_back(replicated_linear("model.fc", H, 2 * H, plain));
  }
  // _maybe_share_embeddings: with one pipeline stage the target's embedding replaces the head's when the
  // checkpoint has none, or an identical copy; with several the head's own stays allocated.
  const ReplicatedTensor embedding{"model.embed_tokens", Component::kEmbedding, head.vocab_size * H, dt};
  const Bytes embedding_share = vocabulary_table_share(head.vocab_size, H, dt, tp);
  if (dep.pipeline_parallel_size > 1) {
    d.vocab_tables.push_back(embedding);
  } else if (config.stores_embedding.value_or(false)) {
    d.vocab_tables.push_back(embedding);
    d.assumptions.push_back(fmt::format(
        "the draft checkpoint stores embed_tokens, counted as the head's own ({} B per GPU); if they are identical "
        "to the target's, vLLM shares the target's instead",
        embedding_share.count()));
  } else if (!config.stores_embedding) {
    d.assumptions.push_back(fmt::format(
        "the draft checkpoint's tensors were not read (a config only): it is taken to hold no embed_tokens, so the "
        "target's embedding is shared; if it holds embeddings that differ from the target's, vLLM keeps them "
        "(+{} B per GPU)",
        embedding_share.count()));
  }
  // The MLA head's YaRN cache has the target's size whatever its max_position_embeddings, but get_rope's
  // key holds max_position too: the published heads' configs omit it (DeepseekV3Config's default 4096,
  // not the target's), so the head's cache is counted as its own, with the bytes at stake said.
  add_own_rotary_caches(target, head, "draft.", d, mla_head);
  if (mla_head) {
    Bytes own;
    for (const auto& b : head.buffers) own += Bytes(b.elements * element_bytes(b.dtype));
    d.assumptions.push_back(fmt::format(
        "the MLA head's rotary cache is counted as its own ({} B per GPU): get_rope shares the target's only when "
        "the head's max_position_embeddings and RoPE setting equal the target's",
        own.count()));
  }
  for (const auto& key : head.unmodelled_config_keys) {
    d.assumptions.push_back(fmt::format("draft config key `{}` is not modelled", key));
  }
  return d;
}

Drafter medusa_drafter(const ModelSpec& target, const ModelSpec& checkpoint_heads, const Deployment& dep) {
  const std::string flag = "--speculative-config method medusa";
  const std::string& source = checkpoint_heads.source;
  if (!checkpoint_heads.medusa) {
    // vLLM's ModelConfig reads the draft as a MedusaConfig only by its model_type.
    throw InputError(fmt::format("{}: {} is not a Medusa draft (model_type \"{}\", expected \"medusa\")", flag, source,
                                 checkpoint_heads.model_type));
  }
  if (checkpoint_heads.hidden_size != target.hidden_size) {
    throw InputError(fmt::format("{}: {} has hidden_size {}, the target {}: Medusa's blocks read the target's hidden "
                                 "states, so vLLM cannot run these heads on this target",
                                 flag, source, checkpoint_heads.hidden_size, target.hidden_size));
  }
  if (!checkpoint_heads.quantization.method.empty()) {
    throw InputError(fmt::format("{}: {} is a {} checkpoint; quantized Medusa heads are not modelled", flag, source,
                                 checkpoint_heads.quantization.method));
  }
  const MedusaHeads& config = *checkpoint_heads.medusa;
  // The draft ModelConfig takes the target's dtype; nn.Linear and ParallelLMHead are built in it.
  const Dtype dt = target.dtype;
  const std::int64_t H = target.hidden_size;
  QuantFormat plain;
  plain.kind = QuantKind::kUnquantized;
  plain.dtype = dt;
  Drafter d;
  d.method = "medusa";
  d.source = source;
  d.hidden_size = H;
  check_draft_tensor_parallel(dep, false, d);
  // MedusaConfig.num_lookahead_tokens: num_speculative_tokens replaces the checkpoint's num_heads.
  const std::int64_t heads = dep.speculative.num_speculative_tokens;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t l = 0; l < config.layers_per_head; ++l) {
      // ResidualBlock: nn.Linear(H, H), a plain module, whole on every rank.
      LinearModule block = replicated_linear(fmt::format("blocks.{}.layers.{}", h, l), H, H, plain);
      block.has_bias = config.fc_bias;
      d.linears.push_back(std::move(block));
    }
    if (!config.original_lm_head) {
      d.vocab_tables.push_back({fmt::format("lm_heads.{}", h), Component::kLmHead, checkpoint_heads.vocab_size * H, dt});
    }
  }
  if (config.original_lm_head) {
    d.vocab_tables.push_back({"lm_head", Component::kLmHead, config.truncated_vocab_size * H, dt});
  }
  if (heads != config.checkpoint_heads) {
    d.assumptions.push_back(fmt::format("vLLM builds {} Medusa heads (num_speculative_tokens), the checkpoint has {}",
                                        heads, config.checkpoint_heads));
  }
  for (const auto& key : checkpoint_heads.unmodelled_config_keys) {
    d.assumptions.push_back(fmt::format("draft config key `{}` is not modelled", key));
  }
  return d;
}

Drafter separate_draft_model(const ModelSpec& target, const ModelSpec& checkpoint_draft, const Deployment& dep) {
  const std::string flag = "--speculative-config method draft_model";
  const std::string& source = checkpoint_draft.source;
  if (checkpoint_draft.medusa) {
    throw InputError(fmt::format("{}: {}: Medusa heads as a draft_model are not modelled (give method medusa)", flag,
                                 source));
  }
  if (checkpoint_draft.vocab_size != target.vocab_size) {
    // SpeculativeConfig.verify_equal_vocab_size_if_draft_model
    throw InputError(fmt::format("{}: {} has vocab_size {}, the target {}; vLLM refuses (\"Target and draft model "
                                 "should have the same vocabulary size\")",
                                 flag, source, checkpoint_draft.vocab_size, target.vocab_size));
  }
  const auto refuse = [&](std::string_view what) {
    throw InputError(fmt::format("{}: {}: {} is not modelled", flag, source, what));
  };
  if (checkpoint_draft.eagle_head) refuse("an EAGLE head as a draft_model (give method eagle or eagle3)");
  if (!checkpoint_draft.generic_assumptions.empty()) refuse("a draft model sized from its safetensors headers");
  if (checkpoint_draft.vision) refuse("a multimodal draft model");
  if (!checkpoint_draft.batched_token_buffers.empty() || !checkpoint_draft.profile_workspace.empty()) {
    refuse("a draft model with sparse-attention buffers");
  }
  if (checkpoint_draft.lm_head_format.kind != QuantKind::kUnquantized || checkpoint_draft.lm_head_bias) {
    refuse("a draft model whose lm_head is quantized or biased");
  }
  if (dep.pipeline_parallel_size > 1) refuse("a draft model with --pipeline-parallel-size > 1");
  // The draft ModelConfig takes the target's dtype; its quantization is its own checkpoint's
  // (DraftModelProposer: quant_config=None, recomputed from the draft ModelConfig).
  const ModelSpec draft = with_dtype(checkpoint_draft, target.dtype);
  Drafter d;
  d.method = "draft_model";
  d.source = source;
  d.hidden_size = draft.hidden_size;
  check_draft_tensor_parallel(dep, true, d);
  // get_model(prefix="draft_model"): its layers are draft_model.model.layers.{i}; no embedding or head
  // is shared with the target (DraftModelProposer overrides both _maybe_share_* with no-ops).
  d.layers = renumbered_layers(draft, static_cast<std::int64_t>(target.layers.size()), "model.layers.",
                               "draft_model.model.layers.", true);
  const std::int64_t table = draft.vocab_size * draft.hidden_size;
  d.vocab_tables.push_back({"draft_model." + draft.embedding_name, Component::kEmbedding, table, draft.dtype});
  if (!draft.tie_word_embeddings) d.vocab_tables.push_back({"draft_model.lm_head", Component::kLmHead, table, draft.dtype});
  for (ReplicatedTensor t : draft.final_norms) {
    t.name = "draft_model." + t.name;
    d.tensors.push_back(std::move(t));
  }
  add_own_rotary_caches(target, draft, "draft_model.", d);
  for (const auto& key : draft.unmodelled_config_keys) {
    d.assumptions.push_back(fmt::format("draft config key `{}` is not modelled by the {} parser", key, draft.family));
  }
  return d;
}

}  // namespace gpubudget::detail
