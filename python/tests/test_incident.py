"""The incident of docs/incident.md, end to end through the Python package.

Kimi-K2.5 is DeepSeek-V3-style MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values
per token and layer (vLLM MLAAttentionSpec: head_size 576, one KV head, replicated on every TP rank),
61 layers; at bfloat16 (2 bytes) that is 576 x 2 x 61 = 70272 bytes per token per GPU. The model's
length 262144 is a whole number of 64-token blocks, so vLLM's needed memory
(_check_enough_kv_cache_memory: max_memory_usage_bytes) is 262144 x 70272 bytes, about 17.16 GiB.
"""

import gpubudget

KIMI = "nvidia/Kimi-K2.5-NVFP4"
LAYERS = 61
BYTES_PER_TOKEN = (512 + 64) * 2 * LAYERS  # 70272
LENGTH = 262144


def incident(**overrides):
    args = dict(gpu="rtx-pro-6000", tensor_parallel_size=8, kv_cache_dtype="bfloat16",
                gpu_memory_utilization=0.9, vllm_version="0.15")
    args.update(overrides)
    return gpubudget.fit(KIMI, **args)


def test_bf16_kv_cache_bytes_per_token_and_needed_bytes():
    r = incident()
    assert BYTES_PER_TOKEN == 70272
    assert r.kv_cache.bytes_per_token == BYTES_PER_TOKEN
    assert isinstance(r.kv_cache.bytes_per_token, int)
    assert r.request.max_model_len == LENGTH
    assert r.request.needed_bytes == LENGTH * BYTES_PER_TOKEN
    assert abs(r.request.needed_bytes.gib - 17.156) < 0.001
    assert not r.fits and not r.request.kv_fits
    assert r.max_model_len < LENGTH
    assert r.max_model_len_range[0] <= r.max_model_len <= r.max_model_len_range[1]
    assert r.remedies, "a configuration that does not fit lists remedies"


def test_figures_and_document_agree_with_the_cli(cli):
    r = incident()
    code, document, _ = cli.run("fit", KIMI, "--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype", "bfloat16",
                                "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15", "--json")
    assert code == 1  # does not fit
    assert r.to_dict() == document
    assert r.max_model_len == document["max_model_len"]
    assert list(r.max_model_len_range) == document["max_model_len_range"]
    for name in ("requested_bytes", "weights_bytes", "activation_peak_bytes", "non_torch_bytes", "kv_cache_bytes",
                 "kv_cache_uncertainty_bytes"):
        assert getattr(r.per_gpu, name) == document["per_gpu"][name], name
    assert r.request.needed_bytes == document["request"]["needed_bytes"]
    assert [rem.change for rem in r.remedies] == [rem["change"] for rem in document["remedies"]]


def test_default_launch_matches_the_cli(cli):
    # The acceptance line of the package: the default launch (FP8 KV cache requested by the checkpoint).
    r = gpubudget.fit(KIMI, gpu="rtx-pro-6000", tensor_parallel_size=8)
    code, document, _ = cli.run("fit", KIMI, "--gpu", "rtx-pro-6000", "-tp", "8", "--json")
    assert code in (0, 1)
    assert r.max_model_len == document["max_model_len"]
    assert r.to_dict() == document


def test_loaded_model_is_reused():
    model = gpubudget.load_model(KIMI)
    assert model.family == "deepseek_v2" and model.num_layers == LAYERS
    assert model.derived_max_model_len == LENGTH
    a = gpubudget.fit(model, gpu="rtx-pro-6000", tensor_parallel_size=8, kv_cache_dtype="bfloat16", vllm_version="0.15")
    b = incident()
    assert a == b  # dataclass equality: every figure
