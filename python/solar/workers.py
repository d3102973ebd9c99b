"""Running one workload of a batch (solar/batch.py) or of a Ray actor (solar/ray_engine.py):
`solar analyze FILE --json ...` in a warm child of a zygote (solar/zygote.py) or a fresh
process, under a timeout, and its result as the batch records it. Both engines import this
module; neither imports the other's."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# Error kinds -> the stage that failed.
_STAGES = {
    "capture": "capture",
    "lower": "lower",
    "validate": "validate",
    "input": "validate",
    "bounds": "validate",
    "budget": "validate",
    "validation": "validate",
    "compile": "validate",
    "measure": "measure",
    "timeout": "timeout",  # solar/contain.py: the program overran --timeout
    "memory": "memory",  # ... or --memory-limit
    "user-code": "user-code",  # ... or ended its process, or its parent
}

# A workload's own `solar analyze` enforces --timeout (solar/contain.py); the batch waits
# this much longer before it kills the workload's process itself.
_GRACE = 30.0


# The running children (to stop them on Ctrl-C).
class _Children:
    def __init__(self, zygote=None):
        self.lock = threading.Lock()
        self.procs: set = set()
        self.stopping = False
        self.zygote = zygote

    def stop(self):
        with self.lock:
            self.stopping = True
            for p in self.procs:
                try:
                    p.send_signal(signal.SIGINT)
                except OSError:
                    pass
        if self.zygote is not None:
            self.zygote.kill(signal.SIGINT)


class ZygoteGone(Exception):
    """The warm-worker process ended (or never started): run the workload cold."""


class Zygote:
    """The batch's side of solar.zygote (warm workers): starts it with the frameworks the
    batch needs, hands it workloads, waits for them under their timeout and kills them (their
    whole process group) when they overrun. Thread-safe: the batch's threads share one."""

    def __init__(self, frameworks: list[str], ready_timeout: float = 600):
        import itertools

        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "solar.zygote", *frameworks],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
        )
        self.lock = threading.Lock()
        self.ids = itertools.count()
        self.waiting: dict[int, dict] = {}
        self.alive = True
        self.cold = 0  # workloads that ran in their own process after the zygote ended
        self.ready = threading.Event()
        self.ready_seconds = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(ready_timeout) or not self.alive:
            self.close()
            self.err.seek(0)
            why = self.err.read().decode("utf-8", "replace").strip().splitlines()
            raise ZygoteGone(why[-1] if why else "the warm workers did not start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "ready" in msg:
                self.ready_seconds = msg["ready"]
                self.ready.set()
                continue
            with self.lock:
                w = self.waiting.get(msg.get("id"))
            if w is None:
                continue
            if "pid" in msg:
                w["pid"] = msg["pid"]
                w["started"].set()
            else:
                w["status"] = msg["status"]
                w["done"].set()
        self.alive = False  # end of its output: the zygote is gone
        self.ready.set()
        with self.lock:
            for w in self.waiting.values():
                w["started"].set()
                w["done"].set()

    def run(self, argv: list[str], out: str, err: str, timeout: float):
        """(exit code as Popen reports it, timed out) of `solar <argv>` in a warm child."""
        w = {"pid": None, "status": None, "started": threading.Event(), "done": threading.Event()}
        with self.lock:
            if not self.alive:
                raise ZygoteGone("the warm workers ended")
            i = next(self.ids)
            self.waiting[i] = w
            try:
                line = json.dumps({"id": i, "argv": argv, "out": out, "err": err}) + "\n"
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except OSError:
                self.alive = False
        try:
            w["started"].wait(60)
            if w["pid"] is None:
                raise ZygoteGone("the warm workers did not start the workload")
            if not w["done"].wait(timeout):
                self._killpg(w["pid"], signal.SIGKILL)
                w["done"].wait(30)
                return None, True
            if w["status"] is None:  # its child may live on, orphaned: it must not race
                self._killpg(w["pid"], signal.SIGKILL)  # the cold run of the same workload
                raise ZygoteGone("the warm workers ended during the workload")
            return os.waitstatus_to_exitcode(w["status"]), False
        finally:
            with self.lock:
                self.waiting.pop(i, None)

    @staticmethod
    def _killpg(pid: int, sig) -> None:
        try:
            os.killpg(pid, sig)
        except OSError:
            pass

    def kill(self, sig) -> None:
        """Sends `sig` to every running workload (Ctrl-C)."""
        with self.lock:
            pids = [w["pid"] for w in self.waiting.values() if w["pid"]]
        for pid in pids:
            self._killpg(pid, sig)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


def frameworks_of(files: list[Path]) -> list[str]:
    """What warm workers import for these programs: torch for PyTorch ones, jax for JAX."""
    from .frontend.kind import program_kind

    kinds = {program_kind(f) for f in files if not str(f).partition("#")[0].endswith(".json")}
    definitions = any(str(f).partition("#")[0].endswith(".json") for f in files)
    need = ["torch"] if definitions or "pytorch" in kinds else []
    return need + (["jax"] if "jax" in kinds else [])


def run_one(
    path: Path, arch: str, timeout: float, extra: list[str], children: _Children | None = None
) -> dict | None:
    """The result of one workload, or None when the batch was interrupted while it ran (it
    is not recorded, so the next run does it again). It runs in a warm child of the batch's
    zygote where there is one, else in a fresh process."""
    limit = timeout + _GRACE if timeout and timeout > 0 else None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        file, _, workload = str(path).partition("#")  # a definition's workload: def.json#uuid
        argv = ["analyze", file, "--arch", arch, "--json", str(out), *extra]
        argv += ["--workload", workload] if workload else []
        cmd = [sys.executable, "-m", "solar.cli", *argv]
        start = time.perf_counter()

        def error(stage: str, message: str) -> dict:
            return {
                "source": str(path),
                "status": "error",
                "stage": stage,
                "message": message,
                "seconds_wall": round(time.perf_counter() - start, 3),
            }

        zygote = children.zygote if children is not None else None
        if zygote is not None and zygote.alive:
            err_path = Path(tmp) / "stderr.txt"
            try:
                rc, timed_out = zygote.run(argv, os.devnull, str(err_path), limit)
            except ZygoteGone:
                rc = "cold"  # the warm workers are gone: this one runs in its own process
                with children.lock:
                    zygote.cold += 1
            if rc != "cold":
                if children.stopping:
                    return None
                if timed_out:
                    return error("timeout", f"timed out after {timeout:g} s")
                err = err_path.read_text(errors="replace") if err_path.exists() else ""
                return _result(path, out, rc, err, start, error)
        try:
            proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
            )
        except OSError as e:
            return error("analyze", f"cannot start {sys.executable}: {e}")
        if children is not None:
            with children.lock:
                if children.stopping:
                    proc.kill()
                children.procs.add(proc)
        try:
            _, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return error("timeout", f"timed out after {timeout:g} s")
        finally:
            if children is not None:
                with children.lock:
                    children.procs.discard(proc)
        if children is not None and children.stopping:
            return None
        return _result(path, out, proc.returncode, err, start, error)


def _result(path: Path, out: Path, returncode: int, err: str, start: float, error) -> dict:
    """A workload's result from its exit code, its JSON and its stderr."""
    wall = round(time.perf_counter() - start, 3)
    if returncode == 0 or out.exists():
        try:
            doc = json.loads(out.read_text())
        except (OSError, ValueError) as e:
            return error("analyze", f"the analysis JSON cannot be read: {e}")
        if isinstance(doc, dict):
            doc["source"] = str(path)
            doc["status"] = "ok"
            doc["seconds_wall"] = wall
            return doc
        return error("analyze", "the analysis JSON is not an object")
    err = err.strip()
    m = re.search(r"error\[([\w-]+)\]", err)
    kind = m.group(1) if m else ""
    stage = _STAGES.get(kind, "lower" if kind else "analyze")
    message = next((ln for ln in err.splitlines() if "error[" in ln), err[-500:])
    if not message:
        rc = returncode
        message = (
            f"killed by signal {-rc} ({signal.Signals(-rc).name})"
            if rc < 0 and -rc in signal.valid_signals()
            else f"exited with status {rc} and no message"
        )
    r = error(stage, message)
    r["seconds_wall"] = wall
    return r
