"""gpubudget: whether an LLM fits its GPUs under vLLM, and with how much context, from its config alone.

The Python face of gpubudget's C++ library (docs/python.md): the same answers as the ``gpubudget``
CLI, in process, with vLLM's argument names. Sizes are bytes (``Bytes``, an ``int`` with ``.gib``).

>>> import gpubudget
>>> r = gpubudget.fit("nvidia/Kimi-K2.5-NVFP4", gpu="rtx-pro-6000", tensor_parallel_size=8)
>>> r.max_model_len, r.kv_cache.bytes_per_token

Bad input raises ``InputError`` (a ``ValueError``) with the CLI's message; "does not fit" is a result
(``FitResult.fits`` False, with ``remedies``). Every call releases the GIL while it computes, and calls
from several threads are safe.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _native
from ._native import InputError
from ._results import (
    Bytes,
    Diagnosis,
    FitResult,
    Gpu,
    KvCache,
    PerGpu,
    PlanAnswer,
    Remedy,
    Request,
    SweepResult,
    SweepRow,
    Warning,
    WeightsReport,
    _notices,
)

__version__: str = _native.__version__

__all__ = [
    "Bytes",
    "Diagnosis",
    "FitResult",
    "Gpu",
    "InputError",
    "KvCache",
    "LaunchLine",
    "Model",
    "PerGpu",
    "PlanAnswer",
    "Remedy",
    "Request",
    "SweepResult",
    "SweepRow",
    "WeightsReport",
    "diagnose",
    "fit",
    "gpus",
    "load_model",
    "parse_vllm_serve",
    "models",
    "plan",
    "sweep",
    "weights",
]

PathLike = Union[str, "os.PathLike[str]"]

# The configs installed with the package (pip install .): package data. A cmake --install writes instead
# the path of the configs it installed (<prefix>/share/gpubudget/configs) into _configs_path.txt. Neither
# is in a build tree, where the library finds its own (load.h, find_config_dir).
_PACKAGE_CONFIGS = Path(__file__).resolve().parent / "configs"
_INSTALLED_CONFIGS_NOTE = Path(__file__).resolve().parent / "_configs_path.txt"


def _config_dir(config_dir: Optional[PathLike]) -> str:
    """The config directory to use: the argument, else $GPUBUDGET_CONFIG_DIR (the library reads it),
    else the package's own, else the one cmake --install named, else "" (the library's search: load.h,
    find_config_dir)."""
    if config_dir is not None:
        return os.fspath(config_dir)
    if os.environ.get("GPUBUDGET_CONFIG_DIR"):
        return ""
    if (_PACKAGE_CONFIGS / "gpus").is_dir():
        return str(_PACKAGE_CONFIGS)
    if _INSTALLED_CONFIGS_NOTE.is_file():
        installed = Path(_INSTALLED_CONFIGS_NOTE.read_text(encoding="utf-8").strip())
        if (installed / "gpus").is_dir():
            return str(installed)
    return ""


class Model:
    """A model's config as gpubudget read it: load it once, ask many questions (``fit(model, ...)``)."""

    __slots__ = ("_native", "id")

    def __init__(self, native: Any, model_id: str) -> None:
        self._native = native
        self.id: str = model_id  #: as given to load_model

    @property
    def source(self) -> str:
        """The file or folder the config was read from."""
        return self._native.source

    @property
    def architecture(self) -> str:
        """config.json ``architectures[0]``."""
        return self._native.architecture

    @property
    def model_type(self) -> str:
        """The language model's ``model_type``."""
        return self._native.model_type

    @property
    def family(self) -> str:
        """The parser that read it (docs/models.md), or "generic" for an estimate from safetensors headers."""
        return self._native.family

    @property
    def num_layers(self) -> int:
        """Decoder layers."""
        return self._native.num_layers

    @property
    def derived_max_model_len(self) -> int:
        """The model's maximum length as vLLM derives it from the config, tokens."""
        return self._native.derived_max_model_len

    @property
    def unmodelled_config_keys(self) -> List[str]:
        """config.json keys no parser read and not known to be without effect on memory (warned)."""
        return list(self._native.unmodelled_config_keys)

    @property
    def config_dir(self) -> str:
        """The gpubudget config directory (GPU presets, vLLM profiles) this model's fits use."""
        return self._native.config_dir

    def __repr__(self) -> str:
        return f"Model({self.id!r}, family={self.family!r}, num_layers={self.num_layers})"


ModelLike = Union[Model, str]


def load_model(
    model: PathLike,
    *,
    revision: Optional[str] = None,
    offline: Optional[bool] = None,
    config_dir: Optional[PathLike] = None,
) -> Model:
    """Reads a model: a folder holding config.json, a config.json, a bundled id (``models()``), a model in
    the Hugging Face cache, or a Hub id (fetched as the CLI fetches it; docs/guide.md). ``revision``: a
    branch, tag or commit; ``offline``: caches only (default: $HF_HUB_OFFLINE). Raises InputError."""
    text = os.fspath(model)
    native = _native.load_model(text, _config_dir(config_dir), revision or "", offline)
    return Model(native, text)


def _model(model: ModelLike, config_dir: Optional[PathLike]) -> Model:
    if isinstance(model, Model):
        if config_dir is not None:
            raise InputError("config_dir: give it to load_model, not with a loaded Model")
        return model
    if isinstance(model, (str, os.PathLike)):
        return load_model(model, config_dir=config_dir)
    raise InputError(f"model: expected a Model, a model id or a path, got {type(model).__name__}")


def _gpu_list(gpu: Union[str, Sequence[str], None], what: str) -> List[str]:
    if gpu is None:
        return []
    if isinstance(gpu, str):
        return [name.strip() for name in gpu.split(",")] if "," in gpu else [gpu]
    names = list(gpu)
    if not all(isinstance(name, str) for name in names):
        raise InputError(f"{what}: expected a preset name or a list of preset names")
    return names


def fit(
    model: ModelLike,
    *,
    gpu: Union[str, Sequence[str], None] = None,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    data_parallel_size: int = 1,
    decode_context_parallel_size: int = 1,
    enable_expert_parallel: bool = False,
    kv_cache_dtype: str = "auto",
    gpu_memory_utilization: Optional[float] = None,
    max_model_len: Union[int, str, None] = None,
    max_num_seqs: Optional[int] = None,
    max_num_batched_tokens: Optional[int] = None,
    block_size: Optional[int] = None,
    dtype: str = "auto",
    enforce_eager: bool = False,
    kv_cache_memory_bytes: Optional[int] = None,
    vllm_version: Optional[str] = None,
    gpu_memory_bytes: Optional[int] = None,
    config_dir: Optional[PathLike] = None,
    vllm_args: Optional[Sequence[str]] = None,
    **deployment: Any,
) -> FitResult:
    """One deployment's per-GPU budget and the largest ``--max-model-len``, as ``gpubudget fit`` answers.

    Arguments are vLLM's (``vllm serve --help``): ``gpu`` a preset (``gpus()``) or one per pipeline
    stage; ``gpu_memory_bytes`` the CUDA-visible total (overrides the preset's, or alone a custom GPU);
    ``gpu_memory_utilization`` default the profile's (0.9); ``max_model_len`` default the model's own,
    ``"auto"`` (or -1) for vLLM's auto-fit; ``vllm_version`` default the newest profile, other versions
    map to the nearest profile with a warning. Any other deployment field of docs/api.md (e.g.
    ``enable_prefix_caching``, ``mamba_cache_mode``, ``num_gpu_blocks_override``) by keyword.
    ``vllm_args`` instead of those: the launch line's words as vLLM takes them (``["-tp", "8",
    "--kv-cache-dtype", "fp8"]``, or a whole ``vllm serve`` line split into words, or
    ``parse_vllm_serve(line).vllm_args``), every engine argument the library reads (docs/api.md §vllm_args).
    Raises InputError for bad input; a deployment that does not fit is a result (``fits`` False).
    """
    m = _model(model, config_dir)
    fields: Dict[str, Any] = {
        "tensor_parallel_size": tensor_parallel_size,
        "pipeline_parallel_size": pipeline_parallel_size,
        "data_parallel_size": data_parallel_size,
        "decode_context_parallel_size": decode_context_parallel_size,
        "enable_expert_parallel": enable_expert_parallel,
        "kv_cache_dtype": kv_cache_dtype,
        "gpu_memory_utilization": gpu_memory_utilization,
        "max_model_len": max_model_len,
        "max_num_seqs": max_num_seqs,
        "max_num_batched_tokens": max_num_batched_tokens,
        "block_size": block_size,
        "dtype": dtype,
        "enforce_eager": enforce_eager,
        "kv_cache_memory_bytes": kv_cache_memory_bytes,
    }
    fields.update(deployment)
    words = _vllm_args(vllm_args)
    if words:
        given = sorted(k for k, v in fields.items() if k not in _FIT_DEFAULTS or v != _FIT_DEFAULTS[k])
        if given:
            raise InputError(f"gpubudget.fit: give vllm_args or the deployment keywords, not both ({', '.join(given)})")
        fields = {}
    answer = _native.fit(m._native, _gpu_list(gpu, "gpu"), gpu_memory_bytes, vllm_version or "", fields, words)
    return FitResult._from_native(answer)


# fit's deployment keywords at their defaults (its signature's): the keywords vllm_args leave unset.
_FIT_DEFAULTS: Dict[str, Any] = {
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "data_parallel_size": 1,
    "decode_context_parallel_size": 1,
    "enable_expert_parallel": False,
    "kv_cache_dtype": "auto",
    "gpu_memory_utilization": None,
    "max_model_len": None,
    "max_num_seqs": None,
    "max_num_batched_tokens": None,
    "block_size": None,
    "dtype": "auto",
    "enforce_eager": False,
    "kv_cache_memory_bytes": None,
}


def _vllm_args(words: Optional[Sequence[str]]) -> List[str]:
    """``vllm_args`` checked: a sequence of strings (a single string is refused: split it with
    ``parse_vllm_serve`` first)."""
    if words is None:
        return []
    if isinstance(words, (str, bytes)) or not all(isinstance(w, str) for w in words):
        raise InputError("vllm_args: expected a list of strings (the launch line's words); "
                         "parse_vllm_serve(line).vllm_args splits a whole line")
    return list(words)


@dataclass(frozen=True)
class LaunchLine:
    """A ``vllm serve`` line as gpubudget reads it (``parse_vllm_serve``): the model it serves, the engine
    arguments it gives (``arguments``: long flag -> value as written, ``True`` for a switch; ``environment``:
    the VLLM_* variables read), and ``vllm_args``, the same as words to pass on:
    ``fit(line.model, gpu="h200", vllm_args=line.vllm_args)``. ``notes`` are flags read with a caveat or
    not known; ``ignored`` those without an effect on GPU memory."""

    model: Optional[str]
    revision: Optional[str]
    vllm_args: Tuple[str, ...]
    arguments: Dict[str, Any]
    environment: Dict[str, str]
    notes: Tuple[Warning, ...]  #: each a str with .code
    ignored: Tuple[str, ...]


def parse_vllm_serve(line: Union[str, Sequence[str]], *, config_dir: Optional[PathLike] = None) -> LaunchLine:
    """Reads a launch line (``"vllm serve MODEL -tp 8 ..."``, with leading ``VAR=VALUE`` assignments, or its
    words as a list) as the library reads ``vllm_args``; nothing is loaded. InputError for a line that
    is no vLLM command or holds shell syntax beyond quoting."""
    if isinstance(line, str):
        document = _request("parse_vllm_args", None, config_dir, line=line)
    else:
        document = _request("parse_vllm_args", None, config_dir, vllm_args=_vllm_args(line))
    return LaunchLine(
        model=document["model"],
        revision=document["revision"],
        vllm_args=tuple(document["vllm_args"]),
        arguments=dict(document["arguments"]),
        environment=dict(document["environment"]),
        notes=_notices(document["notes"], document["note_codes"]),
        ignored=tuple(document["ignored"]),
    )


def _request(operation: str, loaded: Optional[Model], config_dir: Optional[PathLike], **fields: Any) -> Any:
    """Runs one C-ABI operation (docs/api.md), on the ``loaded`` model when given, and returns its
    document parsed."""
    request = {"operation": operation, **{k: v for k, v in fields.items() if v is not None}}
    directory = loaded.config_dir if loaded is not None else _config_dir(config_dir)
    if directory:
        request["config_dir"] = directory
    _status, document = _native.run(request, loaded._native if loaded is not None else None)
    return json.loads(document)


def _deployment_fields(fields: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    present = {k: v for k, v in fields.items() if v is not None}
    return present or None


def sweep(
    model: ModelLike,
    *,
    gpus: Optional[Sequence[str]] = None,
    tensor_parallel_sizes: Optional[Sequence[int]] = None,
    layouts: Optional[Sequence[Tuple[str, int]]] = None,
    pipeline_parallel_sizes: Sequence[int] = (1,),
    decode_context_parallel_sizes: Sequence[int] = (1,),
    kv_cache_dtypes: Optional[Sequence[str]] = None,
    gpu_memory_utilizations: Optional[Sequence[float]] = None,
    max_num_seqs: Optional[Sequence[int]] = None,
    max_model_len: Optional[int] = None,
    vllm_version: Optional[str] = None,
    config_dir: Optional[PathLike] = None,
    vllm_args: Optional[Sequence[str]] = None,
    target_len: Optional[int] = None,
    **deployment: Any,
) -> SweepResult:
    """Every combination of the axes, as ``gpubudget sweep --format json``; one SweepRow each.
    ``max_model_len`` is the length ``concurrency_at_target`` is for (default the model's maximum),
    as ``sweep --max-model-len``; ``target_len`` is its older name (a DeprecationWarning).
    ``layouts`` pairs each GPU with its TP size instead of ``gpus`` x ``tensor_parallel_sizes``, as
    ``sweep --layout h200:4,h100:8``: ``layouts=[("h200", 4), ("h100", 8)]``.
    ``deployment`` fields (docs/api.md) apply to every row."""
    if target_len is not None:
        if max_model_len is not None:
            raise ValueError("sweep: give max_model_len only (target_len is its older name)")
        warnings.warn("sweep: target_len is now max_model_len", DeprecationWarning, stacklevel=2)
        max_model_len = target_len
    m = _model(model, config_dir)
    document = _request(
        "sweep",
        m,
        None,
        gpus=None if gpus is None else list(_gpu_list(list(gpus), "gpus")),
        tensor_parallel_sizes=None if tensor_parallel_sizes is None else list(tensor_parallel_sizes),
        layouts=None if layouts is None else [{"gpu": gpu, "tensor_parallel_size": tp} for gpu, tp in layouts],
        pipeline_parallel_sizes=list(pipeline_parallel_sizes),
        decode_context_parallel_sizes=list(decode_context_parallel_sizes),
        kv_cache_dtypes=None if kv_cache_dtypes is None else list(kv_cache_dtypes),
        gpu_memory_utilizations=None if gpu_memory_utilizations is None else list(gpu_memory_utilizations),
        max_num_seqs=None if max_num_seqs is None else list(max_num_seqs),
        max_model_len=max_model_len,
        vllm_version=vllm_version,
        deployment=_deployment_fields(deployment),
        vllm_args=_vllm_args(vllm_args) or None,
    )
    result = SweepResult(SweepRow._from_row(row) for row in document)
    result._document = document
    return result


def plan(
    model: ModelLike,
    *,
    max_model_len: Optional[int] = None,
    concurrency: Optional[int] = None,
    gpus: Optional[Sequence[str]] = None,
    max_pipeline_parallel_size: Optional[int] = None,
    gpus_per_node: Optional[int] = None,
    vllm_version: Optional[str] = None,
    config_dir: Optional[PathLike] = None,
    vllm_args: Optional[Sequence[str]] = None,
    **deployment: Any,
) -> List[PlanAnswer]:
    """The cheapest deployment per GPU kind serving ``concurrency`` sequences of ``max_model_len``
    tokens (default one sequence of the model's maximum), as ``gpubudget plan --json``: one PlanAnswer
    per GPU (default every preset), those that serve it first. Layouts are node-shaped: TP within a
    node of ``gpus_per_node`` GPUs (default 8), pipeline stages of whole nodes."""
    m = _model(model, config_dir)
    document = _request(
        "plan",
        m,
        None,
        max_model_len=max_model_len,
        concurrency=concurrency,
        gpus=None if gpus is None else _gpu_list(list(gpus), "gpus"),
        max_pipeline_parallel_size=max_pipeline_parallel_size,
        gpus_per_node=gpus_per_node,
        vllm_version=vllm_version,
        deployment=_deployment_fields(deployment),
        vllm_args=_vllm_args(vllm_args) or None,
    )
    return [PlanAnswer._from_row(row) for row in document]


def weights(
    model: ModelLike,
    *,
    gpu: Optional[str] = None,
    by: str = "component",
    read_headers: bool = True,
    vllm_version: Optional[str] = None,
    config_dir: Optional[PathLike] = None,
    vllm_args: Optional[Sequence[str]] = None,
    **deployment: Any,
) -> WeightsReport:
    """The checkpoint's weights by component, layer or tensor (``by``) and what one GPU holds under the
    deployment's sharding (``tensor_parallel_size=...`` and the other fields), as ``gpubudget weights
    --json``; ``read_headers`` checks against the safetensors headers beside the config when present."""
    m = _model(model, config_dir)
    document = _request(
        "weights",
        m,
        None,
        gpu=gpu,
        by=by,
        read_headers=read_headers,
        vllm_version=vllm_version,
        deployment=_deployment_fields(deployment),
        vllm_args=_vllm_args(vllm_args) or None,
    )
    return WeightsReport._from_document(document)


def diagnose(
    log_path: PathLike,
    *,
    model: Optional[str] = None,
    gpu: Optional[str] = None,
    vllm_version: Optional[str] = None,
    kv_cache_dtype: Optional[str] = None,
    config_dir: Optional[PathLike] = None,
) -> Diagnosis:
    """Reads a vLLM startup log and says why it failed (or what it allocated) and what would fix it, as
    ``gpubudget diagnose --json``. ``model`` (an id or path) lets the what-if engine size the fixes."""
    document = _request(
        "diagnose",
        None,
        config_dir,
        log=os.fspath(log_path),
        model=None if model is None else os.fspath(model),
        gpu=gpu,
        vllm_version=vllm_version,
        kv_cache_dtype=kv_cache_dtype,
    )
    return Diagnosis._from_document(document)


def gpus(*, config_dir: Optional[PathLike] = None) -> List[Gpu]:
    """The GPU presets (``gpubudget gpus --json``)."""
    return [Gpu._from_row(g) for g in _request("gpus", None, config_dir)]


def models(*, config_dir: Optional[PathLike] = None) -> List[str]:
    """The bundled model ids, sorted (``gpubudget models --json``)."""
    return list(_request("models", None, config_dir))
