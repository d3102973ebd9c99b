"""Running a user's program contained (docs/execution.md, "User code"): `solar analyze` on a
PyTorch or JAX program (or a definition, whose reference is Python) runs the analysis, and
with it every line of the user's code, in a forked **worker** under a wall-time limit and a
memory limit, and turns every way the worker can end into one error naming the file.

Three processes, Linux only (fork, setsid, prctl):

- the **supervisor** (the `solar analyze` process; in a batch, the warm or cold worker of
  that workload) forks the middle and waits for it under the time limit. For that wait it is
  a child subreaper (PR_SET_CHILD_SUBREAPER), so a daemonised grandchild of the program
  (double fork + setsid) is reparented to it and killed when the workload ends;
- the **middle** leads a new session and process group, forks the worker and reports how it
  ended. It is the program's parent: a program that kills its parent kills the middle, which
  the supervisor reports as an error;
- the **worker** runs the analysis under RLIMIT_DATA (the memory limit), dies with the middle
  (PR_SET_PDEATHSIG), turns `sys.exit` into an error at the program's line, and says "done"
  on a pipe before it exits, so an `os._exit` or a signal in the program is told apart from
  the analysis' own exit status.

When the middle ends, for any reason, its process group is killed (SIGKILL), so children the
program started with `subprocess.Popen` end with it, and so are the strays reparented to the
supervisor. A process that leaves the group and is not reparented to the supervisor (one
whose parent is still alive outside the group) is not caught.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import signal
import sys
import time
import traceback

DEFAULT_TIMEOUT = 600.0  # seconds
DEFAULT_MEMORY_LIMIT = "16GiB"

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

_UNITS = {"": 1, "b": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_UNITS |= {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_UNITS |= {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


def parse_memory(text: str) -> int:
    """Bytes of a memory limit: "8GiB", "512MiB", "2GB", "1000000"; 0 for "0" or "none" (no
    limit). A UserError for anything else."""
    from .errors import argument_error

    t = text.strip().lower()
    if t in ("none", "0"):
        return 0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", t)
    if not m or m.group(2) not in _UNITS:
        raise argument_error(
            f"--memory-limit {text}: expected a size such as 8GiB, 512MiB or 2GB, or none"
        )
    value = int(float(m.group(1)) * _UNITS[m.group(2)])
    if value < 1 << 20:
        raise argument_error(f"--memory-limit {text}: at least 1MiB (or none for no limit)")
    return value


def _size(n: int) -> str:
    return f"{n / (1 << 30):g}GiB" if n >= 1 << 30 else f"{n / (1 << 20):g}MiB"


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _error(kind: str, file: str, line: int, message: str, hint: str = "") -> str:
    from .errors import Diagnostic

    return str(Diagnostic(kind, file, line, 1 if line else 0, message, hint))


def _user_line(tb, file: str) -> int:
    """The line of the last frame of `tb` in the program's file; 0 when none is."""
    try:
        target = os.path.realpath(file)
    except (OSError, ValueError):
        return 0
    line = 0
    for frame, lineno in traceback.walk_tb(tb):
        try:
            if os.path.realpath(frame.f_code.co_filename) == target:
                line = lineno
        except (OSError, ValueError):
            continue
    return line


def _children_of(pid: int, outside_session: bool = False) -> set[int]:
    """The live (or zombie) children of `pid` (from /proc/PID/task/*/children, else a scan
    of /proc); with `outside_session`, only those in another session than `pid`'s (every
    process the program started is: the middle began a session of its own, and a process
    can only leave a session for a new one)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        listed = True
        candidates = set()
        for tid in tasks:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                candidates.update(int(c) for c in f.read().split())
    except (OSError, ValueError):  # a kernel without CONFIG_PROC_CHILDREN
        listed = False
        candidates = {int(e) for e in os.listdir("/proc") if e.isdigit()}
    session = os.getsid(pid)
    found = set()
    for child in candidates:
        try:
            with open(f"/proc/{child}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        parent, child_session = int(fields[1]), int(fields[3])
        if (listed or parent == pid) and not (outside_session and child_session == session):
            found.add(child)
    return found


def _stream_fd(stream, fd: int) -> bool:
    """Whether `stream` writes to file descriptor `fd` (then the worker inherits it)."""
    try:
        return stream.fileno() == fd
    except (AttributeError, OSError, ValueError):
        return False


def run_contained(work, file: str, timeout: float, memory_limit: int, argv: list[str]) -> int:
    """Runs `work()` (which returns an exit status and reports its own errors) in a worker
    under `timeout` seconds (0: none) and `memory_limit` bytes of data (0: none); returns
    its status, or 1 with a one-line error on stderr when the program ended the worker, its
    parent, or overran a limit.

    A process that already runs threads (a caller that used PyTorch's or OpenMP's thread
    pool, or JAX, before calling `solar.cli.main` in-process) cannot fork safely: the
    child inherits locks held by threads it does not have, and its first parallel region
    waits for them forever. Such a caller's command runs instead as `solar` `argv` in a
    fresh interpreter, which contains it the same way."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if _threads() > 1:
        return _run_fresh(argv)
    supervisor = os.getpid()
    before = _children_of(supervisor)
    status_r, status_w = os.pipe()
    # Output the worker cannot write to our file descriptors itself (a captured stream).
    pipes = {fd: os.pipe() for fd, s in ((1, sys.stdout), (2, sys.stderr)) if not _stream_fd(s, fd)}
    reaper = _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    middle = os.fork()
    if middle == 0:
        os.close(status_r)
        for fd, (r, w) in pipes.items():
            os.close(r)
            os.dup2(w, fd)
            os.close(w)
        _middle(work, file, supervisor, status_w, memory_limit, set(pipes))
    os.close(status_w)
    for _, w in pipes.values():
        os.close(w)
    readers = {r: fd for fd, (r, _) in pipes.items()}
    status = pending = -1
    try:
        status = _wait(middle, timeout, dict(readers))
    finally:
        _killpg(middle)
        if status is None or status == pending:  # overran, or we were interrupted
            os.waitpid(middle, 0)
        _reap_strays(supervisor, before)
        if reaper:
            _prctl(_PR_SET_CHILD_SUBREAPER, 0)
        report = _drain(status_r)
        for r in readers:
            _pump(r, readers[r], until_empty=True)
            os.close(r)
    return _verdict(status, report, file, timeout, memory_limit)


def _threads() -> int:
    """The threads of this process (1 where /proc cannot tell)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _run_fresh(argv: list[str]) -> int:
    """`solar *argv` in a fresh interpreter that imports this copy of Solar; its output is
    copied to ours (inherited where our streams are the process's own descriptors)."""
    import subprocess

    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH", "")])])
    piped = {fd: not _stream_fd(s, fd) for fd, s in ((1, sys.stdout), (2, sys.stderr))}
    proc = subprocess.run(
        [sys.executable, "-m", "solar.cli", *argv],
        env=env,
        stdout=subprocess.PIPE if piped[1] else None,
        stderr=subprocess.PIPE if piped[2] else None,
        text=True,
        errors="replace",
        check=False,
    )
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        if piped[fd]:
            stream.write(proc.stdout if fd == 1 else proc.stderr)
            stream.flush()
    return proc.returncode if proc.returncode >= 0 else 1


def _killpg(pgid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pgid, signal.SIGKILL)
        except OSError:
            pass


def _wait(pid: int, timeout: float, readers: dict) -> int | None:
    """The middle's wait status, or None when it overran `timeout`; copies the worker's
    piped output meanwhile. Woken by the middle's pidfd, or every 50 ms without one."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            if pidfd is None:
                left = 0.05 if left is None else min(left, 0.05)
            waits = [*readers] + ([pidfd] if pidfd is not None else [])
            ready, _, _ = select.select(waits, [], [], left)
            for r in ready:
                if r in readers and not _pump(r, readers[r]):
                    del readers[r]
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pump(r: int, fd: int, until_empty: bool = False) -> bool:
    """Copies what the worker wrote to pipe `r` to our stdout (fd 1) or stderr (fd 2);
    False at end of file."""
    stream = sys.stdout if fd == 1 else sys.stderr
    if until_empty:
        os.set_blocking(r, False)
    while True:
        try:
            chunk = os.read(r, 1 << 16)
        except (BlockingIOError, OSError):
            return True
        if not chunk:
            return False
        stream.write(chunk.decode("utf-8", "replace"))
        stream.flush()
        if not until_empty:
            return True


def _drain(r: int) -> str:
    os.set_blocking(r, False)
    data = b""
    while True:
        try:
            chunk = os.read(r, 1 << 12)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        data += chunk
    os.close(r)
    return data.decode("ascii", "replace")


def _reap_strays(supervisor: int, before: set[int]) -> None:
    """Kills and reaps the processes reparented to the supervisor during the workload."""
    for _ in range(200):
        strays = _children_of(supervisor, outside_session=True) - before
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass


def _middle(work, file, supervisor, status_w, memory_limit, piped) -> None:
    """In the middle process: a new session, the worker, and how it ended on the pipe."""
    try:
        os.setsid()
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != supervisor:
            os._exit(1)
        worker = os.fork()
        if worker == 0:
            _worker(work, file, status_w, memory_limit, piped)
        _, status = os.waitpid(worker, 0)
        os.write(status_w, f"ended {status}\n".encode())
    finally:
        os._exit(0)


def _worker(work, file, status_w, memory_limit, piped) -> None:
    """In the worker: the analysis under the memory limit, "done STATUS" when it returns."""
    code = 1
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if 1 in piped:
            sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        if 2 in piped:
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        if memory_limit:
            import resource

            _, hard = resource.getrlimit(resource.RLIMIT_DATA)
            limit = memory_limit if hard == resource.RLIM_INFINITY else min(hard, memory_limit)
            resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        code = _run_user(work, file, memory_limit)
    except BaseException:  # what `solar analyze` would print without the worker
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            os.write(status_w, f"done {code}\n".encode())
        finally:
            os._exit(code if isinstance(code, int) else 1)


def _run_user(work, file: str, memory_limit: int) -> int:
    """`work()`, with the program's `sys.exit` and running out of memory as errors."""
    try:
        return work()
    except SystemExit as e:
        line = _user_line(e.__traceback__, file)
        print(
            _error(
                "user-code",
                file,
                line,
                f"the program called sys.exit({e.code!r})",
                "a problem file must not end the process: raise an exception instead",
            ),
            file=sys.stderr,
        )
        return 1
    except MemoryError as e:
        print(_memory_error(file, _user_line(e.__traceback__, file), memory_limit), file=sys.stderr)
        return 1


def _memory_error(file: str, line: int, memory_limit: int) -> str:
    limit = f"the memory limit of {_size(memory_limit)}" if memory_limit else "the memory"
    return _error(
        "memory",
        file,
        line,
        f"the program ran out of memory: it needed more than {limit}",
        "raise it with --memory-limit SIZE (none: no limit), or analyse smaller sizes (--dim)",
    )


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "unknown"
        return f"killed by signal {sig} ({name})"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _verdict(status, report: str, file: str, timeout: float, memory_limit: int) -> int:
    """The exit status of the analysis, or 1 after printing why the program ended it."""
    lines = dict(ln.split(" ", 1) for ln in report.splitlines() if " " in ln)
    if status is None:
        message = (
            f"the program did not finish: timed out after {timeout:g} s",
            "raise the limit with --timeout SECONDS (0: no limit)",
        )
        print(_error("timeout", file, 0, *message), file=sys.stderr)
        return 1
    if "done" in lines:
        return int(lines["done"])
    if "ended" in lines:
        ended = int(lines["ended"])
        how = _describe(ended)
        hint = ""
        if os.WIFSIGNALED(ended) and os.WTERMSIG(ended) == signal.SIGKILL and memory_limit:
            hint = "the program, or the system's out-of-memory killer, killed it"
        elif os.WIFEXITED(ended):
            how = f"ended its process with {how} (os._exit) before the analysis finished"
        print(_error("user-code", file, 0, f"the program {how}", hint), file=sys.stderr)
        return 1
    print(
        _error(
            "user-code",
            file,
            0,
            f"the process running the program was {_describe(status)}: the program killed "
            "its parent process (or the system did)",
        ),
        file=sys.stderr,
    )
    return 1
