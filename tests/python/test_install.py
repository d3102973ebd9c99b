"""Installing Solar where users work (issue 41): the wheel scikit-build-core builds carries
the core extension, the header the native backend's kernels include, the arch specs and the
agent's spec copies, and the installed package finds each inside itself, not in the repo.

The wheel is built with the options of the Makefile's `build` target and its build dir
(build/cpp), so CMake reconfigures the tree `make build` made and ninja finds nothing to
compile: the wheel takes seconds, not the full compile of the core a separate build dir
would cost. It is installed into a fresh venv (no pip, no site packages of its own) that
gets its third-party packages (torch, NumPy, PyYAML, ml_dtypes) from this interpreter's
site-packages through a .pth file, added after the install: a user's environment that
already has torch, without copying 1 GB of torch into every test run. Only `solar` comes from
the wheel: the test checks that every file the package loads lies inside the fresh venv
(this site-packages' own `solar` entries, the editable install's, are reached only through
its own .pth hook, which a .pth-added directory never runs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import solar.execution

REPO = Path(__file__).resolve().parents[2]
# The CMake options of the Makefile's `build` target (checked below): any other set
# reconfigures build/cpp with other flags and recompiles the core, here and in the next
# `make build`.
CMAKE_FLAGS = [
    "-Ccmake.define.SOLAR_BUILD_TESTS=ON",
    "-Ccmake.define.SOLAR_BUILD_BENCH=ON",
    "-Ccmake.define.SOLAR_WERROR=ON",
    "-Ccmake.args=-GNinja",
    "-Cbuild.tool-args=-j2",
]
# What the installed package loads: each must come from the fresh venv.
PROBE = """
import solar, solar._core, solar.execution, solar.agent.prompt
print(solar.__file__)
print(solar._core.__file__)
print(solar.execution.include_dir())
print(solar.arch_dir())
print(solar.agent.prompt._spec_dir())
"""


def _run(cmd: list, **kwargs) -> str:
    """stdout of `cmd`, which must succeed (its output is the failure's message)."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_missing_kernel_header_is_why_the_native_backend_is_unavailable(monkeypatch):
    # Without solar/exec/numeric.h every kernel fails to compile; the reason validation
    # gives for running on the interpreter names the header and where it was looked for.
    monkeypatch.setattr(solar.execution, "include_dir", lambda: "")
    reason = solar.execution.native_unavailable()
    assert reason.startswith("the header its kernels include, solar/exec/numeric.h, is missing")
    assert "(looked in " in reason


@pytest.mark.native
def test_the_wheel_validates_on_the_native_backend_in_a_fresh_environment(tmp_path):
    makefile = (REPO / "Makefile").read_text()
    assert "BUILD := build/cpp" in makefile
    assert all(flag in makefile for flag in CMAKE_FLAGS), "the Makefile's build options changed"

    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip"]
    _run(
        [*pip, "wheel", str(REPO), "-q", "--no-build-isolation", "--no-deps", "-w", str(dist)]
        + [f"-Cbuild-dir={REPO / 'build' / 'cpp'}", *CMAKE_FLAGS]
    )
    (wheel,) = dist.glob("solar_sol-*.whl")

    env = tmp_path / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env)])
    python = env / "bin" / "python"
    _run([*pip, "--python", str(python), "install", "-q", "--no-index", "--no-deps", str(wheel)])
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site_packages = Path(_run([str(python), "-c", purelib]).strip())
    (site_packages / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "workloads" / "level2" / "linear_bias_matmul.py", work)
    child_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SOLAR_ARCH_DIR")}
    child_env["SOLAR_CACHE_DIR"] = str(tmp_path / "kernels")

    # 5 paths, each inside the fresh venv: the package, its extension, the kernels' include
    # directory, the arch specs and the agent's copies of docs/ir.md and examples/ir.
    loaded = _run([str(python), "-c", PROBE], cwd=work, env=child_env).splitlines()
    assert len(loaded) == 5
    assert [Path(p).resolve().is_relative_to(env.resolve()) for p in loaded] == [True] * 5

    # Figure 2's PyTorch program, validated by running its lowered IR with compiled kernels:
    # the line the Makefile's build prints, "validation: full — 1 output(s) match PyTorch at
    # the program's own sizes (native backend)".
    out = _run(
        [str(env / "bin" / "solar"), "analyze", "linear_bias_matmul.py"], cwd=work, env=child_env
    )
    assert re.search(r"(?m)^\s*validation: full .*\(native backend\)$", out), out
