// Mamba / linear-attention state dtypes, bytes and the hybrid block alignment (mamba_state.h).
#include "gpubudget/mamba_state.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpubudget/error.h"

namespace gpubudget {

namespace {

Dtype dtype_of(MambaDtypeChoice choice, Dtype model_dtype) {
  switch (choice) {
    case MambaDtypeChoice::kAuto: return model_dtype;
    case MambaDtypeChoice::kFloat32: return Dtype::kFloat32;
    case MambaDtypeChoice::kFloat16: return Dtype::kFloat16;
    case MambaDtypeChoice::kBFloat16: return Dtype::kBFloat16;
  }
  return model_dtype;
}

void check_accepted(MambaDtypeChoice choice, const HybridRules& rules, std::string_view flag) {
  const std::string name(mamba_dtype_choice_name(choice));
  if (std::find(rules.mamba_dtypes.begin(), rules.mamba_dtypes.end(), name) == rules.mamba_dtypes.end()) {
    throw InputError(fmt::format("{}: this vLLM does not accept \"{}\" (MambaDType: {})", flag, name,
                                 fmt::join(rules.mamba_dtypes, ", ")));
  }
}

}  // namespace

MambaStateDtypes resolve_mamba_state_dtypes(const ModelSpec& model, const MambaState& state, const Deployment& d,
                                            const HybridRules& rules) {
  check_accepted(d.mamba_cache_dtype, rules, "--mamba-cache-dtype");
  check_accepted(d.mamba_ssm_cache_dtype, rules, "--mamba-ssm-cache-dtype");
  MambaStateDtypes out;
  out.conv = dtype_of(d.mamba_cache_dtype, model.dtype);
  // models/config.py: for some architectures an `auto` --mamba-ssm-cache-dtype becomes the config's
  // own value (Nemotron-H mamba_ssm_cache_dtype, Qwen3.5 mamba_ssm_dtype) or a version default.
  std::optional<Dtype> ssm_choice;
  if (d.mamba_ssm_cache_dtype != MambaDtypeChoice::kAuto) {
    ssm_choice = dtype_of(d.mamba_ssm_cache_dtype, model.dtype);
    out.ssm_reason = "--mamba-ssm-cache-dtype";
  } else {
    for (const auto& rule : rules.ssm_dtype_defaults) {
      if (std::find(rule.architectures.begin(), rule.architectures.end(), model.architecture) ==
          rule.architectures.end()) {
        continue;
      }
      if (state.config_ssm_dtype) {
        ssm_choice = state.config_ssm_dtype;
        out.ssm_reason = "the config's SSM cache dtype";
      } else if (!rule.fallback.empty()) {
        ssm_choice = parse_torch_dtype(rule.fallback);
        out.ssm_reason = fmt::format("this vLLM's default for {} ({})", model.architecture, rule.fallback);
      }
      break;
    }
  }
  switch (state.mixer) {
    case MambaMixer::kMamba2:
      out.ssm = ssm_choice.value_or(out.conv);
      break;
    case MambaMixer::kGatedDeltaNet:
      // Before vLLM 0.17 (#34489) gated_delta_net_state_dtype used --mamba-cache-dtype for both states.
      out.ssm = rules.gated_delta_net_ssm_dtype_flag ? ssm_choice.value_or(out.conv) : out.conv;
      if (!rules.gated_delta_net_ssm_dtype_flag) out.ssm_reason.clear();
      break;
    case MambaMixer::kKda:
      out.ssm = Dtype::kFloat32;  // kda_state_dtype: the recurrent state is always float32
      out.ssm_reason = "KDA's recurrent state is always float32";
      break;
  }
  if (out.ssm_reason.empty()) out.ssm_reason = "the convolution state's dtype";
  return out;
}

Bytes mamba_state_bytes(const MambaState& st, std::int64_t tp, const MambaStateDtypes& dtypes) {
  // mamba2_state_shape: (intermediate + 2 x G' x d_state) / tp channels, G' = tp when tp does not
  // divide the (single) group.
  const std::int64_t grouped = 2 * st.groups * st.group_state;
  const std::int64_t conv_local = st.groups > 0 && st.groups % tp != 0 ? (st.conv_channels - grouped) / tp + grouped
                                                                         : st.conv_channels / tp;
  return Bytes(conv_local * st.conv_width * element_bytes(dtypes.conv) +
               st.ssm_heads / tp * st.ssm_head_elements * element_bytes(dtypes.ssm));
}

HybridAlignment align_hybrid_block_size(Bytes state, Bytes pt, const HybridAlignmentInputs& in,
                                        const HybridRules& rules) {
  HybridAlignment out;
  out.block_size = in.block_size;
  const bool kernel = rules.alignment == "kernel";
  if (kernel) {
    out.unit = std::max(in.min_kernel_block, in.block_size);
  } else if (in.mla) {
    out.unit = rules.alignment_unit_mla;
  } else {
    out.unit = in.blackwell_head_256 && rules.alignment_unit_blackwell_head_256 > 0 ? rules.alignment_unit_blackwell_head_256
                                                                                  : rules.alignment_unit;
  }
  std::int64_t aligned = 0;
  if (in.mode == MambaCacheMode::kAll) {
    // The state is cached every mamba_block_size tokens: a multiple of both the chunk size (or the
    // user's --mamba-block-size) and the unit.
    const std::int64_t base = in.user_mamba_block_size > 0 ? in.user_mamba_block_size : in.mamba_chunk_size;
    const std::int64_t c = std::lcm(std::max<std::int64_t>(1, base), out.unit);
    aligned = c * cdiv(cdiv(state, pt), c);
    out.mamba_block_size = aligned;
  } else {
    aligned = out.unit * cdiv(state, pt * out.unit);
  }
  const bool replace = kernel ? out.block_size < aligned : (!in.user_block_size || out.block_size < aligned);
  if (replace) out.block_size = aligned;
  if (in.mode == MambaCacheMode::kAlign) out.mamba_block_size = out.block_size;
  return out;
}

}  // namespace gpubudget
