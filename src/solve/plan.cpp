// plan_deployments (plan.h): an ordered search over node-shaped layouts, one fit() each.
#include "gpubudget/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/limits.h"

namespace gpubudget {
namespace {

// Why a layout does not serve the request; the search widens a layout by DCP only for kKvCache.
enum class Shortfall { kNone, kRefused, kNotStarting, kWeights, kKvCache };

struct Attempt {
  Shortfall shortfall = Shortfall::kRefused;
  std::string why_not;
  FitResult result;
  Deployment used;
};

Attempt evaluate(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment, const VllmProfile& profile,
                 const PlanRequest& request, FitMemo* memo) {
  Attempt a;
  a.used = deployment;
  a.used.max_model_len = request.max_model_len;
  try {
    const std::vector<GpuSpec> stages = {gpu};
    a.result = fit(model, stages, a.used, profile, memo);
    // vLLM admits at most max_num_seqs requests at once: raise it when the target needs more.
    if (a.result.scheduler.max_num_seqs < request.concurrency) {
      a.used.max_num_seqs = request.concurrency;
      a.result = fit(model, stages, a.used, profile, memo);
    }
  } catch (const InputError& e) {
    a.why_not = std::string("vLLM refuses the layout: ") + e.what();
    return a;
  }
  const FitResult& r = a.result;
  const WorkerBudget& w = r.binding_worker();
  if (!r.vllm_would_start) {
    a.shortfall = Shortfall::kNotStarting;
    a.why_not = "vLLM would not start: " + r.start_blocker;
  } else if (w.weights.total > w.requested) {
    a.shortfall = Shortfall::kWeights;
    a.why_not = fmt::format("the weights need {:.2f} GiB per GPU, vLLM may use {:.2f} GiB", to_gib(w.weights.total),
                            to_gib(w.requested));
  } else if (!r.fits) {
    a.shortfall = Shortfall::kKvCache;
    a.why_not = fmt::format("the largest length is {}", r.max_model_len);
  } else if (r.max_concurrency < static_cast<double>(request.concurrency)) {
    a.shortfall = Shortfall::kKvCache;
    a.why_not = fmt::format("holds {:.2f} requests of {} tokens ({} needed)", r.max_concurrency,
                            request.max_model_len, request.concurrency);
  } else {
    a.shortfall = Shortfall::kNone;
  }
  return a;
}

// How many ranks of a TP group hold the same KV (vLLM's KV duplication, docs/serving/
// context_parallel_deployment.md): MLA's single latent head is on every rank (tp copies); full
// attention's H KV heads are replicated tp / H times once TP exceeds them. DCP of up to this many
// ranks splits the duplicated KV by tokens instead. `mla` tells which of the two it is.
std::int64_t kv_copies(const ModelSpec& model, std::int64_t tp, bool* mla) {
  std::int64_t kv_heads = 0;
  *mla = false;
  for (const auto& layer : model.layers) {
    if (layer.attention.kind == AttentionKind::kMla) *mla = true;
    if (layer.attention.kind == AttentionKind::kFull) {
      kv_heads = std::max(kv_heads, layer.attention.num_key_value_heads);
    }
  }
  if (*mla) return tp;
  return kv_heads > 0 && tp > kv_heads && tp % kv_heads == 0 ? tp / kv_heads : 1;
}

bool has_experts(const ModelSpec& model) {
  return std::any_of(model.layers.begin(), model.layers.end(), [](const LayerSpec& l) { return !l.experts.empty(); });
}

struct Layout {
  std::int64_t tp = 1, pp = 1, dcp = 1;
  bool expert_parallel = false;
};

// "TP 8 alone", "TP 8 x PP 2 + EP", "TP 8 + DCP 8".
std::string layout_name(const Layout& l) {
  std::string name = fmt::format("TP {}", l.tp);
  if (l.pp > 1) name += fmt::format(" x PP {}", l.pp);
  if (l.dcp > 1) name += fmt::format(" + DCP {}", l.dcp);
  if (l.expert_parallel) name += " + EP";
  if (l.pp == 1 && l.dcp == 1 && !l.expert_parallel) name += " alone";
  return name;
}

void check_request(const PlanRequest& request) {
  if (request.concurrency < 1 || request.concurrency > kMaxPlanConcurrency) {
    throw InputError(fmt::format("--concurrency {}: expected a value from 1 to {}", request.concurrency,
                                 kMaxPlanConcurrency));
  }
  if (request.max_pipeline < 1 || request.max_pipeline > kMaxPlanPipeline) {
    throw InputError(fmt::format("--max-pipeline-parallel-size {}: expected a value from 1 to {}", request.max_pipeline,
                                 kMaxPlanPipeline));
  }
  if (request.max_model_len < 1 || request.max_model_len > kMaxModelLen) {
    throw InputError(fmt::format("--max-model-len {}: expected a value from 1 to {}", request.max_model_len, kMaxModelLen));
  }
  if (request.tensor_parallel.empty() || request.tensor_parallel.size() > 64) {
    throw InputError("plan: between 1 and 64 tensor-parallel sizes to try");
  }
  if (request.gpus_per_node < 1 || request.gpus_per_node > kMaxTensorParallelSize) {
    throw InputError(fmt::format("--gpus-per-node {}: expected a value from 1 to {}", request.gpus_per_node,
                                 kMaxTensorParallelSize));
  }
  for (const auto tp : request.tensor_parallel) {
    if (tp < 1 || tp > kMaxTensorParallelSize) {
      throw InputError(fmt::format("plan: tensor-parallel size {}: expected a value from 1 to {}", tp,
                                   kMaxTensorParallelSize));
    }
  }
}

// TP within a node; PP stages of whole nodes; cheapest (fewest GPUs, then fewest stages) first.
std::vector<Layout> node_shaped_layouts(const ModelSpec& model, const PlanRequest& request) {
  std::vector<Layout> layouts;
  // Stages beyond the decoder layers are layouts vLLM refuses: not tried.
  const std::int64_t deepest = std::min<std::int64_t>(request.max_pipeline, static_cast<std::int64_t>(model.layers.size()));
  for (const auto tp : request.tensor_parallel) {
    if (tp > request.gpus_per_node) continue;
    layouts.push_back({tp, 1});
    if (tp == request.gpus_per_node) {
      for (std::int64_t pp = 2; pp <= deepest; ++pp) layouts.push_back({tp, pp});
    }
  }
  if (layouts.empty()) {
    throw InputError(fmt::format("plan: no tensor-parallel size fits a node of {} GPUs", request.gpus_per_node));
  }
  std::stable_sort(layouts.begin(), layouts.end(), [](const Layout& a, const Layout& b) {
    return a.tp * a.pp != b.tp * b.pp ? a.tp * a.pp < b.tp * b.pp : a.pp < b.pp;
  });
  return layouts;
}

// The first variant of one TP x PP layout that serves, in the order vLLM's docs recommend: the plain
// layout; then, when only the KV cache is short and the TP group holds KV copies, the smallest DCP that
// serves; then the same with expert parallelism (MoE models). Every variant that does not serve is
// appended to `rejected`.
bool serve_with_variants(const ModelSpec& model, const GpuSpec& gpu, const Deployment& base, const VllmProfile& profile,
                         const PlanRequest& request, Layout layout, FitMemo& memo, PlanAnswer& answer) {
  bool mla = false;
  const std::int64_t copies = kv_copies(model, layout.tp, &mla);
  const bool moe = has_experts(model) && layout.tp * base.data_parallel_size > 1;
  std::vector<bool> expert_parallel = {base.enable_expert_parallel};  // as asked, else plain first
  if (moe && !base.enable_expert_parallel) expert_parallel.push_back(true);
  for (const bool ep : expert_parallel) {
    layout.expert_parallel = ep;
    for (std::int64_t dcp = 1; dcp <= copies; ++dcp) {
      if (copies % dcp != 0 || layout.tp % dcp != 0) continue;
      layout.dcp = dcp;
      Deployment d = base;
      d.tensor_parallel_size = layout.tp;
      d.pipeline_parallel_size = layout.pp;
      d.decode_context_parallel_size = dcp;
      d.enable_expert_parallel = ep;
      d.pp_layer_partition.clear();
      Attempt a = evaluate(model, gpu, d, profile, request, &memo);
      if (a.shortfall == Shortfall::kNone) {
        answer.found = true;
        answer.deployment = a.used;
        answer.gpus = layout.tp * layout.pp;
        answer.concurrency = a.result.max_concurrency;
        answer.max_model_len = a.result.max_model_len;
        answer.weights_per_gpu = a.result.binding_worker().weights.total;
        answer.kv_cache_per_gpu = a.result.binding_worker().kv_cache;
        return true;
      }
      if (dcp == 1 && a.shortfall == Shortfall::kKvCache && copies > 1) {
        a.why_not += mla ? fmt::format("; MLA's latent KV is replicated on all {} ranks", layout.tp)
                         : fmt::format("; the KV heads are replicated {} times over TP {}", copies, layout.tp);
      }
      answer.rejected_layouts.push_back(fmt::format("{}: {}", layout_name(layout), a.why_not));
      if (a.shortfall != Shortfall::kKvCache) break;  // more DCP does not help
    }
  }
  return false;
}

}  // namespace

bool serves(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment, const VllmProfile& profile,
            const PlanRequest& request, FitResult* result, Deployment* used, std::string* why_not) {
  Attempt a = evaluate(model, gpu, deployment, profile, request, nullptr);
  if (why_not != nullptr) *why_not = a.why_not;
  if (result != nullptr) *result = std::move(a.result);
  if (used != nullptr) *used = a.used;
  return a.shortfall == Shortfall::kNone;
}

std::vector<PlanAnswer> plan_deployments(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                         const Deployment& base, const VllmProfile& profile,
                                         const PlanRequest& request) {
  check_request(request);
  const std::vector<Layout> layouts = node_shaped_layouts(model, request);
  FitMemo memo(model);
  std::vector<PlanAnswer> answers;
  for (const auto& gpu : gpus) {
    PlanAnswer a;
    a.gpu = gpu.name;
    for (const auto& l : layouts) {
      if (serve_with_variants(model, gpu, base, profile, request, l, memo, a)) break;
    }
    if (!a.found) {
      a.why_not = fmt::format("no layout up to TP {} x PP {} holds {} requests of {} tokens",
                              layouts.back().tp, layouts.back().pp, request.concurrency, request.max_model_len);
    }
    answers.push_back(std::move(a));
  }
  std::stable_sort(answers.begin(), answers.end(), [&](const PlanAnswer& x, const PlanAnswer& y) {
    if (x.found != y.found) return x.found;
    if (x.gpus != y.gpus) return x.gpus < y.gpus;
    auto memory = [&](const PlanAnswer& p) {
      for (const auto& g : gpus) {
        if (g.name == p.gpu) return g.memory.count() * p.gpus;
      }
      return std::int64_t{0};
    };
    return memory(x) < memory(y);
  });
  return answers;
}

}  // namespace gpubudget
