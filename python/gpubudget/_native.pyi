"""Type stubs of gpubudget._native, the C++ extension module (python/native_module.cpp).

Use the package's functions (gpubudget.fit, ...): these are their implementation, and may change.
"""

from typing import Any, Dict, List, Optional, Tuple

__version__: str

class InputError(ValueError):
    """Bad input: a file, a field or a value gpubudget refuses; the message is the CLI's."""

class Model:
    @property
    def source(self) -> str: ...
    @property
    def architecture(self) -> str: ...
    @property
    def model_type(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def num_layers(self) -> int: ...
    @property
    def derived_max_model_len(self) -> int: ...
    @property
    def unmodelled_config_keys(self) -> List[str]: ...
    @property
    def generic_assumptions(self) -> List[str]: ...
    @property
    def config_dir(self) -> str: ...

class FitAnswer:
    def summary(self) -> Dict[str, Any]:
        """The figures of gpubudget.FitResult (sizes in bytes), named as in the fit document."""
    def document(self) -> str:
        """The `gpubudget fit --json` document, remedies included; computed once, GIL released."""

def load_model(model: str, config_dir: str, revision: str, offline: Optional[bool]) -> Model: ...
def fit(
    model: Model,
    gpus: List[str],
    gpu_memory_bytes: Optional[int],
    vllm_version: str,
    deployment: Dict[str, Any],
    vllm_args: List[str],
) -> FitAnswer: ...
def run(request: Dict[str, Any], model: Optional[Model]) -> Tuple[int, str]:
    """One C-ABI request (docs/api.md) with `model` preloaded when given: (status, document)."""
