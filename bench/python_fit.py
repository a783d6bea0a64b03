#!/usr/bin/python3
"""Time of one Python call of gpubudget.fit in process (docs/python.md), for bench/README.md.

Usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/python_fit.py [calls]
The model is loaded once (gpubudget.load_model); the first call loads the GPU preset and the vLLM
profile, so it is made before the timing. Prints the median over 7 rounds of the mean per call, for the
incident (a configuration that does not fit: its remedies are computed only when asked for) and for
Llama-3.1-8B on one H100, and the cost of to_dict() (the whole document, remedies included).
"""

import statistics
import sys
import time

import gpubudget

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def per_call_us(call, calls):
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds)


kimi = gpubudget.load_model("nvidia/Kimi-K2.5-NVFP4")
llama = gpubudget.load_model("meta-llama/Llama-3.1-8B")
incident = dict(gpu="rtx-pro-6000", tensor_parallel_size=8, kv_cache_dtype="bfloat16",
                gpu_memory_utilization=0.9, vllm_version="0.15")
gpubudget.fit(kimi, **incident)
gpubudget.fit(llama, gpu="h100")

print(f"gpubudget {gpubudget.__version__}, Python {sys.version.split()[0]}, {CALLS} calls x 7 rounds")
print(f"fit, incident (Kimi-K2.5-NVFP4, TP 8, bf16 KV): {per_call_us(lambda: gpubudget.fit(kimi, **incident), CALLS):.1f} us")
print(f"fit, Llama-3.1-8B on one H100:                 {per_call_us(lambda: gpubudget.fit(llama, gpu='h100'), CALLS):.1f} us")
print(f"fit by id (the config read each call), Llama:   "
      f"{per_call_us(lambda: gpubudget.fit('meta-llama/Llama-3.1-8B', gpu='h100'), CALLS // 20):.1f} us")
print(f"fit + to_dict(), Llama (document built):        "
      f"{per_call_us(lambda: gpubudget.fit(llama, gpu='h100').to_dict(), CALLS // 10):.1f} us")
