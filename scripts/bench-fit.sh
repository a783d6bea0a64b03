#!/usr/bin/env bash
# Times the incident's whole-process `fit --json` (the acceptance figure: median <= 5 ms) next to
# `gpubudget version` (process start alone), with hyperfine (Debian package `hyperfine`), and prints
# both medians: scripts/bench-fit.sh [path/to/gpubudget] [runs]
# This machine's speed drifts from minute to minute; compare the fit with the `version` of the same run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/build/release/apps/cli/gpubudget}"
runs="${2:-300}"
command -v hyperfine >/dev/null || { echo "bench-fit.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
report="$(mktemp --suffix=.json)"
trap 'rm -f "$report"' EXIT
# -i: the incident does not fit, so `fit` exits 1 by design.
hyperfine -N -i --warmup 10 --runs "$runs" --export-json "$report" \
  "$bin version" \
  "$bin fit nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --kv-cache-dtype bfloat16 --gpu-memory-utilization 0.9 --vllm-version 0.15 --json" \
  > /dev/null 2>&1
python3 - "$report" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    name = "fit (incident)" if " fit " in r["command"] else "version"
    print(f"{name:15} median {r['median'] * 1e3:.2f} ms  mean {r['mean'] * 1e3:.2f} ms  "
          f"user {r['user'] * 1e3:.2f} ms  system {r['system'] * 1e3:.2f} ms")
PY
