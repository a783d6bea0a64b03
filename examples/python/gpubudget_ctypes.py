#!/usr/bin/env python3
"""Calls gpubudget in process through its C ABI (libgpubudget_c.so) with nothing but the standard library.

    python3 gpubudget_ctypes.py /path/to/libgpubudget_c.so [config_dir]

Asks the incident's question (Kimi-K2.5-NVFP4, 8x RTX PRO 6000, TP8, 16-bit KV, utilization 0.9, vLLM 0.15),
checks the answer against the figures derived by hand in docs/methodology.md, and shows that errors come
back as a status and a message, not as a crash.
"""
import ctypes
import json
import sys


def load(path):
    lib = ctypes.CDLL(path)
    lib.gpubudget_version.restype = ctypes.c_char_p
    lib.gpubudget_run_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.gpubudget_run_json.restype = ctypes.c_int
    lib.gpubudget_free.argtypes = [ctypes.c_void_p]
    return lib


def run(lib, request):
    out = ctypes.c_void_p()
    status = lib.gpubudget_run_json(json.dumps(request).encode(), ctypes.byref(out))
    try:
        text = ctypes.string_at(out.value).decode()
    finally:
        lib.gpubudget_free(out)
    return status, json.loads(text)


def main():
    lib = load(sys.argv[1])
    extra = {"config_dir": sys.argv[2]} if len(sys.argv) > 2 else {}
    print("gpubudget", lib.gpubudget_version().decode())

    status, fit = run(lib, dict(extra, operation="fit", model="nvidia/Kimi-K2.5-NVFP4", gpu="rtx-pro-6000",
                                vllm_version="0.15",
                                deployment={"tensor_parallel_size": 8, "kv_cache_dtype": "bfloat16",
                                            "gpu_memory_utilization": 0.9}))
    # 61 layers x (512 + 64) x 2 bytes per token; 262,144 tokens need 18,421,383,168 bytes: does not fit.
    assert status == 1, (status, fit)
    assert fit["kv_cache"]["bytes_per_token"] == 61 * 576 * 2, fit["kv_cache"]
    assert fit["request"]["needed_bytes"] == 18421383168, fit["request"]
    assert 0 < fit["max_model_len"] < 262144, fit["max_model_len"]
    print("incident: largest --max-model-len", fit["max_model_len"], "status", status)

    status, error = run(lib, dict(extra, operation="fit", model="meta-llama/Llama-3.1-8B", gpu="h100",
                                  deployment={"tensor_parallel_size": 3}))
    assert status == 3 and "--tensor-parallel-size 3" in error["error"], (status, error)
    status, error = run(lib, {"operation": 7})
    assert status == 3 and "request:/operation: expected a string, got 7" in error["error"], (status, error)
    print("errors: ok")


if __name__ == "__main__":
    main()
