"""Python's vllm_args and parse_vllm_serve against the CLI: each launch line of
tests/data/launch_lines/cases.json gives Python the fit document the CLI gives for the pasted line,
byte for byte (the C++ test tests/cli/launch_line_parity_test.cpp holds the CLI's own flags and the C
ABI to the same documents)."""

import json
import shlex
import subprocess

import pytest

import gpubudget

from conftest import REPO

CASES = json.loads((REPO / "tests/data/launch_lines/cases.json").read_text())["cases"]


def _pasted(cli, case):
    args = ["fit", "--gpu", case["gpu"], "--json"]
    if "vllm_version" in case:
        args += ["--vllm-version", case["vllm_version"]]
    done = subprocess.run([cli.path, *args, "--", *shlex.split(case["line"])], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vllm_args_give_the_cli_document(cli, case):
    line = gpubudget.parse_vllm_serve(case["line"])
    assert line.model == case["model"]
    result = gpubudget.fit(line.model, gpu=case["gpu"], vllm_version=case.get("vllm_version"),
                           vllm_args=shlex.split(case["line"]))
    assert result.to_json() == _pasted(cli, case)


def test_parse_vllm_serve_reads_the_line():
    line = gpubudget.parse_vllm_serve(
        "VLLM_MLA_DISABLE=1 vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --enable-expert-parallel "
        "--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 1}' --port 8000")
    assert line.model == "deepseek-ai/DeepSeek-V3"
    assert line.arguments == {
        "--tensor-parallel-size": "8",
        "--enable-expert-parallel": True,
        "--speculative-config": '{"method":"mtp","num_speculative_tokens":1}',
    }
    assert line.environment == {"VLLM_MLA_DISABLE": "1"}
    assert line.ignored == ("--port",)
    assert line.vllm_args == ("VLLM_MLA_DISABLE=1", "--tensor-parallel-size", "8", "--enable-expert-parallel",
                              "--speculative-config", '{"method":"mtp","num_speculative_tokens":1}')
    # Passed on, the words read the same.
    assert gpubudget.parse_vllm_serve(list(line.vllm_args)).arguments == line.arguments


def test_vllm_args_and_deployment_keywords_are_one_or_the_other():
    with pytest.raises(gpubudget.InputError, match="give vllm_args or the deployment keywords, not both "
                                                     r"\(tensor_parallel_size\)"):
        gpubudget.fit("meta-llama/Llama-3.1-8B", gpu="h100", tensor_parallel_size=2, vllm_args=["-tp", "2"])
    with pytest.raises(gpubudget.InputError, match="vllm_args: expected a list of strings"):
        gpubudget.fit("meta-llama/Llama-3.1-8B", gpu="h100", vllm_args="-tp 2")
    with pytest.raises(gpubudget.InputError, match="--tensor-parallel-size: expected an integer from 1 to 1024, got 0"):
        gpubudget.fit("meta-llama/Llama-3.1-8B", gpu="h100", vllm_args=["-tp", "0"])


def test_sweep_plan_and_weights_take_vllm_args():
    rows = gpubudget.sweep("meta-llama/Llama-3.1-8B", gpus=["h100"], vllm_args=["--enable-lora", "--max-lora-rank", "64"])
    plain = gpubudget.sweep("meta-llama/Llama-3.1-8B", gpus=["h100"])
    assert rows[0].kv_cache_tokens < plain[0].kv_cache_tokens  # the adapter slots come out of the KV cache
    report = gpubudget.weights("meta-llama/Llama-3.1-8B", vllm_args=["-tp", "2"])
    assert report.per_gpu_bytes == gpubudget.weights("meta-llama/Llama-3.1-8B", tensor_parallel_size=2).per_gpu_bytes
    assert report.per_gpu_bytes < gpubudget.weights("meta-llama/Llama-3.1-8B").per_gpu_bytes
    planned = gpubudget.plan("meta-llama/Llama-3.1-8B", gpus=["rtx-4090"], max_model_len=8192,
                             vllm_args=["--quantization", "fp8"])
    assert planned[0].found


def test_warnings_and_notes_carry_their_codes():
    # A flag vLLM does not have and a VLLM_MLA_DISABLE on a model without MLA layers: each a str with
    # its stable code (docs/warnings.md), the sentence unchanged.
    line = gpubudget.parse_vllm_serve("VLLM_MLA_DISABLE=1 vllm serve meta-llama/Llama-3.1-8B --frobnicate")
    assert [n.code for n in line.notes] == ["flag_unknown"]
    assert line.notes[0].startswith("--frobnicate is not one of vLLM's engine arguments")
    result = gpubudget.fit(line.model, gpu="h100", vllm_args=line.vllm_args)
    codes = [w.code for w in result.warnings]
    assert "mla_disabled" in codes
    mla = result.warnings[codes.index("mla_disabled")]
    assert isinstance(mla, str) and mla == "VLLM_MLA_DISABLE=1 changes nothing: the model has no MLA layers"
    assert repr(mla).startswith("Warning(")


def test_warnings_survive_copy_pickle_and_asdict():
    import copy
    import dataclasses
    import pickle

    result = gpubudget.fit("meta-llama/Llama-3.1-8B", gpu="h100", vllm_args=["--frobnicate"])
    assert [w.code for w in result.warnings] == ["flag_unknown"]
    for again in (copy.deepcopy(result.warnings[0]), pickle.loads(pickle.dumps(result.warnings[0]))):
        assert again == result.warnings[0] and again.code == "flag_unknown"
    assert dataclasses.asdict(result)["warnings"][0].code == "flag_unknown"
