#!/usr/bin/env python3
"""Every `--json` document of the CLI checked against its JSON Schema in docs/schema/.

usage: check_json_schemas.py GPUBUDGET_CLI CONFIG_DIR SCHEMA_DIR LOG_DIR

Runs the CLI over a broad set of commands (every bundled model's `fit`, the what-ifs that fill the
optional parts of the documents, every test log's `diagnose`, ...), validates each document with the
schema of its command (draft 2020-12, python3-jsonschema), and checks that the schemas can fail: a
document missing a required field or carrying an unknown one is rejected. Exit 0 when all hold.
"""
import copy
import json
import os
import subprocess
import sys

import jsonschema

# The documents and the schema each one answers to (docs/schema/<name>.schema.json).
SCHEMAS = ("fit", "weights", "sweep", "plan", "diagnose", "gpus", "models")


def commands(cli, configs, logs):
    """(schema name, argv) pairs; each command prints one JSON document on stdout."""
    models = json.loads(run(cli, configs, ["models", "--json"]))
    out = []
    for model in models:
        out.append(("fit", ["fit", model, "--gpu", "h100", "--json"]))
    kimi = "nvidia/Kimi-K2.5-NVFP4"
    out += [
        # The incident: does not fit, remedies, a start blocker's neighbourhood.
        ("fit", ["fit", kimi, "--gpu", "rtx-pro-6000", "-tp", "8", "--vllm-version", "0.15", "--kv-cache-dtype",
                 "bfloat16", "--gpu-memory-utilization", "0.9", "--json"]),
        ("fit", ["fit", kimi, "--gpu", "rtx-pro-6000", "-tp", "8", "--vllm-version", "0.15", "--kv-cache-dtype",
                 "fp8", "--json"]),
        # Weights larger than the GPU; auto length; pipeline stages on two GPUs.
        ("fit", ["fit", "meta-llama/Llama-3.1-70B", "--gpu", "rtx-4090", "--json"]),
        ("fit", ["fit", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--max-model-len", "auto", "--json"]),
        ("fit", ["fit", "Qwen/Qwen3-8B", "--gpu", "rtx-5070-ti,rtx-5090", "-pp", "2", "--json"]),
        ("fit", ["fit", "deepseek-ai/DeepSeek-V3", "--gpu", "h200", "-tp", "8", "-dcp", "8", "--json"]),
        # A pasted launch line: speculative decoding, LoRA, online quantization, an unmodelled flag.
        ("fit", ["fit", "--gpu", "h200", "--json", "--", "vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8",
                 "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 1}']),
        ("fit", ["fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "Qwen/Qwen3-32B", "--enable-lora",
                 "--max-loras", "4", "--max-lora-rank", "64"]),
        ("fit", ["fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "meta-llama/Llama-3.1-70B", "-tp", "4",
                 "--quantization", "fp8"]),
        ("fit", ["fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--no-such-flag", "1"]),
        ("fit", ["fit", "--gpu", "h100", "--json", "--", "vllm", "serve", "Qwen/Qwen3-30B-A3B", "-tp", "2",
                 "--data-parallel-size", "2", "--enable-expert-parallel", "--all2all-backend",
                 "deepep_high_throughput", "-O3", "--compilation-config", '{"cudagraph_mode": "PIECEWISE"}']),
        ("weights", ["weights", "Qwen/Qwen3-8B", "--json"]),
        ("weights", ["weights", kimi, "-tp", "8", "--by", "tensor", "--json"]),
        ("weights", ["weights", "deepseek-ai/DeepSeek-V3", "-tp", "8", "-pp", "2", "--by", "layer", "--json"]),
        ("weights", ["weights", "Qwen/Qwen3-30B-A3B", "-tp", "2", "--enable-expert-parallel", "--gpu", "h100",
                     "--json"]),
        ("sweep", ["sweep", kimi, "--gpu", "rtx-pro-6000,h200", "-tp", "4,8", "-dcp", "1,8", "--kv-cache-dtype",
                   "bfloat16,fp8", "--format", "json"]),
        ("sweep", ["sweep", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--gpu-memory-utilization", "0.9,0.95",
                   "--max-num-seqs", "64,256", "--max-model-len", "16384", "--format", "json"]),
        ("sweep", ["sweep", kimi, "--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype", "fp8", "--vllm-version",
                   "0.15", "--format", "json"]),
        ("sweep", ["sweep", "meta-llama/Llama-3.1-70B", "--layout", "h100:1,h100:3,h100:4", "--format", "json"]),
        ("plan", ["plan", "deepseek-ai/DeepSeek-V3", "--max-model-len", "65536", "--concurrency", "16", "--gpu",
                  "h200,h100,b200,rtx-4090", "--json"]),
        ("plan", ["plan", "Qwen/Qwen3-235B-A22B-FP8", "--max-model-len", "8192", "--concurrency", "4", "--gpu",
                  "l40s", "--json"]),
        ("plan", ["plan", "Qwen/Qwen3-0.6B", "--max-model-len", "1024", "--concurrency", "2000", "--gpu", "h100",
                  "--json"]),
        ("gpus", ["gpus", "--json"]),
        ("models", ["models", "--json"]),
    ]
    for name in sorted(os.listdir(logs)):
        if name.endswith(".log"):
            out.append(("diagnose", ["diagnose", os.path.join(logs, name), "--json"]))
    out.append(("diagnose", ["diagnose", os.path.join(logs, "incident-kimi-k25-tp8.log"), "--model", kimi,
                             "--gpu", "rtx-pro-6000", "--json"]))
    # Predictions beside logged figures (the comparison's `logged` numbers), and a 0.10 log's nearest profile.
    out.append(("diagnose", ["diagnose", os.path.join(logs, "v0.19-kimi-dev-72b-tp2-debug.log"), "--gpu", "h100",
                             "--json"]))
    out.append(("diagnose", ["diagnose", os.path.join(logs, "v0.11-qwen3-vl-a100-kv-check.log"), "--gpu",
                             "a100-80gb", "--json"]))
    out.append(("diagnose", ["diagnose", os.path.join(logs, "v0.10-qwen3-coder-480b-fp8-h20-dp8-kv-check.log"),
                             "--model", os.path.join(os.path.dirname(logs), "configs",
                                                     "qwen3-coder-480b-a35b-instruct-fp8"), "--gpu", "h20", "--json"]))
    return out


def run(cli, configs, argv):
    """stdout of one CLI run (exit 0 or 1: an answer); anything else is a failure of this check."""
    p = subprocess.run([cli, "--config-dir", configs] + argv, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def object_paths(schema, document, path=()):
    """(path, sub-schema) of every object in `document` whose schema closes it (additionalProperties
    false) and lists required fields: where a mutation must be rejected."""
    found = []
    if isinstance(document, dict) and isinstance(schema, dict):
        if schema.get("additionalProperties") is False and schema.get("required"):
            found.append((path, schema))
        for key, value in document.items():
            sub = schema.get("properties", {}).get(key)
            if sub is not None:
                found += object_paths(resolve(sub), value, path + (key,))
    elif isinstance(document, list) and isinstance(schema, dict) and document:
        items = schema.get("items")
        if isinstance(items, dict):
            found += object_paths(resolve(items), document[0], path + (0,))
    return found


def resolve(schema):
    """The first alternative of a nullable `anyOf` / `oneOf`, for walking (not validating)."""
    for key in ("anyOf", "oneOf"):
        if key in schema:
            for alternative in schema[key]:
                if alternative.get("type") == "object" or "properties" in alternative or "items" in alternative:
                    return alternative
    return schema


def at(document, path):
    for key in path:
        document = document[key]
    return document


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    cli, configs, schema_dir, logs = sys.argv[1:]
    validators = {}
    for name in SCHEMAS:
        with open(os.path.join(schema_dir, f"{name}.schema.json"), encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[name] = jsonschema.Draft202012Validator(schema)
    failures = []
    checked = {name: 0 for name in SCHEMAS}
    mutations = 0
    for name, argv in commands(cli, configs, logs):
        try:
            text = run(cli, configs, argv)
        except RuntimeError as e:
            if name == "fit" and len(argv) == 5:
                continue  # a bundled model this build refuses (exit 3 with its reason): no document
            failures.append(str(e))
            continue
        document = json.loads(text)
        errors = sorted(validators[name].iter_errors(document), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            failures.append(f"{' '.join(argv)}: /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
        checked[name] += 1
        if errors:
            continue
        # The schema can fail: each closed object of this document without a required field, or with
        # an unknown one, is rejected.
        for path, sub in object_paths(validators[name].schema, document):
            for mutate in ("drop", "add"):
                broken = copy.deepcopy(document)
                target = at(broken, path)
                if mutate == "drop":
                    del target[sub["required"][0]]
                else:
                    target["no_such_field"] = 1
                mutations += 1
                if validators[name].is_valid(broken):
                    failures.append(f"{' '.join(argv)}: /{'/'.join(map(str, path))}: the schema accepts the "
                                    f"document with {mutate} of a field")
    for name, count in checked.items():
        if count == 0:
            failures.append(f"{name}: no document was checked")
    print(f"checked {sum(checked.values())} documents ({', '.join(f'{k} {v}' for k, v in checked.items())}), "
          f"{mutations} mutations rejected")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
