#!/usr/bin/env bash
# The Hub fetch of a 119-shard checkpoint's headers with 50 ms injected latency per request, against the
# Hub stand-in tests/hub/fake_hub.py on 127.0.0.1 (bench/README.md, "Hub fetch").
#
# Usage: bench/hub_fetch.sh [GPUBUDGET_BINARY] [LATENCY_MS]   (default: build/release/apps/cli/gpubudget, 50)
# The checkpoint: Kimi-K2.5-NVFP4's config and 281,088 tensors (61 layers x 384 experts x 3 projections x
# 4 NVFP4 tensors, each 16 bytes) in 119 shards, written as save_pretrained writes them; every shard is
# a sparse file. Each run starts from an empty cache: model info, 3 small files (each a redirect and
# the file), and per shard a redirect to the "CDN" and one or two ranges.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/release/apps/cli/gpubudget}
latency=${2:-50}
work=$(mktemp -d)
trap 'kill "${hub_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/repos/acme/kimi-119" <<'PY'
import json, os, struct, sys
out = sys.argv[1]
os.makedirs(out)
names = [f"language_model.model.layers.{l}.mlp.experts.{e}.{p}.{t}"
         for l in range(61) for e in range(384) for p in ("gate_proj", "up_proj", "down_proj")
         for t in ("weight", "weight_scale", "weight_scale_2", "input_scale")]
shards, per = 119, -(-len(names) // 119)
weight_map = {}
for s in range(shards):
    file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
    part = sorted(names[s * per:(s + 1) * per])
    header = {"__metadata__": {"format": "pt"}}
    for i, n in enumerate(part):
        header[n] = {"dtype": "U8", "shape": [4, 4], "data_offsets": [16 * i, 16 * i + 16]}
        weight_map[n] = file
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, file), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + 16 * len(part))
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": 16 * len(names)}, "weight_map": dict(sorted(weight_map.items()))}, f)
PY
cp configs/models/nvidia__Kimi-K2.5-NVFP4/config.json "$work/repos/acme/kimi-119/"
python3 tests/hub/fake_hub.py --root "$work/repos" --port-file "$work/ports" --latency-ms "$latency" &
hub_pid=$!
for _ in $(seq 100); do [ -s "$work/ports" ] && break; sleep 0.05; done
read -r hub_port _ < "$work/ports"
for run in 1 2 3; do
  rm -rf "$work/cache"
  start=$(date +%s.%N)
  HF_ENDPOINT="http://127.0.0.1:$hub_port" XDG_CACHE_HOME="$work/cache" HF_HUB_CACHE="$work/hf" \
    "$binary" weights acme/kimi-119 --json --quiet > "$work/out.json"
  end=$(date +%s.%N)
  echo "run $run: $(python3 -c "print(f'{$end - $start:.3f}')") s (119 shards, ${latency} ms per request, cold cache)"
done
start=$(date +%s.%N)
HF_ENDPOINT="http://127.0.0.1:$hub_port" XDG_CACHE_HOME="$work/cache" HF_HUB_CACHE="$work/hf" \
  "$binary" weights acme/kimi-119 --json --quiet > /dev/null
end=$(date +%s.%N)
echo "cached: $(python3 -c "print(f'{$end - $start:.3f}')") s (no request)"
python3 -c "import json,sys; h=json.load(open('$work/out.json'))['workers'][0]['headers']; print('header checkpoint bytes:', h['checkpoint_bytes'])"
