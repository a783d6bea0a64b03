#!/usr/bin/env bash
# Writes every JSON document the CLI produces for the bundled models and test logs into OUT_DIR, one
# file per command, so that two builds can be compared byte for byte (`diff -r A B`):
#   scripts/snapshot-outputs.sh build/release/apps/cli/gpubudget /tmp/before
# A refactoring that must not change any figure is checked this way (docs/testing.md).
set -uo pipefail
bin=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# Both builds read the same configs, so that paths in the documents agree.
export GPUBUDGET_CONFIG_DIR="$root/configs"
run() {  # name, then the command's arguments; records stdout, stderr and the exit status
  local name=$1; shift
  "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo "exit $?" >>"$out/$name.out"
}
for dir in "$root"/configs/models/*/; do
  id=$(basename "$dir"); id=${id/__//}; key=${id//\//__}
  run "fit.$key.h100.tp8" fit "$id" --gpu h100 -tp 8 --json
  run "fit.$key.rtx4090.tp2" fit "$id" --gpu rtx-4090 -tp 2 --json
  run "fit.$key.b200.fp8.v0.17" fit "$id" --gpu b200 --kv-cache-dtype fp8 --vllm-version 0.17 --json
  run "fit.$key.rtxpro.pp2.128k" fit "$id" --gpu rtx-pro-6000 -pp 2 --max-model-len 128k --json
  run "weights.$key.tp2" weights "$id" -tp 2 --by tensor --json
  run "weights.$key.tp4.ep" weights "$id" -tp 4 --enable-expert-parallel --json
  run "sweep.$key" sweep "$id" --gpu h100,rtx-pro-6000 -tp 1,2,8 --kv-cache-dtype auto,fp8 --format json
done
for log in "$root"/tests/data/logs/*.log; do
  run "diagnose.$(basename "$log" .log)" diagnose "$log" --json
done
run diagnose.incident.model diagnose "$root/tests/data/logs/incident-kimi-k25-tp8.log" \
  --model nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 --json
run plan.kimi plan nvidia/Kimi-K2.5-NVFP4 --max-model-len 262144 --concurrency 8 --gpu rtx-pro-6000,h200,b200 --json
run plan.llama plan meta-llama/Llama-3.1-8B --max-model-len 32k --concurrency 16 --json
run gpus gpus --json
run models models
run models.status models --status
run fit.incident.text fit nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000 -tp 8 --kv-cache-dtype bfloat16 \
  --gpu-memory-utilization 0.9 --vllm-version 0.15 --explain
run sweep.incident.csv sweep nvidia/Kimi-K2.5-NVFP4 --gpu rtx-pro-6000,h200 -tp 8 -dcp 1,8 \
  --kv-cache-dtype bfloat16,fp8 --gpu-memory-utilization 0.9,0.95 --format csv
