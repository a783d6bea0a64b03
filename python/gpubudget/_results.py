"""The results gpubudget's functions return: frozen dataclasses, sizes as ``Bytes`` (an ``int``).

Every result's ``to_dict()`` is the document the CLI prints with ``--json`` for the same question
(docs/cli.md names each field); the dataclass fields are the figures most callers read, named as
there.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Dict, List, Optional, Tuple

GIB = 1 << 30
MIB = 1 << 20


class Bytes(int):
    """A size in bytes: an ``int``, with ``.gib`` and ``.mib`` (binary units, as vLLM's logs print)."""

    __slots__ = ()

    @property
    def gib(self) -> float:
        """The size in GiB (2**30 bytes)."""
        return int(self) / GIB

    @property
    def mib(self) -> float:
        """The size in MiB (2**20 bytes)."""
        return int(self) / MIB

    def __repr__(self) -> str:
        return f"Bytes({int(self)})"


class Warning(str):  # noqa: A001 (gpubudget.Warning; the builtin stays builtins.Warning)
    """A warning or a note: its sentence (a ``str``, as before codes existed) with ``.code``, the stable
    name of what it says (docs/warnings.md lists them), for tools that should not match English."""

    __slots__ = ("code",)
    code: str

    def __new__(cls, text: str, code: str) -> "Warning":
        self = super().__new__(cls, text)
        self.code = code
        return self

    def __getnewargs__(self) -> Tuple[str, str]:
        # copy, pickle and dataclasses.asdict rebuild it with both arguments.
        return (str(self), self.code)

    def __repr__(self) -> str:
        return f"Warning({str(self)!r}, code={self.code!r})"


def _notices(texts: Any, codes: Any) -> Tuple[Warning, ...]:
    """The document's sentences with their parallel codes (``warnings`` / ``warning_codes``)."""
    texts, codes = list(texts), list(codes)
    if len(texts) != len(codes):
        raise ValueError(f"{len(texts)} sentences but {len(codes)} codes")
    return tuple(Warning(t, c) for t, c in zip(texts, codes))


def _keep(result: Any, name: str, value: Any) -> Any:
    """Attaches what ``to_dict()`` needs to a frozen result as a plain attribute, not a dataclass field:
    ``dataclasses.asdict`` (and so ``pandas.DataFrame(rows)``) sees only the figures."""
    object.__setattr__(result, name, value)
    return result


def _bytes_fields(cls: type, values: Dict[str, Any]) -> Any:
    """``cls(**values)`` with every ``*_bytes`` and ``bytes_per_token`` value as ``Bytes``."""
    return cls(**{k: Bytes(v) if (k.endswith("_bytes") or k == "bytes_per_token") else v for k, v in values.items()})


@dataclasses.dataclass(frozen=True)
class PerGpu:
    """The binding GPU's budget, bytes (docs/cli.md, ``per_gpu``)."""

    requested_bytes: Bytes  #: gpu_memory_utilization x the GPU's memory
    weights_bytes: Bytes  #: the weights this GPU holds
    activation_peak_bytes: Bytes  #: the profile run's torch peak above the weights (estimated)
    encoder_profile_bytes: Bytes  #: a multimodal encoder's profile pass (estimated), 0 without one
    non_torch_bytes: Bytes  #: CUDA context, NCCL and other non-torch memory (estimated)
    cudagraph_bytes: Bytes  #: CUDA-graph memory charged to the KV budget (estimated), 0 when not charged
    kv_cache_bytes: Bytes  #: what is left for the KV cache
    kv_cache_uncertainty_bytes: Bytes  #: +/- swing of kv_cache_bytes from the estimated overheads


@dataclasses.dataclass(frozen=True)
class KvCache:
    """The KV cache of the binding GPU (docs/cli.md, ``kv_cache``)."""

    bytes_per_token: Bytes  #: KV bytes per token on one GPU, every layer
    block_bytes: Bytes  #: bytes of one KV block (block_size tokens) on one GPU
    num_blocks: int  #: blocks vLLM allocates
    tokens: int  #: num_blocks x block_size: vLLM's "GPU KV cache size"


@dataclasses.dataclass(frozen=True)
class Request:
    """The requested (or default) ``max_model_len`` judged against the KV cache (docs/cli.md, ``request``)."""

    max_model_len: int  #: the length judged: --max-model-len, or the model's own maximum
    needed_bytes: Bytes  #: KV bytes one sequence of that length needs on the binding GPU
    fits: bool  #: the length fits the KV cache and vLLM would start
    kv_fits: bool  #: the length fits the KV cache
    auto_fitted: bool  #: max_model_len was "auto" (-1) and vLLM would fit it
    vllm_error: Optional[str]  #: the error vLLM would raise at startup, or None


@dataclasses.dataclass(frozen=True)
class FitResult:
    """One deployment's answer: does the model fit, and how long can its context be.

    ``fits`` False is an answer, not an error: ``remedies`` then lists what would make it fit.
    """

    fits: bool  #: the requested length fits and vLLM would start
    max_model_len: int  #: the largest --max-model-len vLLM would accept, tokens
    max_model_len_range: Tuple[int, int]  #: that length with the overheads' uncertainty (low, high)
    vllm_would_start: bool  #: False when something other than memory stops vLLM (start_blocker)
    start_blocker: Optional[str]
    gpu: str  #: the GPU preset (of the binding stage)
    kv_cache_dtype: str  #: the KV dtype vLLM would use ("auto" resolved)
    block_size: int  #: tokens per KV block
    vllm_profile: str  #: the vLLM version profile the figures follow (configs/vllm/)
    per_gpu: PerGpu
    kv_cache: KvCache
    request: Request
    warnings: Tuple[Warning, ...]  #: each a str with .code
    notes: Tuple[Warning, ...]  #: how vLLM resolved settings (--explain), each a str with .code

    @classmethod
    def _from_native(cls, answer: Any) -> "FitResult":
        s = answer.summary()
        result = cls(
            fits=s["fits"],
            max_model_len=s["max_model_len"],
            max_model_len_range=s["max_model_len_range"],
            vllm_would_start=s["vllm_would_start"],
            start_blocker=s["start_blocker"],
            gpu=s["gpu"],
            kv_cache_dtype=s["kv_cache_dtype"],
            block_size=s["block_size"],
            vllm_profile=s["vllm_profile"],
            per_gpu=_bytes_fields(PerGpu, s["per_gpu"]),
            kv_cache=_bytes_fields(KvCache, s["kv_cache"]),
            request=_bytes_fields(Request, s["request"]),
            warnings=_notices(s["warnings"], s["warning_codes"]),
            notes=_notices(s["notes"], s["note_codes"]),
        )
        return _keep(result, "_answer", answer)

    def to_json(self) -> str:
        """The document ``gpubudget fit ... --json`` prints (with the remedies when it does not fit)."""
        return self._answer.document()

    def to_dict(self) -> Dict[str, Any]:
        """``to_json()`` parsed: equal to the CLI's ``--json`` document."""
        return json.loads(self.to_json())

    @functools.cached_property
    def remedies(self) -> Tuple["Remedy", ...]:
        """What would make it fit (empty when it fits), as the CLI lists them; computed on first use."""
        return tuple(Remedy(**{**r, "flags": tuple(r["flags"])}) for r in self.to_dict()["remedies"])


@dataclasses.dataclass(frozen=True)
class Remedy:
    """One change that makes a deployment fit, or comes closest (docs/cli.md, ``remedies``)."""

    change: str  #: the change in words
    flags: Tuple[str, ...]  #: the vLLM flags that make it
    max_model_len: int  #: the largest length with the change
    reaches_target: bool  #: whether that reaches the requested length
    vllm_would_start: bool
    caveat: Optional[str]


class _Document:
    """A result that keeps the CLI's document it was read from."""

    _document: Any

    def to_dict(self) -> Any:
        """The CLI's ``--json`` document for the same question (a copy)."""
        return json.loads(json.dumps(self._document))

    @classmethod
    def _from_row(cls, row: Dict[str, Any]) -> Any:
        """The dataclass of ``row``'s fields of the same names (None where absent), sizes as Bytes."""
        values = {f.name: row.get(f.name) for f in dataclasses.fields(cls)}
        for name, value in values.items():
            if name.endswith("_bytes") and value is not None:
                values[name] = Bytes(value)
        return _keep(cls(**values), "_document", row)


@dataclasses.dataclass(frozen=True)
class SweepRow(_Document):
    """One scenario of a sweep (docs/cli.md, ``sweep --format json``); None where the row is invalid."""

    gpu: str
    tensor_parallel_size: int
    pipeline_parallel_size: int
    decode_context_parallel_size: int
    kv_cache_dtype: str
    gpu_memory_utilization: Optional[float]
    max_num_seqs: Optional[int]
    valid: bool  #: False when vLLM would refuse the combination (error says why)
    error: Optional[str]
    max_model_len: Optional[int]
    kv_cache_tokens: Optional[int]
    concurrency_at_target: Optional[float]  #: sequences of target_len the KV cache holds at once
    weights_bytes: Optional[Bytes]
    kv_cache_bytes: Optional[Bytes]
    vllm_would_start: Optional[bool]



class SweepResult(Tuple[SweepRow, ...]):
    """The sweep's rows, in the CLI's order: iterate it, index it, or ``pandas.DataFrame(result)``."""

    _document: List[Any]

    def to_dict(self) -> List[Any]:
        """The CLI's ``sweep --format json`` document (a list, one element per row)."""
        return json.loads(json.dumps(self._document))


@dataclasses.dataclass(frozen=True)
class PlanAnswer(_Document):
    """The cheapest deployment on one GPU kind that serves the plan, or why there is none."""

    gpu: str
    found: bool
    gpus: Optional[int]  #: GPUs needed (TP x PP)
    tensor_parallel_size: Optional[int]
    pipeline_parallel_size: Optional[int]
    max_num_seqs: Optional[int]
    max_concurrency: Optional[float]
    weights_bytes: Optional[Bytes]
    kv_cache_bytes: Optional[Bytes]
    why_not: Optional[str]
    rejected_layouts: List[str]  #: the layouts tried before (cheapest first), each with why it does not serve



@dataclasses.dataclass(frozen=True)
class Diagnosis(_Document):
    """What a vLLM startup log says went wrong, and what would fix it (docs/cli.md, ``diagnose --json``)."""

    root_cause: str
    summary: str
    startup_outcome: str
    vllm_version: Optional[str]
    model: Optional[str]
    max_model_len: Optional[int]
    needed_kv_cache_bytes: Optional[Bytes]
    available_kv_cache_bytes: Optional[Bytes]
    estimated_max_model_len: Optional[int]
    remedies: Tuple[str, ...]
    notes: Tuple[Warning, ...]  #: each a str with .code

    @classmethod
    def _from_document(cls, doc: Dict[str, Any]) -> "Diagnosis":
        def size(key: str) -> Optional[Bytes]:
            return None if doc.get(key) is None else Bytes(doc[key])

        return _keep(cls(
            root_cause=doc["root_cause"],
            summary=doc["summary"],
            startup_outcome=doc["startup_outcome"],
            vllm_version=doc["vllm_version"],
            model=doc["model"],
            max_model_len=doc["max_model_len"],
            needed_kv_cache_bytes=size("needed_kv_cache_bytes"),
            available_kv_cache_bytes=size("available_kv_cache_bytes"),
            estimated_max_model_len=doc["estimated_max_model_len"],
            remedies=tuple(doc["remedies"]),
            notes=_notices(doc["notes"], doc["note_codes"]),
        ), "_document", doc)


@dataclasses.dataclass(frozen=True)
class WeightsReport(_Document):
    """The checkpoint's weights and what one GPU holds (docs/cli.md, ``weights --json``)."""

    checkpoint_bytes: Bytes  #: every tensor of the checkpoint as vLLM loads it
    per_gpu_bytes: Bytes  #: the binding worker's weights
    by: str  #: the grouping of ``components``: "component", "layer" or "tensor"
    components: Tuple[Tuple[str, Bytes], ...]  #: (name, bytes on the binding GPU)

    @classmethod
    def _from_document(cls, doc: Dict[str, Any]) -> "WeightsReport":
        return _keep(cls(
            checkpoint_bytes=Bytes(doc["checkpoint_bytes"]),
            per_gpu_bytes=Bytes(doc["per_gpu"]["weights_bytes"]),
            by=doc["by"],
            components=tuple((c["name"], Bytes(c["bytes"])) for c in doc["components"]),
        ), "_document", doc)


@dataclasses.dataclass(frozen=True)
class Gpu(_Document):
    """A GPU preset (configs/gpus/, docs/gpus.md)."""

    name: str
    device_name: str
    memory_bytes: Bytes  #: CUDA-visible memory
    memory_estimated: bool  #: True when the total is not measured on the device
