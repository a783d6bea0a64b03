/* gpubudget's C ABI: the library's operations in process, one JSON request in, one JSON document out.
 *
 * For Python (ctypes), Go (cgo), Rust (FFI) and anything else that can call C. No C++ exception and no
 * signal crosses this boundary; every string returned is allocated by the library and freed with
 * gpubudget_free. Thread safety: calls are independent (no global state besides the read-only configs).
 *
 * A request is a JSON object with an "operation" (version, fit, weights, sweep, plan, diagnose, gpus,
 * models) and its fields, named as vLLM names its arguments (docs/api.md lists them per operation), e.g.
 * the incident:
 *   {"operation": "fit", "model": "nvidia/Kimi-K2.5-NVFP4", "gpu": "rtx-pro-6000", "vllm_version": "0.15",
 *    "deployment": {"tensor_parallel_size": 8, "kv_cache_dtype": "bfloat16", "gpu_memory_utilization": 0.9},
 *    "config_dir": "/usr/share/gpubudget/configs"}            (optional; default as the CLI finds it)
 * The answer is the document `gpubudget fit ... --json` prints (docs/cli.md), e.g. {"max_model_len": 133536, ...}.
 */
#ifndef GPUBUDGET_GPUBUDGET_H
#define GPUBUDGET_GPUBUDGET_H

#if defined(GPUBUDGET_C_BUILDING)
#define GPUBUDGET_C_API __attribute__((visibility("default")))
#else
#define GPUBUDGET_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, "MAJOR.MINOR.PATCH". Static storage: do not free. */
GPUBUDGET_C_API const char* gpubudget_version(void);

/* Answers one request (see above).
 * Returns 0 computed (fits / found), 1 computed (does not fit / nothing serves the plan), 3 bad input (a
 * NULL or malformed request, a field of the wrong type, an input the library refuses), 4 internal error.
 * *out_json receives a NUL-terminated JSON document allocated by the library (never NULL when out_json
 * is not NULL and memory could be allocated): the operation's document for 0 and 1,
 * {"error": "message", "status": N} otherwise. Free it with gpubudget_free. */
GPUBUDGET_C_API int gpubudget_run_json(const char* request_json, char** out_json);

/* Frees a string returned by this library. NULL is allowed. */
GPUBUDGET_C_API void gpubudget_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* GPUBUDGET_GPUBUDGET_H */
