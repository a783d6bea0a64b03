/* gpubudget's C ABI: every command of the CLI, in process, JSON in and JSON out.
 *
 * For Python (ctypes), Go (cgo), Rust (FFI) and anything else that can call C. No C++ exception crosses
 * this boundary; every string returned is allocated by the library and freed with gpubudget_free.
 * Thread safety: calls are independent (no global state besides the read-only configs on disk).
 *
 * Example request, the incident:
 *   {"command": "fit",
 *    "args": ["nvidia/Kimi-K2.5-NVFP4", "--gpu", "rtx-pro-6000", "-tp", "8", "--kv-cache-dtype", "bfloat16",
 *             "--gpu-memory-utilization", "0.9", "--vllm-version", "0.15"],
 *    "config_dir": "/usr/share/gpubudget/configs"}          (optional; default as the CLI finds it)
 * The response is the command's `--json` document (docs/cli.md), e.g. {"max_model_len": 133536, ...}.
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

/* Runs `gpubudget <command> <args...> --json` in process.
 * request_json: a JSON object {"command": string, "args": [string...], "config_dir": string (optional)}.
 * Returns the CLI's exit status: 0 computed (and fits), 1 computed and the judged length does not fit,
 * 2 usage error (including a malformed request), 3 bad or unsupported input, 4 internal error.
 * *out_json receives a NUL-terminated JSON document allocated by the library (never NULL when out_json
 * is not NULL): the command's JSON output for status 0 and 1, {"error": "message", "status": N} otherwise.
 * Free it with gpubudget_free. */
GPUBUDGET_C_API int gpubudget_run_json(const char* request_json, char** out_json);

/* Frees a string returned by this library. NULL is allowed. */
GPUBUDGET_C_API void gpubudget_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* GPUBUDGET_GPUBUDGET_H */
