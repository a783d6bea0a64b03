#!/usr/bin/env bash
# Times `gpubudget diagnose` on a 200 MB synthetic vLLM log (three interleaved workers' lines with
# ANSI colours, repeated, and the KV-cache error at the end), process start included, with hyperfine
# (Debian package `hyperfine`): scripts/bench-diagnose.sh [path/to/gpubudget]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$here/build/release/apps/cli/gpubudget}"
log="$(mktemp --suffix=.log)"
trap 'rm -f "$log"' EXIT
block=$'(Worker_TP0 pid=1) INFO 01-01 00:00:00 [gpu_model_runner.py:1] Loading safetensors checkpoint shards: 50% Completed | 60/119\n\e[1;36m(Worker_TP1 pid=2)\e[0;0m DEBUG 01-01 00:00:00 [shm_broadcast.py:1] No available shared memory broadcast block found in 60 seconds\n(APIServer pid=3) INFO 01-01 00:00:00 [loggers.py:1] Engine 000: Avg prompt throughput: 0.0 tokens/s, Running: 0 reqs, GPU KV cache usage: 0.0%\n'
# 4096 blocks per chunk, chunks until 200 MB.
chunk="$(mktemp)"
for _ in $(seq 4096); do printf '%s' "$block"; done > "$chunk"
while [ "$(stat -c %s "$log")" -lt 200000000 ]; do cat "$chunk" >> "$log"; done
rm -f "$chunk"
printf '%s\n' "(EngineCore_DP0 pid=4) ERROR 01-01 00:00:00 [core.py:1] ValueError: To serve at least one request with the model's max seq len (262144), (17.16 GiB KV cache is needed, which is larger than the available KV cache memory (11.7 GiB). Based on the available memory, the estimated maximum model length is 178779. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine." >> "$log"
echo "log: $(stat -c %s "$log") bytes"
hyperfine -N --warmup 1 --runs 10 "$bin diagnose $log --json"
