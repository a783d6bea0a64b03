"""Builds the gpubudget Python package: `pip install --no-build-isolation --no-index .` (docs/python.md).

The extension module gpubudget._native is built by the project's own CMake (python/CMakeLists.txt) in
build/python-package, as a Release build of the library alone; the bundled configs (GPU presets, vLLM
profiles, models) are installed with the package as gpubudget/configs. Environment: CMAKE_ARGS (extra
-D options), CMAKE_BUILD_PARALLEL_LEVEL (jobs; default every core), GPUBUDGET_BUILD_TYPE (default
Release).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CMAKE_BUILD_DIR = ROOT / "build" / "python-package"


def project_version() -> str:
    """project(gpubudget VERSION x.y.z) of CMakeLists.txt: the library's version is the package's."""
    match = re.search(r"project\(gpubudget\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if match is None:
        raise RuntimeError("CMakeLists.txt: no project(gpubudget VERSION ...)")
    return match.group(1)


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures and builds the target gpubudget_python, then copies the module where setuptools wants it."""

    def build_extension(self, ext: Extension) -> None:
        options = [
            f"-DCMAKE_BUILD_TYPE={os.environ.get('GPUBUDGET_BUILD_TYPE', 'Release')}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DGPUBUDGET_BUILD_PYTHON=ON",
            "-DGPUBUDGET_BUILD_CLI=OFF",
            "-DGPUBUDGET_BUILD_TOOLS=OFF",
            "-DGPUBUDGET_BUILD_TESTS=OFF",
            "-DGPUBUDGET_BUILD_BENCHMARKS=OFF",
            "-DGPUBUDGET_BUILD_CALIBRATION=OFF",
            "-DGPUBUDGET_BUILD_C_API=OFF",
            "-DGPUBUDGET_INSTALL=OFF",
        ] + shlex.split(os.environ.get("CMAKE_ARGS", ""))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(CMAKE_BUILD_DIR), *options])
        subprocess.check_call(["cmake", "--build", str(CMAKE_BUILD_DIR), "--target", "gpubudget_python", "--parallel", jobs])
        built = sorted((CMAKE_BUILD_DIR / "python" / "gpubudget").glob("_native*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one built module in {CMAKE_BUILD_DIR}/python/gpubudget, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


class BuildPyWithConfigs(build_py):
    """The pure-Python package, and configs/ as gpubudget/configs (the package's data)."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "gpubudget" / "configs"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(ROOT / "configs", target)


setup(
    version=project_version(),
    packages=["gpubudget"],
    package_dir={"gpubudget": "python/gpubudget"},
    package_data={"gpubudget": ["py.typed", "*.pyi"]},
    ext_modules=[CMakeExtension("gpubudget._native")],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithConfigs},
    zip_safe=False,
)
