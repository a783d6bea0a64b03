"""Every operation's to_dict() is the CLI's --json document for the same question, and bad input raises
InputError with the CLI's message."""

import dataclasses

import pytest

import gpubudget

BUNDLED = gpubudget.models()


def test_models_and_gpus_match_the_cli(cli):
    _, models, _ = cli.run("models", "--json")
    assert BUNDLED == models
    assert len(BUNDLED) > 50
    _, presets, _ = cli.run("gpus", "--json")
    gpus = gpubudget.gpus()
    assert [g.to_dict() for g in gpus] == presets
    h100 = next(g for g in gpus if g.name == "h100")
    assert h100.memory_bytes == next(p for p in presets if p["name"] == "h100")["memory_bytes"]


@pytest.mark.parametrize("model", BUNDLED)
def test_fit_of_every_bundled_model_matches_the_cli(cli, model):
    code, document, stderr = cli.run("fit", model, "--gpu", "h100", "--json")
    if code == 3:
        with pytest.raises(gpubudget.InputError) as caught:
            gpubudget.fit(model, gpu="h100")
        assert str(caught.value) == cli.error_message(stderr)
        return
    assert code in (0, 1), stderr
    r = gpubudget.fit(model, gpu="h100")
    assert r.to_dict() == document
    assert r.fits == (code == 0)
    assert r.max_model_len == document["max_model_len"]
    assert r.kv_cache.bytes_per_token == document["kv_cache"]["bytes_per_token"]
    assert r.warnings == tuple(document["warnings"])
    assert tuple(w.code for w in r.warnings) == tuple(document["warning_codes"])
    assert tuple(n.code for n in r.notes) == tuple(document["note_codes"])


@pytest.mark.parametrize(
    "kwargs, cli_args",
    [
        (dict(gpu="no-such-gpu"), ["--gpu", "no-such-gpu"]),
        (dict(gpu="h200", tensor_parallel_size=3), ["--gpu", "h200", "-tp", "3"]),
        (dict(gpu="h200", vllm_version="0.9"), ["--gpu", "h200", "--vllm-version", "0.9"]),
        (dict(gpu="h200", vllm_version="latest"), ["--gpu", "h200", "--vllm-version", "latest"]),
    ],
)
def test_errors_carry_the_cli_message(cli, kwargs, cli_args):
    code, _, stderr = cli.run("fit", "deepseek-ai/DeepSeek-V3", *cli_args)
    assert code == 3
    with pytest.raises(gpubudget.InputError) as caught:
        gpubudget.fit("deepseek-ai/DeepSeek-V3", **kwargs)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == cli.error_message(stderr)


def test_missing_model_carries_the_cli_message(cli, tmp_path):
    missing = str(tmp_path / "no-model")
    code, _, stderr = cli.run("fit", missing, "--gpu", "h100")
    assert code == 3
    with pytest.raises(gpubudget.InputError) as caught:
        gpubudget.load_model(missing)
    assert str(caught.value) == cli.error_message(stderr)


@pytest.mark.parametrize(
    "kwargs, named",
    [
        (dict(tensor_parallel_size=0), "tensor_parallel_size"),
        (dict(tensor_parallel_size="8"), "tensor_parallel_size"),
        (dict(gpu_memory_utilization=1.5), "gpu_memory_utilization"),
        (dict(gpu_memory_utilization=float("nan")), "gpu_memory_utilization"),
        (dict(max_num_seqs=1 << 70), "max_num_seqs"),
        (dict(kv_cache_dtype="fp7"), "kv_cache_dtype"),
        (dict(no_such_field=1), "no_such_field"),
        (dict(gpu_memory_bytes=0), "gpu_memory_bytes"),
        (dict(gpu=None), "gpu"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, named):
    args = dict(gpu="h100")
    args.update(kwargs)
    with pytest.raises(gpubudget.InputError) as caught:
        gpubudget.fit("meta-llama/Llama-3.1-8B", **args)
    assert named in str(caught.value)


def test_sweep_rows(cli):
    r = gpubudget.sweep("nvidia/Kimi-K2.5-NVFP4", gpus=["rtx-pro-6000", "h200"], tensor_parallel_sizes=[4, 8],
                        kv_cache_dtypes=["bfloat16", "fp8"], gpu_memory_utilizations=[0.9], vllm_version="0.15")
    _, document, _ = cli.run("sweep", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000,h200", "-tp", "4,8",
                             "--kv-cache-dtype", "bfloat16,fp8", "--gpu-memory-utilization", "0.9",
                             "--vllm-version", "0.15", "--format", "json")
    assert r.to_dict() == document
    assert len(r) == 2 * 2 * 2 == len(document)
    rows = list(r)
    assert [row.to_dict() for row in rows] == document
    # dataclasses.asdict is what pandas.DataFrame(rows) reads: the figures only, one column each.
    columns = set(dataclasses.asdict(rows[0]))
    assert columns == {f.name for f in dataclasses.fields(gpubudget.SweepRow)}
    assert "_document" not in columns
    incident = next(row for row in rows if row.gpu == "rtx-pro-6000" and row.tensor_parallel_size == 8
                    and row.kv_cache_dtype == "bfloat16")
    fit = gpubudget.fit("nvidia/Kimi-K2.5-NVFP4", gpu="rtx-pro-6000", tensor_parallel_size=8,
                        kv_cache_dtype="bfloat16", gpu_memory_utilization=0.9, vllm_version="0.15")
    assert incident.valid and incident.max_model_len == fit.max_model_len
    assert incident.kv_cache_bytes == fit.per_gpu.kv_cache_bytes


def test_plan_weights_diagnose_match_the_cli(cli, repo):
    plan = gpubudget.plan("meta-llama/Llama-3.1-8B", max_model_len=131072, concurrency=4, gpus=["l4", "h100"])
    _, document, _ = cli.run("plan", "meta-llama/Llama-3.1-8B", "--max-model-len", "131072", "--concurrency", "4",
                             "--gpu", "l4,h100", "--json")
    assert [a.to_dict() for a in plan] == document

    w = gpubudget.weights("deepseek-ai/DeepSeek-V3", tensor_parallel_size=8)
    _, document, _ = cli.run("weights", "deepseek-ai/DeepSeek-V3", "-tp", "8", "--json")
    assert w.to_dict() == document
    assert w.per_gpu_bytes == document["per_gpu"]["weights_bytes"]
    assert sum(size for _, size in w.components) == w.per_gpu_bytes

    log = repo / "tests" / "data" / "logs" / "incident-kimi-k25-tp8.log"
    d = gpubudget.diagnose(log)
    _, document, _ = cli.run("diagnose", str(log), "--json")
    assert d.to_dict() == document
    assert d.max_model_len == 262144
    d = gpubudget.diagnose(log, model="nvidia/Kimi-K2.5-NVFP4", gpu="rtx-pro-6000")
    _, document, _ = cli.run("diagnose", str(log), "--model", "nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000",
                             "--json")
    assert d.to_dict() == document


def test_sweep_layouts_pair_each_gpu_with_its_tp(cli):
    # "4 x H100 or 8 x RTX 4090" is one sweep of two rows, as `sweep --layout h100:4,rtx-4090:8`.
    r = gpubudget.sweep("meta-llama/Llama-3.1-8B", layouts=[("h100", 4), ("rtx-4090", 8)])
    _, document, _ = cli.run("sweep", "meta-llama/Llama-3.1-8B", "--layout", "h100:4,rtx-4090:8", "--format", "json")
    assert r.to_dict() == document
    assert [(row["gpu"], row["tensor_parallel_size"]) for row in document] == [("h100", 4), ("rtx-4090", 8)]


def test_sweep_takes_max_model_len_as_the_cli_does(cli):
    # The concurrency column is for --max-model-len tokens: 32,768 here, as `sweep --max-model-len 32768`.
    r = gpubudget.sweep("Qwen/Qwen3-8B", gpus=["h100"], tensor_parallel_sizes=[1, 2], max_model_len=32768)
    _, document, _ = cli.run("sweep", "Qwen/Qwen3-8B", "--gpu", "h100", "-tp", "1,2", "--max-model-len", "32768",
                             "--format", "json")
    assert r.to_dict() == document
    with pytest.warns(DeprecationWarning, match="target_len is now max_model_len"):
        old = gpubudget.sweep("Qwen/Qwen3-8B", gpus=["h100"], tensor_parallel_sizes=[1, 2], target_len=32768)
    assert old.to_dict() == document
    with pytest.raises(ValueError):
        gpubudget.sweep("Qwen/Qwen3-8B", gpus=["h100"], max_model_len=4096, target_len=4096)
