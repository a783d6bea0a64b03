// plan_deployments (plan.h): an ordered search over node-shaped TP x PP layouts, one fit() each.
#include "gpubudget/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpubudget/error.h"
#include "gpubudget/limits.h"

namespace gpubudget {

bool serves(const ModelSpec& model, const GpuSpec& gpu, const Deployment& deployment, const VllmProfile& profile,
            const PlanRequest& request, FitResult* result, Deployment* used, std::string* why_not) {
  Deployment d = deployment;
  d.max_model_len = request.max_model_len;
  try {
    FitResult r = fit(model, gpu, d, profile);
    // vLLM admits at most max_num_seqs requests at once: raise it when the target needs more.
    if (r.scheduler.max_num_seqs < request.concurrency) {
      d.max_num_seqs = request.concurrency;
      r = fit(model, gpu, d, profile);
    }
    const bool ok = r.fits && r.vllm_would_start && r.max_concurrency >= static_cast<double>(request.concurrency);
    if (!ok && why_not != nullptr) {
      const WorkerBudget& w = r.binding_worker();
      *why_not = !r.vllm_would_start                     ? "vLLM would not start: " + r.start_blocker
                 : w.weights.total > w.requested           ? fmt::format("the weights need {:.2f} GiB per GPU, vLLM may use "
                                                                         "{:.2f} GiB", to_gib(w.weights.total), to_gib(w.requested))
                 : !r.fits                                 ? fmt::format("the largest length is {}", r.max_model_len)
                                                           : fmt::format("holds {:.2f} requests of {} tokens ({} needed)",
                                                                         r.max_concurrency, request.max_model_len,
                                                                         request.concurrency);
    }
    if (result != nullptr) *result = std::move(r);
    if (used != nullptr) *used = d;
    return ok;
  } catch (const InputError& e) {
    if (why_not != nullptr) *why_not = std::string("vLLM refuses the layout: ") + e.what();
    return false;
  }
}

std::vector<PlanAnswer> plan_deployments(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                         const Deployment& base, const VllmProfile& profile,
                                         const PlanRequest& request) {
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
  struct Layout {
    std::int64_t tp, pp;
  };
  if (request.gpus_per_node < 1 || request.gpus_per_node > kMaxTensorParallelSize) {
    throw InputError(fmt::format("--gpus-per-node {}: expected a value from 1 to {}", request.gpus_per_node,
                                 kMaxTensorParallelSize));
  }
  std::vector<Layout> layouts;
  // Stages beyond the decoder layers are layouts vLLM refuses: not tried.
  const std::int64_t deepest = std::min<std::int64_t>(request.max_pipeline, static_cast<std::int64_t>(model.layers.size()));
  for (const auto tp : request.tensor_parallel) {
    if (tp < 1 || tp > kMaxTensorParallelSize) {
      throw InputError(fmt::format("plan: tensor-parallel size {}: expected a value from 1 to {}", tp,
                                   kMaxTensorParallelSize));
    }
    if (tp > request.gpus_per_node) continue;  // TP stays within a node
    layouts.push_back({tp, 1});
    // Pipeline stages across nodes, each stage a whole node.
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
  std::vector<PlanAnswer> answers;
  for (const auto& gpu : gpus) {
    PlanAnswer a;
    a.gpu = gpu.name;
    for (const auto& l : layouts) {
      Deployment d = base;
      d.tensor_parallel_size = l.tp;
      d.pipeline_parallel_size = l.pp;
      d.pp_layer_partition.clear();
      FitResult r;
      std::string why_not;
      if (!serves(model, gpu, d, profile, request, &r, &a.deployment, &why_not)) {
        a.rejected_layouts.push_back(fmt::format("TP {}{}: {}", l.tp, l.pp > 1 ? fmt::format(" x PP {}", l.pp) : " alone",
                                                 why_not));
        continue;
      }
      a.found = true;
      a.gpus = l.tp * l.pp;
      a.concurrency = r.max_concurrency;
      a.max_model_len = r.max_model_len;
      a.weights_per_gpu = r.binding_worker().weights.total;
      a.kv_cache_per_gpu = r.binding_worker().kv_cache;
      break;
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
