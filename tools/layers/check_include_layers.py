#!/usr/bin/env python3
"""The library's layers, and a check that every include points down (or within its own layer).

Usage: check_include_layers.py SOURCE_ROOT     exit 0 when clean, 1 with one line per violation.

The library's sources live in src/<layer>/ (subfolders belong to their top folder); its public headers
are include/gpubudget/*.h, each assigned a layer below. A file may include a header of its own layer or
of a lower one. Private headers are included by their path from src/ ("model/blocks.h"), so that the
layer of every include can be read off its path. src/ holds no loose .cpp or .h file.
docs/development.md explains the layers.
"""
import pathlib
import re
import sys

# Lowest first. A layer may use every layer before it.
LAYERS = [
    "core",         # bytes, dtypes, errors, the deployment's settings, JSON reading, the configs folder
    "gpu",          # GPU presets and detection
    "log",          # reading a vLLM startup log
    "checkpoint",   # safetensors headers, checkpoint module names
    "model",        # config.json (and the quantization config) -> ModelSpec: the family parsers
    "hub",          # finding a model: bundled, a folder, the HF cache, the Hub
    "engine",       # vLLM's behaviour by version: profiles, parallel layout, the model as served
    "memory",       # bytes per GPU: weights, KV cache, state, overheads, buffers
    "solve",        # fit, sweep, plan, remedies, the weights report
    "diagnose",     # a startup log explained
    "documents",    # the JSON documents
    "calibration",  # profiles fitted to observations
    "c_api",        # the C ABI's requests
    "platform",     # stand-ins replacing a native implementation at link time (any layer's)
]

# The public headers' layers. A header missing here is reported, so a new one gets a layer when added.
PUBLIC = {
    "error.h": "core", "bytes.h": "core", "dtype.h": "core", "deployment.h": "core", "limits.h": "core",
    "config_dir.h": "core", "argument_values.h": "core", "gpubudget.h": "core", "version.h": "core", "notice.h": "core",
    "gpu_spec.h": "gpu", "gpu_presets.h": "gpu", "gpu_detect.h": "gpu",
    "vllm_log.h": "log",
    "safetensors.h": "checkpoint",
    "model_spec.h": "model", "quantization.h": "model", "model_config.h": "model",
    "hub.h": "hub",
    "vllm_profile.h": "engine", "profile_loading.h": "engine", "parallel_layout.h": "engine",
    "served_model.h": "engine", "engine_args.h": "engine", "vllm_command.h": "engine",
    "launch_options.h": "engine", "vllm_args.h": "engine",
    "load.h": "engine",  # the loaders of every layer up to here, for callers who want one include
    "weights.h": "memory", "weight_units.h": "memory", "header_weights.h": "memory", "kv_cache.h": "memory",
    "mamba_state.h": "memory", "overheads.h": "memory", "lora_buffers.h": "memory",
    "fit.h": "solve", "sweep.h": "solve", "plan.h": "solve", "remedies.h": "solve", "weights_report.h": "solve", "launch_command.h": "solve",
    "diagnosis.h": "diagnose",
    "json_documents.h": "documents",
    "calibrate.h": "calibration",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root: pathlib.Path) -> int:
    rank = {name: i for i, name in enumerate(LAYERS)}
    problems = []
    src = root / "src"
    include_dir = root / "include" / "gpubudget"

    def layer_of_include(target: str):
        if target.startswith("gpubudget/"):
            name = target[len("gpubudget/"):]
            return PUBLIC.get(name), f"include/gpubudget/{name}"
        top = target.split("/")[0]
        if "/" in target and top in rank and (src / target).exists():
            return top, f"src/{target}"
        return None, target

    files = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".h") or not path.is_file():
            continue
        rel = path.relative_to(src)
        if len(rel.parts) == 1:
            problems.append(f"src/{rel}: a loose file at the top of src/; it belongs in a layer's folder")
            continue
        if rel.parts[0] not in rank:
            problems.append(f"src/{rel}: folder {rel.parts[0]}/ is no layer of tools/layers/check_include_layers.py")
            continue
        files.append((path, rel.parts[0], f"src/{rel}"))
    for path in sorted(include_dir.glob("*.h")):
        layer = PUBLIC.get(path.name)
        if layer is None:
            problems.append(f"include/gpubudget/{path.name}: no layer assigned (PUBLIC in {pathlib.Path(__file__).name})")
            continue
        files.append((path, layer, f"include/gpubudget/{path.name}"))

    for path, layer, shown in files:
        for target in INCLUDE.findall(path.read_text(encoding="utf-8")):
            if target.endswith(".inc") or target.startswith("fmt/") or target.startswith("nlohmann/"):
                continue
            target_layer, target_shown = layer_of_include(target)
            if target_layer is None:
                problems.append(f'{shown}: #include "{target}" names no layer; write private headers '
                                f'by their path from src/ ("model/blocks.h")')
            elif shown.startswith("include/") and target_shown.startswith("src/"):
                problems.append(f'{shown}: a public header includes the private {target_shown}')
            elif rank[target_layer] > rank[layer]:
                problems.append(f"{shown} ({layer}) includes {target_shown} ({target_layer}): "
                                f"an include pointing up a layer")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include-layer problems (tools/layers/check_include_layers.py)")
        return 1
    print(f"include layers: {len(files)} files, every include points down or within its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))
