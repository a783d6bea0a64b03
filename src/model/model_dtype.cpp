#include "gpubudget/model_spec.h"

#include <algorithm>

namespace gpubudget {

ModelSpec with_dtype(const ModelSpec& model, Dtype dtype) {
  ModelSpec out = model;
  const Dtype from = model.dtype;
  auto convert_format = [&](QuantFormat& f) {
    if (f.kind == QuantKind::kUnquantized && f.dtype == from) f.dtype = dtype;
  };
  auto convert_tensor = [&](ReplicatedTensor& t) {
    if (t.dtype == from) t.dtype = dtype;
  };
  auto convert_layer = [&](LayerSpec& layer) {
    for (auto& l : layer.linears) convert_format(l.format);
    for (auto& e : layer.experts) convert_format(e.format);
    for (auto& t : layer.replicated) convert_tensor(t);
  };
  for (auto& layer : out.layers) convert_layer(layer);
  // The next-n layers too: speculative decoding (method mtp) builds them with the target's dtype.
  for (auto& layer : out.mtp_layers) convert_layer(layer);
  for (auto& l : out.mtp_linears) convert_format(l.format);
  for (auto& t : out.mtp_tensors) convert_tensor(t);
  if (out.vision) {
    for (auto& l : out.vision->linears) convert_format(l.format);
    for (auto& t : out.vision->replicated) convert_tensor(t);
  }
  for (auto& t : out.final_norms) convert_tensor(t);
  for (auto& t : out.buffers) convert_tensor(t);
  for (auto& t : out.batched_token_buffers) convert_tensor(t);
  convert_format(out.lm_head_format);
  out.dtype = dtype;
  return out;
}

Bytes WorkspaceReservation::bytes(std::int64_t max_model_len, std::int64_t max_num_batched_tokens) const {
  return Bytes(detail::checked_mul(per_length_entry, cdiv(max_model_len, length_divisor)) +
               detail::checked_mul(per_batched_token, max_num_batched_tokens)) +
         fixed;
}

void rename_layer_modules(LayerSpec& layer, std::string_view from, std::string_view to) {
  const auto rename = [&](std::string& name) {
    if (name.starts_with(from)) name = std::string(to) + name.substr(from.size());
  };
  for (auto& l : layer.linears) rename(l.name);
  for (auto& e : layer.experts) rename(e.name);
  for (auto& r : layer.replicated) rename(r.name);
}

bool has_mla_attention(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [](const LayerSpec& l) { return l.attention.kind == AttentionKind::kMla; });
}

std::string attention_mix(const ModelSpec& model) {
  bool mla = false, sliding = false, chunked = false, extra = false, recurrent = false;
  std::int64_t kv = 0, heads = 0;
  for (const auto& layer : model.layers) {
    const auto& a = layer.attention;
    mla = mla || a.kind == AttentionKind::kMla;
    sliding = sliding || a.kind == AttentionKind::kSlidingWindow;
    chunked = chunked || a.kind == AttentionKind::kChunkedLocal;
    extra = extra || !layer.extra_kv.empty();
    // DeepSeek-V4: a sliding-window cache in every layer, the compressed MLA caches beside it.
    for (const auto& e : layer.extra_kv) mla = mla || e.kind == AttentionKind::kMla;
    recurrent = recurrent || recurrent_state(layer) != nullptr;
    if (a.kind == AttentionKind::kFull || a.kind == AttentionKind::kSlidingWindow ||
        a.kind == AttentionKind::kChunkedLocal) {
      kv = a.num_key_value_heads;
      heads = a.num_attention_heads;
    }
  }
  std::string mix = mla ? "mla" : kv == 1 ? "mqa" : kv == heads ? "mha" : "gqa";
  if (sliding) mix += "+sliding";
  if (chunked) mix += "+chunked";
  if (extra) mix += "+indexer";
  if (recurrent) mix = "hybrid-" + mix + "+linear";
  return mix;
}

}  // namespace gpubudget
