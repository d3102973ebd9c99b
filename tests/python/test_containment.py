"""User code runs contained (solar/contain.py, docs/execution.md "User code"): a PyTorch
problem file that exits, kills its parent, hangs, exhausts memory or leaves processes behind
gives a one-line error naming the file (and the line where Python knows it), exit status 1,
and nothing left running; in a batch it is that workload's recorded error and the batch goes
on. Linux only, like the containment itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Line 1 is empty, so `import torch` is line 2 and `forward`'s body is line 6.
PROGRAM = """
import os, signal, subprocess, sys, time
import torch
import torch.nn as nn
{prelude}
class Model(nn.Module):
    def forward(self, x):
        {body}
        return torch.relu(x) * 2
def get_inputs():
    {inputs}
    return [torch.randn(8, 16)]
def get_init_inputs():
    return []
"""


def program(tmp_path: Path, name: str, prelude="", body="pass", inputs="pass") -> Path:
    path = tmp_path / name
    path.write_text(PROGRAM.format(prelude=prelude, body=body, inputs=inputs))
    return path


def solar(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.parametrize(
    ("name", "where", "expected"),
    [
        # sys.exit(0) on line 5 (the prelude's line): SystemExit escaped `except Exception`
        # and the analysis ended silently with status 0.
        (
            "exit0.py",
            {"prelude": "sys.exit(0)"},
            ":5:1: error[user-code]: the program called sys.exit(0)",
        ),
        # sys.exit(3) on line 8, the first line of forward's body.
        (
            "exit3.py",
            {"body": "sys.exit(3)"},
            ":8:1: error[user-code]: the program called sys.exit(3)",
        ),
        # os._exit(5): no Python frame survives, so the file without a line.
        (
            "oexit.py",
            {"body": "os._exit(5)"},
            ": error[user-code]: the program ended its process with exit status 5 (os._exit)",
        ),
        # The program's parent is the middle process; killing it used to kill `solar analyze`
        # (exit -9 with nothing printed).
        (
            "killp.py",
            {"body": "os.kill(os.getppid(), signal.SIGKILL)"},
            ": error[user-code]: the process running the program was killed by signal 9 "
            "(SIGKILL): the program killed its parent process",
        ),
    ],
)
def test_a_program_that_ends_the_process_is_an_error_naming_it(tmp_path, name, where, expected):
    path = program(tmp_path, name, **where)
    r = solar("analyze", path, "--no-validate")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{path}{expected}" in r.stderr, r.stderr


def test_an_endless_get_inputs_is_stopped_at_the_timeout(tmp_path):
    """`while True: pass` in get_inputs under --timeout 3: a timeout error naming the file,
    exit 1, well before the test's own 300 s limit (it used to hang forever)."""
    path = program(tmp_path, "hang.py", inputs="while True: pass")
    start = time.monotonic()
    r = solar("analyze", path, "--no-validate", "--timeout", "3")
    assert r.returncode == 1, r.stderr
    assert f"{path}: error[timeout]: the program did not finish: timed out after 3 s" in r.stderr
    assert time.monotonic() - start < 120


def test_a_memory_hog_is_stopped_at_the_memory_limit(tmp_path):
    """A 10 GiB bytearray at import (line 5) under --memory-limit 1GiB: MemoryError becomes
    a memory error at that line, exit 1 (without a limit it would take 10 GiB)."""
    path = program(tmp_path, "hog.py", prelude="hog = bytearray(10 * 1024**3)")
    r = solar("analyze", path, "--no-validate", "--memory-limit", "1GiB")
    assert r.returncode == 1, r.stderr
    assert (
        f"{path}:5:1: error[memory]: the program ran out of memory: it needed more than the "
        "memory limit of 1GiB"
    ) in r.stderr


def test_a_bad_memory_limit_is_refused():
    r = solar("analyze", "x.py", "--memory-limit", "lots")
    assert r.returncode == 1
    assert "--memory-limit lots: expected a size such as 8GiB, 512MiB or 2GB, or none" in r.stderr


DAEMON = """
popen = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
r, w = os.pipe()
if os.fork() == 0:  # a daemon: double fork and setsid, out of the program's process group
    os.setsid()
    if os.fork() == 0:
        os.write(w, str(os.getpid()).encode())
        time.sleep(300)
        os._exit(0)
    os._exit(0)
daemon = int(os.read(r, 32))
open(os.environ["SOLAR_TEST_PIDS"], "w").write(f"{popen.pid} {daemon}")
"""


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie not yet reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" in status.read_text().lower()


def test_children_and_daemons_of_a_program_end_with_it(tmp_path):
    """The program starts a `subprocess.Popen` child and a daemonised grandchild that sleep
    300 s and writes their 2 pids: the analysis succeeds and both are gone when it returns
    (the Popen child with the program's process group, the daemon reparented to the
    supervisor, a child subreaper, and killed)."""
    path = program(tmp_path, "kids.py", prelude=DAEMON)
    pids = tmp_path / "pids"
    r = solar("analyze", path, "--no-validate", env=dict(os.environ, SOLAR_TEST_PIDS=str(pids)))
    assert r.returncode == 0, r.stderr
    popen, daemon = map(int, pids.read_text().split())
    assert gone(popen) and gone(daemon)


@pytest.mark.parametrize("workers", ["warm", "cold"])
def test_a_workload_that_kills_its_parent_is_recorded_and_the_batch_goes_on(tmp_path, workers):
    """Two workloads, one killing its parent in forward: the batch exits 0 (it used to die
    with the driver, 137, and every resume died at the same workload), the killer's record
    says why, the other is analysed, and a resume runs neither again."""
    suite = tmp_path / "suite"
    suite.mkdir()
    program(suite, "a_ok.py")
    program(suite, "b_killer.py", body="os.kill(os.getppid(), signal.SIGKILL)")
    out = tmp_path / "o.jsonl"
    args = ("batch", suite, "--out", out, "--jobs", "1", "--no-validate", "--workers", workers)
    r = solar(*args)
    assert r.returncode == 0, r.stderr
    got = {Path(x["source"]).name: x for x in map(json.loads, out.read_text().splitlines())}
    assert got["a_ok.py"]["status"] == "ok"
    killer = got["b_killer.py"]
    assert killer["status"] == "error" and killer["stage"] == "user-code", killer
    assert "the program killed its parent process" in killer["message"]
    again = solar(*args)
    assert again.returncode == 0, again.stderr
    assert "resuming: 2 of 2 already in" in again.stderr
    assert len(out.read_text().splitlines()) == 2


def test_an_in_process_caller_with_a_busy_thread_pool_is_not_forked(tmp_path, capsys):
    """A caller that already ran PyTorch's intra-op (OpenMP) pool cannot fork: the forked
    worker's first parallel region waits for pool threads it does not have. Before
    contain.py ran such a caller's command in a fresh interpreter, this analysis (a
    256x256 matmul timed with --measure, which runs in parallel) hung until the timeout
    (error[timeout] after 60 s); now it finishes with status 0."""
    import torch
    from solar import cli

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a = torch.randn(512, 512)
        (a @ a).sum().item()  # starts the pool's threads in this process
        assert len(os.listdir("/proc/self/task")) > 1
        path = tmp_path / "matmul.py"
        path.write_text(
            "import torch\nimport torch.nn as nn\n"
            "class Model(nn.Module):\n"
            "    def forward(self, a, b):\n        return a @ b\n"
            "def get_inputs():\n    return [torch.randn(256, 256), torch.randn(256, 256)]\n"
            "def get_init_inputs():\n    return []\n"
        )
        args = ["analyze", str(path), "--arch", "H100_PCIe_paper", "--no-validate"]
        rc = cli.main([*args, "--measure", "--repeats", "2", "--timeout", "60"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "eager    median" in out.out
