"""Warm workers for `solar batch` (docs/pytorch.md, "Batch runs"): one **zygote** process
imports the frameworks a batch needs (torch and torch.export, JAX) once, runs one export on
fake tensors so torch.export's first-call set-up is done, and then forks one child per
workload. Each child runs `solar analyze ...` as its own process would: isolation stays (a
crash, a hang or a leak of one workload ends with its child, and memory never grows across
workloads), the imports and the set-up are paid once per batch instead of once per
workload.

The zygote is single-threaded when it forks (the warm-up computes nothing: fake tensors), so
a child never inherits a lock held by another thread. It speaks JSON lines: on stdin
`{"id", "argv", "out", "err"}` (run `solar <argv>` with stdout and stderr into those files);
on stdout `{"ready": seconds}` once, then `{"id", "pid"}` when a child starts and
`{"id", "status"}` (os.waitpid's status) when it ends. Each child leads its own process
group, so the batch can kill a workload and whatever it started (a compiler) together.
End of stdin: the zygote kills its children and exits.

Run by batch.py as `python -m solar.zygote [torch] [jax]`; not a user command.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time


def _warm(frameworks: list[str]) -> None:
    """Imports and the first-call set-up of each framework, computing nothing."""
    import solar.cli  # noqa: F401  (and the report, the core)

    if "torch" in frameworks:
        import torch
        import torch.export

        import solar.frontend.lower  # noqa: F401
        import solar.frontend.validate  # noqa: F401
        import solar.pytorch  # noqa: F401
        from solar.frontend.capture import fake_tensors

        with fake_tensors():
            torch.export.export(torch.nn.Linear(4, 4), (torch.randn(2, 4),))
    if "jax" in frameworks:
        import jax  # noqa: F401
        import jax.numpy  # noqa: F401

        import solar.frontend.jax.lower  # noqa: F401
        import solar.frontend.jax.validate  # noqa: F401
        import solar.jax  # noqa: F401


def _child(request: dict) -> None:
    """In the forked child: `solar <argv>` with its output in the request's files."""
    code = 1
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["out"]), (2, request["err"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        sys.stdin = open(0)  # noqa: SIM115 - the child's whole life
        sys.stdout = open(1, "w", buffering=1)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1)  # noqa: SIM115
        from solar.cli import main

        code = main(list(request["argv"]))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # what a process of its own would print
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def _send(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def main() -> int:
    start = time.perf_counter()
    _warm(sys.argv[1:])
    _send({"ready": round(time.perf_counter() - start, 3)})
    children: dict[int, object] = {}
    pending = b""
    open_input = True
    while open_input or children:
        readable, _, _ = select.select([0] if open_input else [], [], [], 0.02)
        if readable:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                open_input = False
                for pid in children:  # the batch is gone: so are its workloads
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request)
                try:
                    os.setpgid(pid, pid)  # as the child does: no window for a kill to miss
                except OSError:
                    pass
                children[pid] = request["id"]
                _send({"id": request["id"], "pid": pid})
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            _send({"id": children.pop(pid), "status": status})
    return 0


if __name__ == "__main__":
    sys.exit(main())
