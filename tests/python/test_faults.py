"""Faults (docs/execution.md, Faults): damaged kernel caches are rebuilt, a missing compiler or
an unusable cache is an error of kind `compile` (never a silent fallback), Ctrl-C stops a
native run, `solar batch` survives a damaged or shared output file, malformed input files
are clean user errors, `solar inputs` has a budget, and inputs are drawn valid for their
role. Each regression test fails on 5dd0d0b, the commit before these fixes; the controls
(marked so) pass there too."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import solar
from subprocesses import sigint_default

ROOT = Path(__file__).resolve().parents[2]

AFFINE = """
@kernel
def affine(X: Tensor("R,C")) -> Tensor("R,C"):
    Y = Tensor(R=X.shape[0], C=X.shape[1])
    for r in Dim("R", parallel=True):
        for c in Dim("C"):
            Y[r, c] = X[r, c] * 2.0 + 1.0
    return Y
DIMS = {"R": 3, "C": 5}
def model(x: Tensor("R,C")):
    return affine(x)
"""
# x = 0, 0.25, ..., 3.5 (exact in fp32), so y = 2x + 1 is exact: 1, 1.5, ..., 8.
X = (np.arange(15, dtype=np.float32) / 4).reshape(3, 5)
# Run in a fresh process: prints "ok" when y == 2x + 1 exactly, else the error.
RUN_AFFINE = """
import sys, numpy as np, solar
x = (np.arange(15, dtype=np.float32) / 4).reshape(3, 5)
try:
    y = solar.run(sys.argv[1], {"x": x}, backend="native")["out0"]
except solar.UserError as e:
    print(e.diagnostics[0].kind, e.diagnostics[0].message)
    sys.exit(1)
print("ok" if np.array_equal(y, 2 * x + 1) else "wrong")
"""


def execute(*args, **kw):
    from solar.execution import execute as run

    return run(*args, **kw)


def write(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def env_with(**kw) -> dict:
    env = dict(os.environ)
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def cli(*args, env=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def run_affine(prog: Path, cache: Path, **env):
    return subprocess.run(
        [sys.executable, "-c", RUN_AFFINE, str(prog)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env_with(SOLAR_CACHE_DIR=cache, **env),
    )


# --- the kernel cache ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache holding the one compiled kernel of AFFINE (and the program)."""
    base = tmp_path_factory.mktemp("affine")
    prog = write(base, AFFINE)
    cache = base / "kernels"
    r = run_affine(prog, cache)
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr
    return prog, cache


def _truncate(p: Path):
    os.truncate(p, p.stat().st_size // 2)


def _zero(p: Path):
    p.write_bytes(bytes(p.stat().st_size))


def _garbage(p: Path):
    p.write_bytes(np.random.default_rng(0).bytes(p.stat().st_size))


def _wrong_size(p: Path):
    p.write_bytes(p.read_bytes() + bytes(64))


DAMAGE = {"truncate": _truncate, "zero": _zero, "garbage": _garbage, "wrong-size": _wrong_size}


@pytest.mark.native
@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_cached_kernel_is_rebuilt(tmp_path, built_cache, how):
    # Before: a truncated object was mapped and ran into SIGBUS; a zeroed, overwritten or
    # extended one failed dlopen, a permanent "internal error" that was never rebuilt.
    prog, src = built_cache
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    [so] = cache.glob("*.so")
    DAMAGE[how](so)
    r = run_affine(prog, cache)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["ok"]
    # The record names an object of the size it records (the rebuilt one).
    meta = (cache / (so.name.split("-")[0] + ".meta")).read_text().split()
    assert meta[0] == "solar-kernel/2"
    rebuilt = cache / meta[meta.index("object") + 1]
    assert rebuilt.stat().st_size == int(meta[meta.index("bytes") + 1])


@pytest.mark.native
@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_kernel_is_never_loaded(tmp_path, built_cache, how):
    # With no compiler on PATH to rebuild it, a damaged object is not loaded (no SIGBUS, no
    # internal error): the run fails with kind `compile`, while the intact cache needs no
    # compiler.
    prog, src = built_cache
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    (tmp_path / "empty").mkdir()
    no_compiler = {"PATH": tmp_path / "empty"}
    intact = run_affine(prog, cache, **no_compiler)
    assert intact.returncode == 0 and intact.stdout.split() == ["ok"], intact.stdout
    [so] = cache.glob("*.so")
    DAMAGE[how](so)
    r = run_affine(prog, cache, **no_compiler)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("compile ") and "cannot run 'c++': No such file" in r.stdout


@pytest.mark.native
def test_a_garbage_cache_record_is_rebuilt(tmp_path, built_cache):
    prog, src = built_cache
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    [meta] = cache.glob("*.meta")
    meta.write_bytes(b"\xff\x00 not a record")
    r = run_affine(prog, cache)
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr
    assert meta.read_text().startswith("solar-kernel/2\n")


# --- a private, verified kernel cache (docs/execution.md, The cache) -----------------------
# Each test below fails on the commit before the cache was made private: a planted object was
# loaded (its constructor wrote the canary), files were created 0777 under umask 000, a
# record that is a FIFO hung the run and one linked to /dev/zero grew without bound, and a
# directory at the object's name was a permanent compile error.

# An object an attacker would plant: its constructor creates the file $SOLAR_TEST_CANARY
# names (each test its own), its entry point does nothing (a run that loads it returns
# zeros, not 2x + 1).
CANARY = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <cstdint>
__attribute__((constructor)) static void planted() {
  const char* path = getenv("SOLAR_TEST_CANARY");
  int fd = path ? open(path, O_WRONLY | O_CREAT, 0600) : -1;
  if (fd >= 0) close(fd);
}
extern "C" int solar_kernel(void* const*, const int64_t*, const double*, const volatile bool*) {
  return 0;
}
"""


@pytest.fixture(scope="module")
def canary_object(tmp_path_factory):
    """The bytes of a compiled canary object."""
    base = tmp_path_factory.mktemp("canary")
    (base / "canary.cpp").write_text(CANARY)
    subprocess.run(
        ["c++", "-shared", "-fPIC", base / "canary.cpp", "-o", base / "canary.so"],
        check=True,
        timeout=120,
    )
    return (base / "canary.so").read_bytes()


def _fnv_record_hash(data: bytes) -> str:
    # The content hash of the record format before this change (solar-kernel/1): FNV-1a 64
    # twice, as the old hex_hash computed it, so that a planted entry is consistent there too.
    h1, h2, prime, mask = 1469598103934665603, 1099511628211 * 31, 1099511628211, 2**64 - 1
    for b in data:
        h1 = ((h1 ^ b) * prime) & mask
        h2 = ((h2 ^ b) * prime + 7) & mask
    return f"{h1:016x}{h2:016x}"


def plant(cache: Path, payload: bytes) -> tuple[Path, Path]:
    """Replaces the one kernel of `cache` by `payload` with a record consistent with it (in
    the record format the cache holds), as anyone able to write the directory could."""
    [meta] = cache.glob("*.meta")
    key = meta.stem
    for so in cache.glob("*.so"):
        so.unlink()
    if meta.read_text().startswith("solar-kernel/1\n"):
        digest, field = _fnv_record_hash(payload), "hash"
    else:
        digest, field = hashlib.sha256(payload).hexdigest(), "sha256"
    magic = meta.read_text().split()[0]
    obj = cache / f"{key}-{digest[:16]}.so"
    obj.write_bytes(payload)
    meta.write_text(f"{magic}\nobject {obj.name}\nbytes {len(payload)}\n{field} {digest}\n")
    return meta, obj


@pytest.mark.native
def test_a_cache_dir_others_can_write_is_refused_and_nothing_planted_loads(
    tmp_path, built_cache, canary_object
):
    # A directory of mode 0777 (as a shared /tmp/solar-kernels that another user created
    # first) holding a planted object with a consistent record: refused by message, with
    # the chmod to fix it; the object's constructor never runs.
    prog, src = built_cache
    payload, canary = canary_object, tmp_path / "canary"
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    plant(cache, payload)
    cache.chmod(0o777)
    r = run_affine(prog, cache, SOLAR_TEST_CANARY=canary)
    assert not canary.exists(), "the planted object was loaded"
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("compile ")
    assert f"the kernel cache directory '{cache}' is writable by its group or others" in r.stdout
    assert "(mode 0777)" in r.stdout
    from solar.execution import _core

    reason = _core.native_unavailable_reason(str(cache), "")
    assert reason.startswith(f"the kernel cache directory '{cache}' is writable by its group")
    inputs = _affine_inputs(tmp_path)
    e = cli(
        "run",
        prog,
        "--inputs",
        inputs,
        env=env_with(SOLAR_CACHE_DIR=cache, SOLAR_TEST_CANARY=canary),
    )
    assert e.returncode == 1 and "error[compile]" in e.stderr and "Traceback" not in e.stderr
    assert f"chmod 700 '{cache}'" in e.stderr
    assert not canary.exists()


@pytest.mark.native
def test_a_cache_dir_of_another_user_is_refused(tmp_path, built_cache):
    # uid 65534 (nobody) owns the directory: its owner could plant objects, so it is refused.
    if os.geteuid() != 0:
        pytest.skip("giving the directory to another user (chown) needs root")
    prog, src = built_cache
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    os.chown(cache, 65534, 65534)
    r = run_affine(prog, cache)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"the kernel cache directory '{cache}' is owned by uid 65534, not by this user" in (
        r.stdout
    )


def _untrusted_group_writable(meta: Path, obj: Path):
    meta.chmod(0o660)
    obj.chmod(0o660)


def _untrusted_other_owner(meta: Path, obj: Path):
    os.chown(meta, 65534, 65534)
    os.chown(obj, 65534, 65534)


def _untrusted_other_owner_object(meta: Path, obj: Path):
    os.chown(obj, 65534, 65534)


UNTRUSTED = {
    "group-writable": _untrusted_group_writable,
    "another-owner": _untrusted_other_owner,
    "another-owner-object": _untrusted_other_owner_object,
}


@pytest.mark.native
@pytest.mark.parametrize("how", UNTRUSTED)
def test_a_planted_entry_that_is_not_the_users_own_is_never_loaded(
    tmp_path, built_cache, canary_object, how
):
    # In a private directory, an entry (record and object consistent with each other) that
    # others may write, or that another user owns, is treated as absent: rebuilt, replaced,
    # and the run gives 2x + 1; the planted constructor never runs.
    if how.startswith("another-owner") and os.geteuid() != 0:
        pytest.skip("giving a file to another user (chown) needs root")
    prog, src = built_cache
    payload, canary = canary_object, tmp_path / "canary"
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    meta, obj = plant(cache, payload)
    UNTRUSTED[how](meta, obj)
    r = run_affine(prog, cache, SOLAR_TEST_CANARY=canary)
    assert not canary.exists(), "the planted object was loaded"
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr
    assert meta.stat().st_uid == os.geteuid() and meta.stat().st_mode & 0o777 == 0o600


@pytest.mark.native
def test_a_planted_object_whose_hash_differs_from_the_record_is_never_loaded(
    tmp_path, built_cache, canary_object
):
    # Control (the hash was checked before too): the canary put in place of the object,
    # under the name and size the record gives, fails the record's hash and is rebuilt.
    prog, src = built_cache
    payload, canary = canary_object, tmp_path / "canary"
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    [meta] = cache.glob("*.meta")
    record = meta.read_text().split()
    obj = cache / record[record.index("object") + 1]
    obj.write_bytes(payload[: int(record[record.index("bytes") + 1])].ljust(obj.stat().st_size))
    r = run_affine(prog, cache, SOLAR_TEST_CANARY=canary)
    assert not canary.exists()
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr


@pytest.mark.native
def test_under_umask_000_the_cache_is_private(tmp_path):
    # The directory and its parents Solar creates are 0700, the source, object and record
    # 0600, whatever the umask (before: 0777 and 0666).
    prog = write(tmp_path, AFFINE)
    cache = tmp_path / "made" / "kernels"
    r = subprocess.run(
        [sys.executable, "-c", f"import os; os.umask(0)\n{RUN_AFFINE}", str(prog)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env_with(SOLAR_CACHE_DIR=cache),
    )
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr
    assert (cache.stat().st_mode & 0o777, cache.parent.stat().st_mode & 0o777) == (0o700, 0o700)
    modes = {p.suffix: p.stat().st_mode & 0o777 for p in cache.iterdir()}
    assert modes == {".cpp": 0o600, ".so": 0o600, ".meta": 0o600}


def _meta_to_dev_zero(meta: Path):
    meta.unlink()
    meta.symlink_to("/dev/zero")


def _meta_fifo(meta: Path):
    meta.unlink()
    os.mkfifo(meta)


def _object_directory(meta: Path):
    record = meta.read_text().split()
    obj = meta.parent / record[record.index("object") + 1]
    obj.unlink()
    (obj / "inside").mkdir(parents=True)


ODD_ENTRIES = {
    "meta-to-dev-zero": _meta_to_dev_zero,
    "meta-fifo": _meta_fifo,
    "object-directory": _object_directory,
}


@pytest.mark.native
@pytest.mark.parametrize("how", ODD_ENTRIES)
def test_an_entry_that_is_not_a_regular_file_is_rebuilt(tmp_path, built_cache, how):
    # Before: a record linked to /dev/zero was read without end, a FIFO record blocked the
    # run for ever, and a directory at the object's name failed every run with a compile
    # error saying the cache could not be written. Now each is rebuilt within seconds
    # (20 s is the hang guard) and replaced by a regular file.
    prog, src = built_cache
    cache = tmp_path / "kernels"
    shutil.copytree(src, cache)
    [meta] = cache.glob("*.meta")
    ODD_ENTRIES[how](meta)
    r = subprocess.run(
        [sys.executable, "-c", RUN_AFFINE, str(prog)],
        capture_output=True,
        text=True,
        timeout=20,
        env=env_with(SOLAR_CACHE_DIR=cache),
    )
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stdout + r.stderr
    assert meta.is_file() and not meta.is_symlink()
    record = meta.read_text().split()
    assert (cache / record[record.index("object") + 1]).is_file()


def test_python_and_the_core_default_to_one_per_user_cache(tmp_path, monkeypatch):
    # With XDG_CACHE_HOME set (absolute), both use $XDG_CACHE_HOME/solar/kernels: the core,
    # given no directory, creates exactly the one Python names, 0700 (before: the core used
    # the shared <temp>/solar-kernels). A relative XDG_CACHE_HOME is ignored, as the XDG
    # spec says (before: Python used the relative path "rel/solar/kernels").
    from solar.execution import _core, cache_dir

    monkeypatch.delenv("SOLAR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == str(tmp_path / "solar" / "kernels")
    assert _core.native_unavailable_reason("", "") == ""
    assert (tmp_path / "solar" / "kernels").stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", "rel")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == str(tmp_path / "home" / ".cache" / "solar" / "kernels")


def _affine_inputs(tmp_path: Path) -> Path:
    np.savez(tmp_path / "in.npz", x=X)
    return tmp_path / "in.npz"


# --- compile failures ----------------------------------------------------------------------


@pytest.mark.native
def test_a_missing_compiler_is_a_compile_error_and_leaves_no_state(tmp_path, monkeypatch):
    # Before: the run fell back to the interpreter silently and a process-wide flag kept
    # every later native run in the interpreter.
    prog = write(tmp_path, AFFINE)
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setenv("SOLAR_CXX", "/nonexistent/c++")
    with pytest.raises(solar.UserError) as e:
        execute(prog, {"x": X}, backend="native")
    d = e.value.diagnostics[0]
    assert d.kind == "compile"
    assert "could not compile kernel 'affine'" in d.message
    assert "cannot run '/nonexistent/c++': No such file or directory" in d.message
    assert "--backend interpreter" in d.hint
    monkeypatch.delenv("SOLAR_CXX")
    ex = execute(prog, {"x": X}, backend="native")  # the same process, a compiler again
    assert ex.backend == "native" and (ex.native_calls, ex.interpreted_calls) == (1, 0)
    assert np.array_equal(ex.outputs["out0"], 2 * X + 1)


@pytest.mark.native
def test_a_failing_compile_reports_the_compilers_message(tmp_path, monkeypatch):
    prog = write(tmp_path, AFFINE)
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setenv("SOLAR_CXX", "c++ -include /nonexistent/solar-missing.h")
    with pytest.raises(solar.UserError) as e:
        execute(prog, {"x": X}, backend="native")
    d = e.value.diagnostics[0]
    assert d.kind == "compile" and "the compiler exited with status 1" in d.message
    assert "/nonexistent/solar-missing.h: No such file or directory" in d.message


@pytest.mark.native
def test_an_unusable_cache_dir_is_a_compile_error_on_the_command_line(tmp_path):
    # Before: `solar run` fell back to the interpreter and printed "with the native backend".
    prog = write(tmp_path, AFFINE)
    np.savez(tmp_path / "in.npz", x=X)
    (tmp_path / "a-file").write_text("")
    cache = tmp_path / "a-file" / "kernels"  # under a regular file: cannot be created
    r = cli("run", prog, "--inputs", tmp_path / "in.npz", env=env_with(SOLAR_CACHE_DIR=cache))
    assert r.returncode == 1, r.stdout
    assert "error[compile]" in r.stderr and f"kernel cache directory '{cache}'" in r.stderr
    assert "SOLAR_CACHE_DIR" in r.stderr and "Traceback" not in r.stderr
    assert "native backend" not in r.stdout
    assert solar.execution._core.native_unavailable_reason(str(cache), "") == (
        f"cannot create the kernel cache directory '{cache}': Not a directory"
    )


def test_the_interpreter_run_names_its_backend(tmp_path):
    # Control: the interpreter was always named right.
    prog = write(tmp_path, AFFINE)
    np.savez(tmp_path / "in.npz", x=X)
    r = cli("run", prog, "--inputs", tmp_path / "in.npz", "--backend", "interpreter")
    assert r.returncode == 0 and "with the interpreter backend" in r.stdout, r.stderr


# --- Ctrl-C --------------------------------------------------------------------------------

# Not a plain contraction (exp of an operand): the native backend runs it as loops, under
# OpenMP (its accesses are proven in range, so with bounds checks too). 1024 x 2048 x 2048 =
# 4.3e9 points: more than 2 s on any machine here even with every core (an exp and a
# multiply-add per point).
LONG = """
@kernel
def expmm(A: Tensor("M,K"), B: Tensor("K,N")) -> Tensor("M,N"):
    C = Tensor(M=A.shape[0], N=B.shape[1])
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += exp(A[m, k] * B[k, n])
    return C
DIMS = {"M": 4096, "K": 2048, "N": 2048}
def model(a: Tensor("M,K"), b: Tensor("K,N")):
    return expmm(a, b)
"""
# The same with A's index 2k under k < K // 2, in range but not proven (the guard would have
# to be doubled): with bounds checks it is tested at run time, on one thread.
LONG_CHECKED = LONG.replace(
    "C[m, n] += exp(A[m, k] * B[k, n])",
    'if k < size("K") // 2:\n                    C[m, n] += exp(A[m, 2 * k] * B[k, n])',
)


def _interrupt(cmd: list, env: dict, ready) -> tuple[int, float, str]:
    """Starts `cmd`, waits until `ready()`, sends SIGINT; (exit status, seconds from the
    signal to the exit, stderr)."""
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=sigint_default,
    )
    deadline = time.monotonic() + 120
    while not ready() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = p.communicate(timeout=120)
    return p.returncode, time.monotonic() - sent, err


@pytest.mark.native
@pytest.mark.parametrize("checks", ["checked-at-run-time", "bounds-checked", "unchecked"])
def test_ctrl_c_stops_a_native_kernel_within_a_second(tmp_path, checks):
    # Before: the kernel ran to its end (parallel loops never polled the flag) and the
    # command exited 0. The kernel is compiled first (tiny sizes: the same source), then a
    # run of several seconds is interrupted 2 s after it started.
    prog = write(tmp_path, LONG_CHECKED if checks == "checked-at-run-time" else LONG)
    cache = tmp_path / "kernels"
    env = env_with(SOLAR_CACHE_DIR=cache)
    flags = ["--no-bounds-check"] if checks == "unchecked" else []
    # K = 5: at K = 3, 2k would be proven in range (k <= 0), a kernel of its own.
    small = ["--dim", "M=2", "--dim", "K=5", "--dim", "N=4"]
    assert cli("inputs", prog, "--out", tmp_path / "s.npz", *small).returncode == 0
    r = cli("run", prog, "--inputs", tmp_path / "s.npz", *small, *flags, env=env)
    assert r.returncode == 0 and "native backend" in r.stdout, r.stderr
    assert cli("inputs", prog, "--out", tmp_path / "in.npz").returncode == 0
    cmd = [sys.executable, "-m", "solar.cli", "run", prog, "--inputs", tmp_path / "in.npz"]
    start = time.monotonic()
    rc, after, err = _interrupt(
        [*map(str, cmd), "--max-seconds", "1e9", *flags], env, lambda: time.monotonic() > start + 2
    )
    assert rc == 130 and "solar: interrupted" in err, err
    assert after < 1.0
    # One kernel, compiled at the small sizes; a failed check would return 1 from it.
    (source,) = cache.glob("*.cpp")
    assert ("return 1;" in source.read_text()) == (checks == "checked-at-run-time")


@pytest.mark.native
def test_ctrl_c_stops_the_compiler(tmp_path):
    # Before: the compiler ran under system(), which ignores SIGINT in the caller: the
    # kernel was compiled and run, and the command exited 0.
    prog = write(tmp_path, LONG)
    cache = tmp_path / "kernels"
    assert cli("inputs", prog, "--out", tmp_path / "in.npz").returncode == 0
    cmd = [sys.executable, "-m", "solar.cli", "run", prog, "--inputs", tmp_path / "in.npz"]
    rc, after, err = _interrupt(
        [*map(str, cmd), "--max-seconds", "1e9"],
        env_with(SOLAR_CACHE_DIR=cache),
        lambda: any(cache.glob("*.cpp")),  # written just before the compiler starts
    )
    assert rc == 130 and "solar: interrupted" in err, err
    assert after < 1.0
    assert not list(cache.glob("*.meta"))  # nothing was recorded as built
    assert sorted(p.suffix for p in cache.iterdir()) == [".cpp"]  # no partial object, no log


# In a fresh process: compile at tiny sizes, then run the long program while a timer thread
# sends SIGINT after 2 s; print the seconds from the signal to KeyboardInterrupt, the wakeup
# fd left behind (-1: restored) and whether a second run afterwards still works.
API_INTERRUPT = """
import os, signal, sys, threading, time
import numpy as np
from solar.execution import execute
prog = sys.argv[1]
small = {"M": 2, "K": 3, "N": 4}
rng = np.random.default_rng(0)
def inputs(d):
    a = rng.random((d["M"], d["K"]), np.float32)
    return {"a": a, "b": rng.random((d["K"], d["N"]), np.float32)}
execute(prog, inputs(small), dims=small, max_seconds=1e9)
sent = []
def interrupt():
    sent.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)
threading.Timer(2.0, interrupt).start()
try:
    execute(prog, inputs({"M": 4096, "K": 2048, "N": 2048}), max_seconds=1e9)
    print("finished")
except KeyboardInterrupt:
    print("interrupted", round(time.monotonic() - sent[0], 3))
print("wakeup fd", signal.set_wakeup_fd(-1))
out = execute(prog, inputs(small), dims=small, max_seconds=1e9).outputs["out0"]
print("again", out.shape)
shapes = []
def worker():
    shapes.append(execute(prog, inputs(small), dims=small).outputs["out0"].shape)
t = threading.Thread(target=worker)
t.start(); t.join()
print("thread", shapes)
"""


@pytest.mark.native
def test_ctrl_c_stops_an_api_call_and_leaves_no_handler_behind(tmp_path):
    # The binding installs no signal handler and keeps no flag (issue 15): Python's own
    # handler catches SIGINT, its wakeup fd carries it to the call's token, and the call
    # raises KeyboardInterrupt within a second; the wakeup fd is restored (-1) and the next
    # call runs, on a worker thread too.
    prog = write(tmp_path, LONG)
    r = subprocess.run(
        [sys.executable, "-c", API_INTERRUPT, str(prog)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env_with(SOLAR_CACHE_DIR=tmp_path / "kernels"),
        preexec_fn=sigint_default,
    )
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == 4, r.stdout + r.stderr
    word, seconds = lines[0].split()
    assert word == "interrupted" and float(seconds) < 1.0, lines
    # Off the main thread nothing is watched (Python takes no wakeup fd there): it runs.
    assert lines[1:] == ["wakeup fd -1", "again (2, 4)", "thread [(2, 4)]"]


# --- solar batch ---------------------------------------------------------------------------

SCALE = """
@kernel
def scale(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i] * {k}
    return Y
DIMS = {{"N": 64}}
def model(x: Tensor("N")):
    return scale(x)
"""


def _programs(tmp_path: Path, n: int = 3) -> Path:
    d = tmp_path / "progs"
    d.mkdir()
    for k in range(n):
        (d / f"p{k}.py").write_text(SCALE.format(k=k + 2))
    return d


def _lines(out: Path) -> list[dict]:
    return [json.loads(ln) for ln in out.read_text().splitlines()]


def test_batch_repairs_a_truncated_last_line(tmp_path):
    # Before: every later run ended in a JSONDecodeError traceback and the cut result was
    # lost (the next result was appended to the cut line).
    progs = _programs(tmp_path)
    out = tmp_path / "r.jsonl"
    r = cli("batch", progs, "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    lines = out.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    cut = json.loads(lines[-1])["source"]
    out.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # a crash mid-write
    r = cli("batch", progs, "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "removed a last line cut short (40 bytes)" in r.stderr
    assert "Traceback" not in r.stderr and "analysed 3 of 3 workloads" in r.stdout
    results = _lines(out)  # every line parses
    assert sorted(x["source"] for x in results) == sorted(str(p) for p in progs.glob("*.py"))
    assert [x["source"] for x in results][-1] == cut  # run again, written once


def test_batch_never_writes_a_workload_twice(tmp_path):
    progs = _programs(tmp_path, 2)
    out = tmp_path / "r.jsonl"
    one = progs / "p0.py"
    # The same program named twice, and through a second spelling of its path.
    r = cli("batch", one, progs, f"{progs}/../progs/p0.py", "--out", out)
    assert r.returncode == 0, r.stderr
    assert len(_lines(out)) == 2
    r = cli("batch", progs, "--out", out)  # everything done: nothing written
    assert r.returncode == 0 and "resuming: 2 of 2 already in" in r.stderr
    assert len(_lines(out)) == 2


def test_a_second_batch_on_one_output_refuses(tmp_path):
    # Before: two batches on one --out both ran every workload and wrote it twice.
    import fcntl

    progs = _programs(tmp_path, 1)
    out = tmp_path / "r.jsonl"
    with out.open("a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # as a running batch holds it
        r = cli("batch", progs, "--out", out)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"another `solar batch` is writing '{out}'" in r.stderr
    assert out.read_text() == ""
    r = cli("batch", progs, "--out", out)  # released: runs
    assert r.returncode == 0 and len(_lines(out)) == 1, r.stderr


def test_batch_summary_never_crashes_on_odd_records():
    from solar.batch import summary

    odd = [
        {"source": "a.py", "status": "ok", "validation": "full", "seconds_wall": "slow"},
        {"source": "b.py", "status": "error", "seconds_wall": None},
        {"source": "c.py", "status": "ok", "measurement": {"margin": 1.0}},
        {"status": "ok"},
        7,
        {"source": "d.py", "status": "error", "stage": "capture", "seconds_wall": float("nan")},
    ]
    text = summary(odd)
    assert text.splitlines()[0] == "analysed 2 of 4 workloads"
    assert "failures by stage: capture 1, unknown 1" in text
    assert "measured: no summary (a measurement record is malformed" in text


# --- malformed input files -----------------------------------------------------------------


def _npy_bytes(shape: tuple, data: bytes) -> bytes:
    """A .npy file of fp32 values: the header (magic included) claiming `shape`, then
    `data`."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f4", "fortran_order": False, "shape": shape}
    )
    return buf.getvalue() + data


def _bad_npz(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / f"{kind}.npz"
    if kind == "not-a-zip":
        p.write_text("x,y\n1,2\n")
    elif kind == "npy":
        np.save(tmp_path / "a.npy", X)
        (tmp_path / "a.npy").rename(p)
    elif kind == "huge-header":  # claims 2^33 fp32 values (32 GiB), holds 60 bytes
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("x.npy", _npy_bytes((2**33,), bytes(60)))
    elif kind == "pickled":
        np.savez(p, x=np.array([{"a": 1}], dtype=object))
    elif kind == "cut-zip":
        np.savez(p, x=X)
        p.write_bytes(p.read_bytes()[:100])
    elif kind == "directory":
        p.mkdir()
    return p


@pytest.mark.parametrize(
    "kind, message",
    [
        ("not-a-zip", "it is not an .npz file (not a zip archive)"),
        ("npy", "it is a .npy file (one unnamed array), not an .npz archive"),
        ("huge-header", "array 'x' claims shape [8589934592] (32 GiB) but holds 60 bytes"),
        ("pickled", "array 'x' holds Python objects, not numbers"),
        ("cut-zip", "it is not an .npz file (not a zip archive)"),
        ("directory", "it is a directory"),
    ],
)
def test_a_malformed_npz_is_a_user_error_naming_the_file(tmp_path, kind, message):
    # Before: a .npy or a huge header ended in a Python traceback.
    prog = write(tmp_path, AFFINE)
    bad = _bad_npz(tmp_path, kind)
    for args in (
        ("run", prog, "--inputs", bad, "--backend", "interpreter"),
        ("validate", prog, "--inputs", bad, "--expected", bad, "--backend", "interpreter"),
    ):
        r = cli(*args)
        assert r.returncode == 1, r.stdout
        assert f"{bad}: error[input]: cannot read arrays from '{bad}': {message}" in r.stderr
        assert "Traceback" not in r.stderr


def test_npz_arrays_over_the_budget_are_refused_before_loading(tmp_path):
    prog = write(tmp_path, AFFINE)
    np.savez(tmp_path / "in.npz", x=np.zeros((1024, 1024), np.float32))  # 4 MiB
    r = cli("run", prog, "--inputs", tmp_path / "in.npz", "--max-memory", "0.001")
    assert r.returncode == 1 and "error[budget]" in r.stderr
    assert "0.00 GiB to load" in r.stderr and "Traceback" not in r.stderr


def test_malformed_and_non_utf8_specs_are_user_errors(tmp_path):
    # Before: a spec with a non-UTF-8 byte in a string loaded, and printing it raised
    # UnicodeDecodeError (a traceback).
    prog = write(tmp_path, AFFINE)
    good = (ROOT / "configs" / "arch" / "H100_PCIe.yaml").read_bytes()
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(good.replace(b"description: ", b"description: caf\xe9 ", 1))
    line = good[: good.index(b"description: ")].count(b"\n") + 1
    col = len("description: caf") + 1
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ndram: {bytes_per_second: [1,\n")
    for args in (("arch", "show", bad), ("analyze", prog, "--arch", bad)):
        r = cli(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert f"{bad}:{line}:{col}: error[spec]: the spec is not UTF-8 text (byte 0xe9)" in (
            r.stderr
        )
    r = cli("analyze", prog, "--arch", broken)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{broken}:" in r.stderr and "error[spec]: YAML syntax error" in r.stderr


def test_a_non_utf8_program_is_a_user_error_in_every_command(tmp_path):
    torch_prog = tmp_path / "latin1.py"
    torch_prog.write_bytes(
        b"import torch\n# caf\xe9\nN = 4\nclass Model(torch.nn.Module):\n"
        b"    def forward(self, x):\n        return x + 1\ndef get_inputs():\n"
        b"    return [torch.rand(N)]\n"
    )
    for args in (("sweep", torch_prog, "--dim", "N=4,8"), ("analyze", torch_prog)):
        r = cli(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert f"{torch_prog}: error[capture]: cannot read the program" in r.stderr


# --- budgets and valid inputs ---------------------------------------------------------------

VECTOR = """
@kernel
def twice(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N"):
        Y[i] = X[i] * 2.0
    return Y
DIMS = {"N": 1024}
def model(x: Tensor("N")):
    return twice(x)
"""


def test_make_inputs_has_the_budget_of_solar_run(tmp_path):
    # N = 1024 fp32: 4,096 B of inputs + 8,192 B for the float64 draw = 12,288 B.
    prog = write(tmp_path, VECTOR)
    assert solar.make_inputs(prog, max_bytes=12288)["x"].shape == (1024,)
    with pytest.raises(solar.UserError) as e:
        solar.make_inputs(prog, max_bytes=12287)
    assert e.value.diagnostics[0].kind == "budget"


def test_solar_inputs_refuses_what_does_not_fit(tmp_path):
    # Before: N = 2^40 (4 TiB of fp32) was allocated, and failed with a traceback. Need:
    # 4 x 2^40 B + one block of 2^20 float64 draws (8 MiB) = 4096.0078 GiB.
    prog = write(tmp_path, VECTOR)
    r = cli("inputs", prog, "--out", tmp_path / "in.npz", "--dim", f"N={2**40}")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "error[budget]: execution would need 4096.01 GiB for its inputs" in r.stderr
    assert "(budget 8.00 GiB)" in r.stderr
    assert not (tmp_path / "in.npz").exists()


GATHER = """
DIMS = {{"V": 300, "D": 2, "S": 4000}}
def model(table: Tensor("V,D", role="weight"), ids: Tensor("S", dtype="{dt}")):
    return gather(table, ids, dim="V")
"""


@pytest.mark.parametrize("dt, top", [("int8", 127), ("int16", 299), ("int64", 299)])
def test_gather_indices_fit_the_table_and_the_index_dtype(tmp_path, dt, top):
    # Before: int8 indices were drawn in [0, 300) and wrapped negative (-128..43); int16 and
    # int64 are controls.
    prog = write(tmp_path, GATHER.format(dt=dt))
    ids = solar.make_inputs(prog)["ids"]
    # 4,000 uniform draws over [0, top]: every value 0..top is likely, min 0 and max top
    # certain to within (1 - 1/(top+1))^4000 < 2e-6.
    assert int(ids.min()) == 0 and int(ids.max()) == top
    out = solar.run(prog, solar.make_inputs(prog), backend="interpreter")["out0"]
    assert out.shape == (4000, 2)


def test_per_kernel_draws_valid_indices_and_positive_variances():
    import torch
    from solar.frontend.per_kernel import _random, _Slot

    gen = torch.Generator().manual_seed(0)
    ids = _random(_Slot((4000,), torch.int8), gen, ("index", 300))
    assert int(ids.min()) == 0 and int(ids.max()) == 127
    var = _random(_Slot((1000,), torch.float32), gen, ("positive",))
    assert float(var.min()) >= 0.5 and float(var.max()) < 1.5


def _batch_norm_operator():
    import torch
    from solar.frontend.fullrun import _VIEW_OPS
    from solar.frontend.per_kernel import distinct_operators
    from solar.pytorch import lower_pytorch

    model = torch.nn.Sequential(torch.nn.BatchNorm2d(16)).eval()
    capture, lowered = lower_pytorch(model, [torch.randn(2, 16, 8, 8)])
    needed = {op for op in lowered.sequence if op not in _VIEW_OPS}
    [op] = distinct_operators(capture.exported, needed)
    return op


def test_eval_mode_batch_norm_per_kernel_compares_numbers_not_nans():
    # Before: the running variance was drawn N(0, 1); about half its 16 channels gave NaN,
    # and the comparison matched NaN with NaN.
    from solar.frontend.per_kernel import check_operator

    key, args, kwargs, outputs, lead, _ = _batch_norm_operator()
    v, shapes = check_operator(key, args, kwargs, outputs, lead, 0, "interpreter", 1 << 30, 15.0)
    assert v is not None and v.status == "full", shapes
    assert [c.nan_count for c in v.outputs] == [0] * len(v.outputs)
    assert [c.expected_nan_count for c in v.outputs] == [0] * len(v.outputs)


def test_eval_mode_batch_norm_draws_a_positive_running_variance():
    from solar.frontend.per_kernel import _draws

    key, args, *_ = _batch_norm_operator()
    assert key == "aten._native_batch_norm_legit_no_training.default"
    assert _draws(key, args) == {id(args[4]): ("positive",)}  # running_var
