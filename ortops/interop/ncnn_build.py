"""Build the real ncnn runtime, with the layers ortops' ``ortops.ncnn`` ops need, into this
Python environment: ``ortops install-oracle ncnn`` (the PyPI wheel has no ArgMax layer).

:func:`install` checks the tools (:func:`find_tools`: cmake, a C++ compiler, ninja or make,
Python's headers; none is installed unasked), downloads ncnn's source package with pip, pinned by
its file's sha256 (:data:`SDIST_URL`; the package stamps today's date as its version, so pip
refuses ``ncnn==1.0.20261020``), builds the Python module with CMake (:func:`cmake_options`),
installs it with ``pip install --no-deps`` and checks it in a child interpreter (:func:`check`).
Steps, options and the reasons for them: docs/conformance.md. Nothing runs on import; Python and
pip are the running interpreter's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

from .. import processes

__all__ = ["NCNN_RELEASE", "NCNN_VERSION", "SDIST_URL", "SDIST_SHA256", "MissingTools", "BuildError", "Tools",
           "find_tools", "needed_layers", "layers_in_source", "cmake_options", "install", "installed_release",
           "Installed", "describe_exit", "check"]

#: The ncnn release the oracle is built from (the PyPI version of its source package).
NCNN_RELEASE = "1.0.20261020"
#: ncnn's own version number of that release (CMake's ``NCNN_VERSION``).
NCNN_VERSION = NCNN_RELEASE.rsplit(".", 1)[1]
#: sha256 of ``ncnn-1.0.20261020.tar.gz`` on PyPI (checked by pip).
SDIST_SHA256 = "ad8cdd63e9755cfa8e23b9b6d9ce46156077d80298a89e7c3ba325ffccfca200"
#: The source package's file on PyPI, pinned by its hash.
SDIST_URL = ("https://files.pythonhosted.org/packages/b7/50/32b5172afe7d3e0dce410b7d8f4a5b7b84b942a0d69affbaedf669de52bc/"
             f"ncnn-{NCNN_RELEASE}.tar.gz#sha256={SDIST_SHA256}")

_OFF = ("NCNN_VULKAN", "NCNN_BUILD_TOOLS", "NCNN_BUILD_EXAMPLES", "NCNN_BUILD_BENCHMARK", "NCNN_BUILD_TESTS",
        "NCNN_INSTALL_SDK")


class MissingTools(RuntimeError):
    """A tool the build needs is missing; the message names each one and how to get it."""


class BuildError(RuntimeError):
    """A step of the build failed; the message names the step and quotes its output's end."""


class Tools(NamedTuple):
    """The tools found for the build."""

    cmake: str
    cxx: str
    generator: str  # "Ninja" or "Unix Makefiles"
    python_include: str


def _python_headers() -> str | None:
    include = sysconfig.get_paths().get("include", "")
    return include if include and Path(include, "Python.h").is_file() else None


def find_tools(which: Callable[[str], str | None] = shutil.which, environ=os.environ) -> Tools:
    """The build tools, or :class:`MissingTools` naming every missing one.

    Parameters
    ----------
    which : callable, default shutil.which
        How a program is looked up on PATH.
    environ : mapping, default os.environ
        ``CXX``, if set, names the C++ compiler (as CMake reads it).

    Raises
    ------
    MissingTools
        cmake, a C++ compiler (``$CXX``, c++, g++ or clang++), ninja or make, or Python's
        headers (``Python.h``) is missing.
    """
    missing = []
    cmake = which("cmake")
    if cmake is None:
        missing.append("cmake (pip install cmake, or the system package, e.g. apt-get install cmake)")
    compilers = [environ["CXX"]] if environ.get("CXX") else ["c++", "g++", "clang++"]
    cxx = next((found for found in map(which, compilers) if found), None)
    if cxx is None:
        missing.append(f"a C++ compiler ({' or '.join(compilers)} on PATH; e.g. apt-get install g++)")
    ninja, make = which("ninja"), which("make")
    if ninja is None and make is None:
        missing.append("ninja or make (pip install ninja, or apt-get install ninja-build / make)")
    include = _python_headers()
    if include is None:
        missing.append(f"Python's headers (Python.h, e.g. apt-get install python3-dev) for {sys.executable}")
    if missing:
        raise MissingTools("building the ncnn oracle needs " + "; ".join(missing))
    return Tools(cmake, cxx, "Ninja" if ninja else "Unix Makefiles", include)


def needed_layers() -> tuple[str, ...]:
    """The ncnn layers the oracle needs: the op type of every ``ortops.ncnn`` op."""
    from ..ops import NCNN_DOMAIN, OPS

    return tuple(op.op_type for op in OPS if op.domain == NCNN_DOMAIN)


def layers_in_source(source: Path) -> tuple[str, ...]:
    """Every layer ncnn's ``src/CMakeLists.txt`` adds (``ncnn_add_layer(Name ...)``)."""
    text = (Path(source) / "src" / "CMakeLists.txt").read_text(encoding="utf8")
    return tuple(re.findall(r"^\s*ncnn_add_layer\((\w+)", text, flags=re.MULTILINE))


def cmake_options(all_layers: Sequence[str], wanted: Sequence[str] = (), python: str = sys.executable) -> list[str]:
    """The ``-D`` options of the build: the ``wanted`` layers on, every other layer off; no Vulkan,
    tools, examples, benchmark, tests or SDK; ncnn's run-time CPU dispatch on (without it the
    module holds every instruction set the compiler knows and dies with SIGILL on older CPUs).

    Raises
    ------
    BuildError
        A wanted layer is not in ``all_layers`` (another ncnn release).
    """
    wanted = tuple(wanted) or needed_layers()
    lower = {name.lower() for name in all_layers}
    absent = [name for name in wanted if name.lower() not in lower]
    if absent:
        raise BuildError(f"ncnn {NCNN_RELEASE}'s source has no layer {', '.join(absent)}")
    on = {name.lower() for name in wanted}
    return [
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DNCNN_VERSION={NCNN_VERSION}",
        "-DNCNN_PYTHON=ON",
        "-DNCNN_RUNTIME_CPU=ON",
        *(f"-D{option}=OFF" for option in _OFF),
        f"-DPython_EXECUTABLE={python}", f"-DPython3_EXECUTABLE={python}", f"-DPYTHON_EXECUTABLE={python}",
        *(f"-DWITH_LAYER_{name}={'ON' if name in on else 'OFF'}" for name in sorted(lower)),
    ]


def _run(step: str, command: Sequence[str], log: Callable[[str], None], **kwargs) -> None:
    shown = [str(c) for c in command]
    off = [c for c in shown if c.startswith("-DWITH_LAYER_") and c.endswith("=OFF")]
    if off:  # one line, not a hundred layer names
        shown = [c for c in shown if c not in off] + [f"(and -DWITH_LAYER_<name>=OFF for the other {len(off)} layers)"]
    log(f"{step}: {' '.join(shown)}")
    done = subprocess.run([str(c) for c in command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", **kwargs)
    if done.returncode != 0:
        tail = "\n".join(done.stdout.strip().splitlines()[-25:])
        raise BuildError(f"{step} failed (exit status {done.returncode}):\n{tail}")


def _download(directory: Path, log) -> Path:
    _run("download", [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                      "--dest", directory, f"ncnn @ {SDIST_URL}"], log)
    found = sorted(directory.glob("ncnn-*.tar.gz"))
    if not found:
        raise BuildError(f"download: pip saved no ncnn source package in {directory}")
    return found[0]


def _check_hash(archive: Path, error: type[Exception] = BuildError) -> None:
    """``error`` unless ``archive`` is the pinned source package (its sha256)."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise error(f"{archive} is not ncnn-{NCNN_RELEASE}.tar.gz from PyPI: sha256 {digest}, "
                         f"expected {SDIST_SHA256}")


def _extract(sdist: Path, directory: Path) -> Path:
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(directory, filter="data")
        else:  # Python < 3.11.4: no filters; the archive's hash was checked by pip
            archive.extractall(directory)
    roots = [p for p in directory.iterdir() if p.is_dir() and (p / "CMakeLists.txt").is_file()]
    if len(roots) != 1:
        raise BuildError(f"{sdist.name} does not hold one ncnn source tree")
    return roots[0]


class Installed(NamedTuple):
    """What a child interpreter found of the ncnn module (:func:`installed_release`)."""

    version: str | None  # the imported ncnn's version; None when it does not import
    missing: list[str]  # the needed layers it lacks (all of them when it does not import)
    error: str | None = None  # why it does not import (see describe_exit), else None


def describe_exit(status: int, stderr: str = "") -> str:
    """Why a child interpreter that ran ``import ncnn`` failed: a signal's name and meaning (for
    SIGILL its likely cause), else the exit status and the last line of ``stderr``."""
    if status < 0:
        meaning = signal.strsignal(-status) or "unknown signal"
        text = f"the ncnn module was {processes.describe_exit(status)} ({meaning}) on import"
        if -status == signal.SIGILL:
            text += ("; likely cause: it uses an instruction this CPU lacks (it was built on or for another "
                     "machine, or with ncnn's run-time CPU dispatch off): rebuild it here with "
                     "'ortops install-oracle ncnn'")
        return text
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "no message")
    return f"the ncnn module does not import (exit status {status}: {last})"


def installed_release(python: str = sys.executable) -> Installed:
    """What ``python`` finds of the ncnn module, checked in a child interpreter (the module may
    die on import, e.g. SIGILL on a CPU it was not built for)."""
    layers = list(needed_layers())
    code = ("import ncnn\n"
            "def absent(name):\n"
            "    try:\n"
            "        return ncnn.create_layer(name) is None\n"
            "    except Exception:\n"
            "        return True\n"
            f"missing = [n for n in {layers!r} if absent(n)]\n"
            "print(ncnn.__version__); print(','.join(missing))\n")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, errors="replace")
    if done.returncode != 0:
        return Installed(None, layers, describe_exit(done.returncode, done.stderr))
    lines = done.stdout.splitlines() + ["", ""]
    return Installed(lines[0].strip(), [n for n in lines[1].split(",") if n])


def install(*, sdist: str | os.PathLike | None = None, build_dir: str | os.PathLike | None = None,
            jobs: int | None = None, log: Callable[[str], None] = print) -> str:
    """Build the ncnn oracle and install it into this environment; return the installed version.

    Parameters
    ----------
    sdist : path, optional
        ncnn's source package ``ncnn-1.0.20261020.tar.gz``, downloaded before (its sha256 must
        be the pinned one); default: pip downloads it (hash-pinned).
    build_dir : path, optional
        Where to extract and build (kept afterwards); default: a temporary directory, removed.
    jobs : int, optional
        Parallel compile jobs (default: the number of CPUs).
    log : callable
        Gets one line per step.

    Raises
    ------
    FileNotFoundError
        When ``sdist`` is given and is not a file.
    ValueError
        When ``sdist`` is given and is not the pinned source package (another sha256).
    MissingTools
        Before anything is downloaded, when a build tool is missing.
    BuildError
        When a step fails (its output's last lines are in the message), or when the installed
        module lacks a needed layer.
    """
    if sdist is not None:
        if not Path(sdist).is_file():
            raise FileNotFoundError(f"--sdist {sdist} is not a file")
        _check_hash(Path(sdist), ValueError)
    tools = find_tools()
    log(f"tools: cmake {tools.cmake}, C++ {tools.cxx}, generator {tools.generator}, headers {tools.python_include}")
    jobs = jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="ortops-ncnn-") as scratch:
        work = Path(build_dir) if build_dir else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        archive = Path(sdist) if sdist else _download(work / "download", log)
        if not sdist:
            _check_hash(archive)
        source = _extract(archive, work / "source")
        options = cmake_options(layers_in_source(source))
        build = work / "build"
        env = {**os.environ, "CXX": tools.cxx}
        _run("configure", [tools.cmake, "-G", tools.generator, "-S", source, "-B", build, *options], log, env=env)
        _run("build", [tools.cmake, "--build", build, "--target", "pyncnn", "--parallel", str(jobs)], log, env=env)
        _run("install", [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall",
                         source / "python"], log)
    version = check()
    log(f"installed ncnn {version} with the layers {', '.join(needed_layers())}")
    return version


def check(python: str = sys.executable) -> str:
    """The version of the ncnn module ``python`` imports, checked in a child interpreter.

    Raises
    ------
    BuildError
        The module does not import, or dies on import (the signal's name and likely cause:
        :func:`describe_exit`), or lacks a needed layer.
    """
    version, missing, error = installed_release(python)
    if version is None:
        raise BuildError(f"check: {error}")
    if missing:
        raise BuildError(f"check: the installed ncnn {version} has no layer {', '.join(missing)}")
    return version
