#!/usr/bin/env bash
# Times the incident's what-if sweep (8 rows) end to end, process start included, with hyperfine
# (Debian package `hyperfine`): scripts/bench-sweep.sh [path/to/gpubudget]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/build/release/apps/cli/gpubudget}"
hyperfine -N --warmup 3 --runs 50 \
  "$bin sweep nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 -dcp 1,8 --kv-cache-dtype bfloat16,fp8 --gpu-memory-utilization 0.9,0.95" \
  "$bin fit nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --json"
