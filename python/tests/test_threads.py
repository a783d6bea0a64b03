"""Calls from several threads at once give the answers of the same calls made one after another, and
the GIL is released while the library computes."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import gpubudget

QUESTIONS = [
    ("nvidia/Kimi-K2.5-NVFP4", dict(gpu="rtx-pro-6000", tensor_parallel_size=8, kv_cache_dtype="bfloat16")),
    ("nvidia/Kimi-K2.5-NVFP4", dict(gpu="h200", tensor_parallel_size=8)),
    ("meta-llama/Llama-3.1-8B", dict(gpu="l4", max_model_len=32768)),
    ("deepseek-ai/DeepSeek-V3", dict(gpu="h200", tensor_parallel_size=8, gpu_memory_utilization=0.95)),
    ("meta-llama/Llama-3.1-8B", dict(gpu="h100", tensor_parallel_size=3)),  # an error, from a thread too
]


def answer(question):
    model, kwargs = question
    try:
        r = gpubudget.fit(model, **kwargs)
        return ("ok", r.max_model_len, r.per_gpu.kv_cache_bytes, r.to_dict())
    except gpubudget.InputError as e:
        return ("error", str(e))


def test_threads_agree_with_serial_answers():
    serial = [answer(q) for q in QUESTIONS]
    assert serial[-1][0] == "error" and all(a[0] == "ok" for a in serial[:-1])
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(answer, QUESTIONS * 8))
    assert parallel == serial * 8


def test_one_result_shared_between_threads():
    r = gpubudget.fit("nvidia/Kimi-K2.5-NVFP4", gpu="rtx-pro-6000", tensor_parallel_size=8, kv_cache_dtype="bfloat16")
    with ThreadPoolExecutor(max_workers=4) as pool:
        documents = list(pool.map(lambda _: r.to_dict(), range(16)))  # the document is built once
    assert all(d == documents[0] for d in documents)


def test_the_gil_is_released_inside_the_native_call():
    # A Python thread keeps counting while the main thread is inside one native call (a sweep of 3840
    # scenarios, milliseconds even in a release build). A native call that kept the GIL would let no
    # Python code run until it returned: no tick could fall inside it.
    from gpubudget import _native

    model = gpubudget.load_model("deepseek-ai/DeepSeek-V3")
    request = {
        "operation": "sweep",
        "config_dir": model.config_dir,
        "gpus": ["h100", "h200", "b200", "rtx-pro-6000"],
        "tensor_parallel_sizes": [1, 2, 4, 8],
        "decode_context_parallel_sizes": [1, 2, 4, 8],
        "kv_cache_dtypes": ["auto", "bfloat16", "fp8"],
        "gpu_memory_utilizations": [0.5 + 0.025 * i for i in range(20)],
    }
    ticks = []
    stop = threading.Event()
    started_counting = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.monotonic())
            started_counting.set()
            time.sleep(0.0005)

    counter = threading.Thread(target=count)
    counter.start()
    started_counting.wait()
    try:
        started = time.monotonic()
        _status, document = _native.run(request, model._native)
        finished = time.monotonic()
    finally:
        stop.set()
        counter.join()
    assert document.count('"gpu_memory_bytes"') == 4 * 4 * 4 * 3 * 20
    elapsed_ms = 1000 * (finished - started)
    assert elapsed_ms >= 10, f"the call took {elapsed_ms:.1f} ms: too short to tell (make the sweep larger)"
    # The counter ticks every ~0.5 ms when it can run. A call that kept the GIL would leave room for a
    # tick or two at its edges only (the switch before the call); one that released it, one per ~0.5 ms.
    during = [t for t in ticks if started < t < finished]
    assert len(during) >= 5, f"{len(during)} ticks during a {elapsed_ms:.1f} ms native call"
