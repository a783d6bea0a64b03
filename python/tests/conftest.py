"""Fixtures of the Python package's tests (docs/testing.md, "Python").

Run by ctest (python.pytest) with the package of the build tree on PYTHONPATH, GPUBUDGET_CLI naming the
CLI built beside it (the figures are compared with its --json documents) and GPUBUDGET_CONFIG_DIR the
source tree's configs. Run by hand after `pip install .`, set GPUBUDGET_CLI to a gpubudget binary;
without it the comparisons are skipped, unless GPUBUDGET_REQUIRE_CLI=1 (as ctest sets it).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


class Cli:
    """The gpubudget CLI: each call's exit code, its stdout parsed as JSON (when it is), and stderr."""

    def __init__(self, path: str) -> None:
        self.path = path

    def run(self, *args: str):
        done = subprocess.run([self.path, *args], capture_output=True, text=True, timeout=600, check=False)
        document = None
        if done.returncode in (0, 1) and done.stdout.strip():
            document = json.loads(done.stdout)
        return done.returncode, document, done.stderr

    def error_message(self, stderr: str) -> str:
        """The message of the CLI's error line ("gpubudget: MESSAGE")."""
        lines = [line for line in stderr.splitlines() if line.startswith("gpubudget: ")]
        assert lines, f"no error line in: {stderr!r}"
        return lines[-1][len("gpubudget: "):]


@pytest.fixture(scope="session")
def cli() -> Cli:
    path = os.environ.get("GPUBUDGET_CLI")
    if not path:
        if os.environ.get("GPUBUDGET_REQUIRE_CLI") == "1":
            pytest.fail("GPUBUDGET_CLI is not set: the comparisons with the CLI cannot run")
        pytest.skip("GPUBUDGET_CLI is not set (a gpubudget binary to compare with)")
    return Cli(path)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
