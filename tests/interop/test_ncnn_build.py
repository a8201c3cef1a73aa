"""The ncnn oracle's build (``ortops install-oracle ncnn``): its tool check and its CMake options.

The build itself (download, compile, install) is run by CI's ncnn step and checked by
tests/conformance/test_ncnn_oracle.py against the module it installs.
"""

from __future__ import annotations

import pytest

from ortops import cli
from ortops.interop import ncnn_build
from ortops.ops import NCNN_DOMAIN, OPS


def _which(missing: set[str]):
    """A PATH on which exactly the programs in ``missing`` are absent."""
    return lambda name: None if name in missing else f"/usr/bin/{name}"


def test_all_tools_present():
    tools = ncnn_build.find_tools(_which(set()), environ={})
    assert tools.cmake == "/usr/bin/cmake" and tools.generator == "Ninja" and tools.cxx == "/usr/bin/c++"


def test_make_is_used_without_ninja():
    assert ncnn_build.find_tools(_which({"ninja"}), environ={}).generator == "Unix Makefiles"


@pytest.mark.parametrize(("missing", "named"), [
    ({"cmake"}, "cmake"),
    ({"c++", "g++", "clang++"}, "a C++ compiler"),
    ({"ninja", "make"}, "ninja or make"),
])
def test_a_missing_tool_is_named(missing, named):
    with pytest.raises(ncnn_build.MissingTools) as info:
        ncnn_build.find_tools(_which(missing), environ={})
    message = str(info.value)
    assert named in message
    others = {"cmake": "cmake (", "a C++ compiler": "a C++ compiler", "ninja or make": "ninja or make"}
    assert [n for n, text in others.items() if text in message] == [named]  # only the missing one is named


def test_every_missing_tool_is_named_at_once():
    with pytest.raises(ncnn_build.MissingTools) as info:
        ncnn_build.find_tools(_which({"cmake", "c++", "g++", "clang++", "ninja", "make"}), environ={})
    for named in ("cmake", "a C++ compiler", "ninja or make"):
        assert named in str(info.value)


def test_cxx_names_the_compiler():
    found = ncnn_build.find_tools(_which({"c++", "g++", "clang++"}), environ={"CXX": "my-cxx"})
    assert found.cxx == "/usr/bin/my-cxx"
    with pytest.raises(ncnn_build.MissingTools, match="my-cxx"):
        ncnn_build.find_tools(_which({"my-cxx"}), environ={"CXX": "my-cxx"})


def test_the_cli_exits_2_naming_the_missing_tools(tmp_path, monkeypatch, capsys):
    """An empty PATH: nothing is downloaded, the message names what to install, exit status 2."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    status = cli.main(["install-oracle", "ncnn", "--build-dir", str(tmp_path / "build")])
    err = capsys.readouterr().err
    assert status == 2
    assert "cmake" in err and "C++ compiler" in err and "ninja or make" in err
    assert not (tmp_path / "build").exists()


def test_an_sdist_that_is_not_the_pinned_file_is_a_usage_error(tmp_path, capsys):
    """Checked before the tools and before anything is made (another file exited 1, "a build step
    failed", after making the build folder)."""
    missing = tmp_path / "ncnn.tar.gz"
    status = cli.main(["install-oracle", "ncnn", "--sdist", str(missing), "--build-dir", str(tmp_path / "build")])
    assert status == 2 and f"--sdist {missing} is not a file" in capsys.readouterr().err
    assert not (tmp_path / "build").exists()
    other = tmp_path / "other.tar.gz"  # a file, but not the pinned source package
    other.write_bytes(b"not ncnn")
    status = cli.main(["install-oracle", "ncnn", "--sdist", str(other), "--build-dir", str(tmp_path / "build")])
    assert status == 2 and f"{other} is not ncnn-" in capsys.readouterr().err
    assert not (tmp_path / "build").exists()


def test_needed_layers_are_the_ncnn_ops():
    assert ncnn_build.needed_layers() == tuple(op.op_type for op in OPS if op.domain == NCNN_DOMAIN)
    assert "ArgMax" in ncnn_build.needed_layers()


def test_cmake_options_turn_on_only_the_needed_layers():
    options = ncnn_build.cmake_options(["AbsVal", "ArgMax", "Softmax"], ["ArgMax"], python="/py")
    assert "-DWITH_LAYER_argmax=ON" in options
    assert "-DWITH_LAYER_absval=OFF" in options and "-DWITH_LAYER_softmax=OFF" in options
    assert f"-DNCNN_VERSION={ncnn_build.NCNN_RELEASE.split('.')[-1]}" in options
    assert "-DNCNN_VULKAN=OFF" in options and "-DNCNN_PYTHON=ON" in options
    assert "-DPython3_EXECUTABLE=/py" in options


def test_cmake_options_keep_run_time_cpu_dispatch_on():
    """Dispatch off compiles in every instruction set the compiler knows (AVX-512 included), and
    the module dies with SIGILL on a CPU without them."""
    options = ncnn_build.cmake_options(["ArgMax"], ["ArgMax"])
    assert "-DNCNN_RUNTIME_CPU=ON" in options and "-DNCNN_RUNTIME_CPU=OFF" not in options


def test_a_layer_missing_from_the_source_is_an_error():
    with pytest.raises(ncnn_build.BuildError, match="ArgMax"):
        ncnn_build.cmake_options(["AbsVal", "Softmax"], ["ArgMax"])


def test_layers_are_read_from_the_source(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "include(x)\nncnn_add_layer(AbsVal)\nncnn_add_layer(ArgMax OFF)\n# ncnn_add_layer(Commented)\n"
        "  ncnn_add_layer(BatchNorm)\n")
    assert ncnn_build.layers_in_source(tmp_path) == ("AbsVal", "ArgMax", "BatchNorm")


def test_the_pin_is_one_release():
    assert ncnn_build.NCNN_RELEASE.startswith("1.0.")
    assert ncnn_build.NCNN_RELEASE in ncnn_build.SDIST_URL and ncnn_build.SDIST_SHA256 in ncnn_build.SDIST_URL


def test_installed_release_of_an_interpreter_without_ncnn():
    """An interpreter that cannot import ncnn: no version, every layer missing, the exit status."""
    found, lacking, error = ncnn_build.installed_release("/bin/false")
    assert found is None and lacking == list(ncnn_build.needed_layers())
    assert error == "the ncnn module does not import (exit status 1: no message)"


#: An ncnn module that dies on import as a module built for another CPU does (no core file).
_SIGILL_MODULE = ("import os, resource, signal\n"
                  "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
                  "os.kill(os.getpid(), signal.SIGILL)\n")


@pytest.fixture
def sigill_ncnn(tmp_path):
    """A folder whose ``ncnn`` module kills its interpreter with SIGILL on import."""
    (tmp_path / "ncnn.py").write_text(_SIGILL_MODULE)
    return tmp_path


def test_a_module_killed_by_sigill_is_reported_with_the_signal_and_its_cause(sigill_ncnn, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(sigill_ncnn))
    found, lacking, error = ncnn_build.installed_release()
    assert found is None and lacking == list(ncnn_build.needed_layers())
    assert error.startswith("the ncnn module was killed by SIGILL (Illegal instruction) on import")
    assert "an instruction this CPU lacks" in error and "ortops install-oracle ncnn" in error
    with pytest.raises(ncnn_build.BuildError, match=r"^check: the ncnn module was killed by SIGILL"):
        ncnn_build.check()


def test_describe_exit_names_other_signals_without_the_cpu_hint():
    assert ncnn_build.describe_exit(-11) == "the ncnn module was killed by SIGSEGV (Segmentation fault) on import"
    assert ncnn_build.describe_exit(1, "Traceback ...\nImportError: libfoo.so\n") == (
        "the ncnn module does not import (exit status 1: ImportError: libfoo.so)")


def test_conformance_names_the_signal_of_a_module_that_dies_on_import(sigill_ncnn, monkeypatch, capsys, tmp_path):
    """A module built before, on another machine: ``--oracle ncnn`` says why it cannot judge."""
    from ortops.conformance import ncnn_oracle

    monkeypatch.setenv("PYTHONPATH", str(sigill_ncnn))
    ncnn_oracle._installed.cache_clear()
    try:
        status = cli.main(["conformance", "--oracle", "ncnn", "--ops", "ArgMax", "--no-progress",
                           "--out", str(tmp_path / "report")])
    finally:
        ncnn_oracle._installed.cache_clear()
    captured = capsys.readouterr()
    assert status == 2
    assert "killed by SIGILL (Illegal instruction)" in captured.err + captured.out
    assert "an instruction this CPU lacks" in captured.err + captured.out
