"""Executor benchmark (issue 3): Solar's native executor vs Numba vs PyTorch eager, side by side.

For each op (one IR program in bench/exec/, one kernel called once by model()), in one run:

- Solar native: solar.run(program, inputs, bounds_check=False) (leading parallel=True loops
  under OpenMP, default thread count), and the same with bounds checks (as `solar run`,
  `solar validate` and the agent's validation run), column "checked ms";
- Numba: the same IR kernel through bench/numba_shim.py (@njit(parallel=True), prange for
  parallel dims, fastmath=False), default thread count;
- PyTorch eager on the CPU with the equivalent op, torch.set_num_threads(os.cpu_count()).

Each is warmed up, then timed as the median of N calls (time.perf_counter), N chosen so that
each backend spends about --seconds (default 3 s) on each op (at least 3 calls). The three
outputs are compared with PyTorch's as the reference (tolerances below); a disagreement
prints a WARNING row. Compile latency of each Solar kernel is measured with a fresh, empty
SOLAR_CACHE_DIR (cold: first call minus a warm call, in this process) and in a new process
that finds the populated cache (cached: first call minus a warm call there, after a tiny
warm-up program has paid the process's one-time costs: libgomp, OpenMP threads, imports;
the median of 3 such processes).
Both are measured at the --quick sizes: the generated source does not depend on sizes (they
are run-time arguments), and the benchmark checks that the full-size run compiles nothing new.

The machine may be shared: while each backend is timed, the share of the cores that other
processes used (/proc/stat busy time minus this process's CPU time) is measured, and a row
where it exceeds 5% is marked "noisy". Before each timing the benchmark waits for idle cores
and retimes a noisy measurement (at most 3 tries, --max-wait seconds of waiting in all).

Before timing, the Numba shim is checked against solar's reference interpreter at the small
sizes (numba_shim.self_check).

    .venv/bin/python bench/bench_exec.py [--ops matmul,softmax] [--quick] [--seconds 3]

Ratios: Numba/Solar = Numba ms / Solar ms (>= 1: Solar faster); Solar/torch = Solar ms /
torch ms (<= 1: Solar faster). Geomeans over the ops run. Targets (issue 14): native at
least 2x faster than Numba (geomean Numba/Solar >= 2); geomean Solar/torch <= 1.5, and no
op's Solar/torch above 3. Issue 44: the same with bounds checks (geomean <= 1.2, no op
above 2x, checked and unchecked).

Fraction of this machine's speed of light: the op's FLOPs and fused bytes as Solar counts
them (solar.analyze at the benchmark's sizes) against this machine's peaks, measured at the
start of the run: FLOP/s of torch.matmul at 2048^3 fp32 (best of 5), bytes/s of a 256 MiB
NumPy copy (read + write, best of 5). "Solar %SOL" = max(FLOPs / peak FLOP/s, bytes / peak
B/s) / Solar's time; "torch %SOL" the same for torch.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXEC_DIR = HERE / "exec"
sys.path.insert(0, str(HERE))

# Tolerances against the PyTorch output (fp32 everywhere): contractions accumulate over
# K = 576..1024 terms in different orders, so their absolute tolerance scales with the
# output's magnitude; the other ops are a few roundings deep.
TOL_CONTRACTION = (1e-3, 1e-4)  # rtol, atol as a fraction of max |reference|
TOL_POINTWISE = (1e-4, 1e-5)


def _torch_ops():
    import torch
    import torch.nn.functional as F

    return {
        "matmul": lambda i: torch.matmul(i["a"], i["b"]),
        "bmm": lambda i: torch.bmm(i["a"], i["b"]),
        "conv2d": lambda i: F.conv2d(i["x"], i["w"], padding=1),
        "depthwise_conv2d": lambda i: F.conv2d(
            i["x"], i["w"].unsqueeze(1), padding=1, groups=i["x"].shape[1]
        ),
        "softmax": lambda i: torch.softmax(i["x"], dim=-1),
        "layer_norm": lambda i: F.layer_norm(
            i["x"], (i["x"].shape[-1],), i["gamma"], i["beta"], eps=1e-5
        ),
        "elementwise": lambda i: torch.tanh(i["x"] * i["a"] + i["b"]) * torch.sigmoid(i["x"]) + 0.5,
        "max_pool2d": lambda i: F.max_pool2d(i["x"], 3, 2, 1),
    }


# op -> program file, small sizes for --quick and the self-check (odd sizes on purpose),
# tolerance class. Full sizes are each program's DIMS.
OPS = {
    "matmul": {"file": "matmul.py", "quick": {"M": 33, "N": 17, "K": 29}, "tol": "c"},
    "bmm": {"file": "bmm.py", "quick": {"B": 3, "M": 17, "N": 9, "K": 13}, "tol": "c"},
    "conv2d": {"file": "conv2d.py", "quick": {"N": 2, "C": 5, "H": 9, "W": 7, "O": 6}, "tol": "c"},
    "depthwise_conv2d": {
        "file": "depthwise_conv2d.py",
        "quick": {"N": 2, "C": 5, "H": 9, "W": 7},
        "tol": "p",
    },
    "softmax": {"file": "softmax.py", "quick": {"R": 17, "C": 33}, "tol": "p"},
    "layer_norm": {"file": "layer_norm.py", "quick": {"T": 17, "D": 33}, "tol": "p"},
    "elementwise": {"file": "elementwise.py", "quick": {"T": 17, "D": 33}, "tol": "p"},
    "max_pool2d": {
        "file": "max_pool2d.py",
        "quick": {"N": 2, "C": 3, "H": 11, "W": 12},
        "tol": "p",
    },
}


def program_path(op: str) -> str:
    return str(EXEC_DIR / OPS[op]["file"])


# A tiny program run natively before each measured first call, so that what is counted is the
# kernel's own load, not the process's one-time costs (libgomp, OpenMP threads, imports).
WARMUP_IR = """from solar.ir import kernel, Tensor, Dim

@kernel
def twice(X: Tensor("N")) -> Tensor("N"):
    Y = Tensor(N=X.shape[0])
    for i in Dim("N", parallel=True):
        Y[i] = X[i] * 2.0
    return Y

DIMS = {"N": 64}

def model(x: Tensor("N", role="input")):
    return twice(x)
"""

# Runs in a new process that finds the populated cache: runs the warm-up program (its first
# native call is the process's one-time cost), then times the op's first native call and a
# warm one.
CACHED_LOAD = r"""
import json, statistics, sys, time
import solar
path, dims, warmup = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
w_inputs = solar.make_inputs(warmup, seed=0)
t0 = time.perf_counter()
solar.run(warmup, w_inputs, bounds_check=False)
process_first = time.perf_counter() - t0
solar.run(warmup, w_inputs, bounds_check=False)
inputs = solar.make_inputs(path, seed=0, dims=dims)
prog = solar.check(path)
t0 = time.perf_counter()
solar.run(prog, inputs, dims=dims, bounds_check=False)
first = time.perf_counter() - t0
warm = []
for _ in range(7):
    t0 = time.perf_counter()
    solar.run(prog, inputs, dims=dims, bounds_check=False)
    warm.append(time.perf_counter() - t0)
print(json.dumps({"process_first": process_first, "first": first,
                  "warm": statistics.median(warm)}))
"""

# Other processes' share of the cores above which a row is marked noisy.
NOISY = 0.05
BUDGET = {"max_seconds": 3600.0, "max_bytes": 16 * 2**30}


def _cpu_jiffies():
    """(non-idle, total) jiffies of all cores since boot, from /proc/stat; None elsewhere."""
    try:
        v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


# CPU time of this process and of its children that ended (the cached-load processes).
_CPU_FIELDS = ("user", "system", "children_user", "children_system")


class OtherLoad:
    """Measures how much of the cores other processes used while timing: the cores' busy time
    (/proc/stat) minus this process's CPU time (os.times), over the wall time and cores."""

    def __enter__(self):
        self.j0, self.t0, self.w0 = _cpu_jiffies(), os.times(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        j1, t1, w1 = _cpu_jiffies(), os.times(), time.perf_counter()
        self.fraction = float("nan")
        if self.j0 is not None and j1 is not None:
            hz = os.sysconf("SC_CLK_TCK")
            busy = (j1[0] - self.j0[0]) / hz
            ours = sum(getattr(t1, f) - getattr(self.t0, f) for f in _CPU_FIELDS)
            cores = os.cpu_count() or 1
            self.fraction = min(1.0, max(0.0, (busy - ours) / max(1e-9, (w1 - self.w0) * cores)))
        return False


def timed(fn, target_s: float, min_n: int = 3, max_n: int = 1000):
    """Two warm-up calls, then the median of N calls, N from the second warm-up's time (the
    first may compile: 0.3 s for a 3 ms kernel made N = 10); returns (median seconds, N,
    last result, fraction of the cores other processes used meanwhile)."""
    out = fn()
    t0 = time.perf_counter()
    out = fn()
    warm = time.perf_counter() - t0
    n = max(min_n, min(max_n, math.ceil(target_s / max(warm, 1e-6))))
    times = []
    with OtherLoad() as load:
        for _ in range(n):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times), n, out, load.fraction


class Quiet:
    """On a shared machine: before each timing, wait (from a total budget) until other
    processes leave the cores idle, and time again (up to `tries` in all) when other load
    showed up during a timing."""

    def __init__(self, budget_s: float, tries: int = 3):
        self.budget = budget_s
        self.tries = tries
        self.waited = 0.0

    def wait(self):
        time.sleep(0.2)  # let the previous runtime's spinning threads go to sleep
        while self.waited < self.budget:
            t0 = time.perf_counter()
            busy = busy_fraction(0.5)
            self.waited += time.perf_counter() - t0
            if not busy > NOISY:  # NaN (no /proc/stat): do not wait
                return

    def measure(self, fn, target_s: float):
        for attempt in range(self.tries):
            self.wait()
            m = timed(fn, target_s)
            if not m[3] > NOISY or attempt == self.tries - 1 or self.waited >= self.budget:
                return m
        return m


def so_count(cache: str) -> int:
    return sum(1 for _ in Path(cache).rglob("*.so"))


def agree(got, ref, tol) -> tuple[bool, float]:
    import numpy as np

    if got.shape != ref.shape:
        return False, math.inf
    scale = float(np.max(np.abs(ref))) if ref.size else 1.0
    rtol, atol = tol
    err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
    return bool(np.allclose(got, ref, rtol=rtol, atol=atol * scale)), err


def busy_fraction(seconds: float = 1.0) -> float:
    """Fraction of all cores' time spent not idle over `seconds` (this process sleeps), from
    /proc/stat: how much other work competes for the cores; NaN where unavailable."""

    def sample():
        f = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        v = [int(x) for x in f]
        return sum(v), v[3] + (v[4] if len(v) > 4 else 0)  # total, idle + iowait

    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return float("nan")
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
        gxx = gxx.splitlines()[0]
    except (OSError, IndexError):
        gxx = "g++ ?"
    return f"nproc {os.cpu_count()}, CPU {cpu}, {gxx}"


def bench_op(op, quick, target_s, torch_ops, warmup, quiet, rows, warnings):
    import numpy as np
    import solar
    import torch
    from numba_shim import load, self_check

    info = OPS[op]
    path = program_path(op)
    qdims = info["quick"]
    dims = qdims if quick else None
    tol = TOL_CONTRACTION if info["tol"] == "c" else TOL_POINTWISE
    cache = os.environ["SOLAR_CACHE_DIR"]
    prog = solar.check(path)

    # Numba: translate, compile (first call), then check against the reference interpreter
    # at the small sizes.
    q_inputs = solar.make_inputs(prog, seed=0, dims=qdims)
    shim = load(path)
    t0 = time.perf_counter()
    shim.run(q_inputs)
    numba_first = time.perf_counter() - t0
    if not self_check([(path, qdims)], verbose=False):
        warnings.append(f"WARNING {op}: numba shim disagrees with solar's interpreter at {qdims}")

    # Solar cold compile at the small sizes: first call minus a warm call, fresh cache.
    quiet.wait()
    before = so_count(cache)
    t0 = time.perf_counter()
    solar.run(prog, q_inputs, dims=qdims, bounds_check=False)
    first = time.perf_counter() - t0
    warm = []
    for _ in range(7):
        t0 = time.perf_counter()
        solar.run(prog, q_inputs, dims=qdims, bounds_check=False)
        warm.append(time.perf_counter() - t0)
    cold = first - statistics.median(warm)
    compiled = so_count(cache) - before

    # Full size, side by side.
    inputs = solar.make_inputs(prog, seed=0, dims=dims)
    t_inputs = {k: torch.from_numpy(v) for k, v in inputs.items()}
    tfn = torch_ops[op]
    before = so_count(cache)

    def run_solar(checked=False):
        return solar.run(prog, inputs, dims=dims, bounds_check=checked, **BUDGET)["out0"]

    s_t, s_n, s_out, s_load = quiet.measure(run_solar, target_s)
    if so_count(cache) != before:
        warnings.append(f"{op}: the full-size run compiled new code (size-specialised source)")
    c_t, c_n, c_out, c_load = quiet.measure(lambda: run_solar(checked=True), target_s)
    analysis = solar.analyze(prog, dims=dims, arch="B200").fused  # counts only: any arch
    n_t, n_n, n_out, n_load = quiet.measure(lambda: shim.run(inputs)["out0"], target_s)
    with torch.inference_mode():
        t_t, t_n, t_out, t_load = quiet.measure(lambda: tfn(t_inputs), target_s)
    t_out = t_out.numpy()

    checks = []
    for name, got in (("solar", s_out), ("solar checked", c_out), ("numba", n_out)):
        ok, err = agree(got, t_out, tol)
        checks.append(ok)
        if not ok:
            warnings.append(
                f"WARNING {op}: {name} vs torch max abs err {err:.3g} exceeds rtol {tol[0]:g}, "
                f"atol {tol[1]:g} x max|torch| = {tol[1] * float(np.max(np.abs(t_out))):.3g}"
            )

    # Cached load: a new process, the populated cache; the median of 3 such processes.
    cached_runs, cached_loads = [], []
    for _ in range(3):
        quiet.wait()
        with OtherLoad() as load:
            res = subprocess.run(
                [sys.executable, "-c", CACHED_LOAD, path, json.dumps(qdims), warmup],
                capture_output=True,
                text=True,
                env=dict(os.environ),
            )
        if res.returncode != 0:
            raise RuntimeError(f"cached-load process failed for {op}:\n{res.stderr[-3000:]}")
        cached_runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
        cached_loads.append(load.fraction)
    c = {k: statistics.median(r[k] for r in cached_runs) for k in cached_runs[0]}
    # Medians of each quantity over the processes; the difference can come out <= 0 when the
    # load is below the timing noise.
    cached = c["first"] - c["warm"]
    process_ms = (c["process_first"]) * 1e3

    shape = "x".join(str(s) for s in s_out.shape)
    rows.append(
        {
            "op": op,
            "shape": shape,
            "solar_ms": s_t * 1e3,
            "checked_ms": c_t * 1e3,
            "flops": analysis.flops,
            "bytes": analysis.bytes,
            "numba_ms": n_t * 1e3,
            "torch_ms": t_t * 1e3,
            "n": (s_n, c_n, n_n, t_n),
            "cold_s": cold,
            "cached_ms": cached * 1e3,
            "process_first_ms": process_ms,
            "kernels_compiled": compiled,
            "numba_first_s": numba_first,
            "agree": all(checks),
            "other_load": max(s_load, c_load, n_load, t_load, statistics.median(cached_loads)),
        }
    )
    print(
        f"  {op:<17} solar {s_t * 1e3:9.2f} ms (N={s_n})  checked {c_t * 1e3:9.2f} ms (N={c_n})  "
        f"numba {n_t * 1e3:9.2f} ms (N={n_n})  torch {t_t * 1e3:9.2f} ms (N={t_n})  "
        f"cold {cold:.2f} s  cached {cached * 1e3:.1f} ms  "
        f"other load {rows[-1]['other_load']:.0%}",
        flush=True,
    )


def machine_peaks(quick: bool) -> tuple[float, float]:
    """(FLOP/s, bytes/s) this machine reaches: torch.matmul of fp32 squares (2048, or 512
    with --quick) and a NumPy copy of 256 MiB (32 MiB), each the best of 5 after a warm-up."""
    import numpy as np
    import torch

    n = 512 if quick else 2048
    a, b = torch.rand(n, n), torch.rand(n, n)
    src = np.ones((32 if quick else 256) << 18, np.float32)  # 2^18 floats per MiB
    dst = np.empty_like(src)

    def best(fn):
        fn()
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    flops = 2 * n**3 / best(lambda: torch.matmul(a, b))
    bandwidth = 2 * src.nbytes / best(lambda: np.copyto(dst, src))
    return flops, bandwidth


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated, from: " + ",".join(OPS))
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test (< 1 min)")
    ap.add_argument("--seconds", type=float, default=None, help="timing per op and backend")
    ap.add_argument(
        "--max-wait",
        type=float,
        default=None,
        help="seconds in all to wait for other processes to leave the cores idle (0: never; "
        "default 240, 10 with --quick)",
    )
    ap.add_argument("--json", default=None, help="also write the results to this file")
    args = ap.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    unknown = [o for o in ops if o not in OPS]
    if unknown or not ops:
        ap.error(f"unknown op(s) {unknown}; choose from {','.join(OPS)}")
    target = args.seconds if args.seconds is not None else (0.1 if args.quick else 3.0)

    # A fresh, empty kernel cache: cold compiles are real, cached loads find only ours.
    cache = tempfile.mkdtemp(prefix="solar-bench-cache-")
    os.environ["SOLAR_CACHE_DIR"] = cache

    import numba
    import solar
    import torch

    torch.set_num_threads(os.cpu_count())
    torch_ops = _torch_ops()
    t_start = time.perf_counter()
    busy_start = busy_fraction()
    print(f"executor benchmark: {len(ops)} op(s), {'quick sizes' if args.quick else 'full sizes'}")
    print(f"  fresh SOLAR_CACHE_DIR={cache}")
    rows: list = []
    warnings: list = []
    if args.max_wait is None:
        args.max_wait = 10.0 if args.quick else 240.0
    quiet = Quiet(args.max_wait)
    # The warm-up program compiles here, once, so that each cached-load process finds it.
    warmup = os.path.join(tempfile.mkdtemp(prefix="solar-bench-warmup-"), "warmup.py")
    Path(warmup).write_text(WARMUP_IR)
    solar.run(warmup, solar.make_inputs(warmup, seed=0), bounds_check=False)
    quiet.wait()
    peak_flops, peak_bytes = machine_peaks(args.quick)
    print(
        f"  machine peaks: {peak_flops / 1e9:.1f} GFLOP/s (torch.matmul fp32), "
        f"{peak_bytes / 1e9:.1f} GB/s (NumPy copy)",
        flush=True,
    )
    for op in ops:
        bench_op(op, args.quick, target, torch_ops, warmup, quiet, rows, warnings)
    for r in rows:
        r["sol_ms"] = max(r["flops"] / peak_flops, r["bytes"] / peak_bytes) * 1e3

    print()
    hdr = (
        f"{'op':<17} {'output':>15} {'Solar ms':>10} {'checked ms':>10} {'Numba ms':>10} "
        f"{'torch ms':>10} {'Numba/Solar':>11} {'Solar/torch':>11} {'checked/torch':>13} "
        f"{'Solar %SOL':>10} {'torch %SOL':>10} {'cold s':>7} {'cached ms':>9}  check"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        cached_ms = max(r["cached_ms"], 0.0)
        noisy = f", noisy ({r['other_load']:.0%} other load)" if r["other_load"] > NOISY else ""
        print(
            f"{r['op']:<17} {r['shape']:>15} {r['solar_ms']:10.2f} {r['checked_ms']:10.2f} "
            f"{r['numba_ms']:10.2f} {r['torch_ms']:10.2f} {r['numba_ms'] / r['solar_ms']:11.2f} "
            f"{r['solar_ms'] / r['torch_ms']:11.2f} {r['checked_ms'] / r['torch_ms']:13.2f} "
            f"{r['sol_ms'] / r['solar_ms']:10.0%} {r['sol_ms'] / r['torch_ms']:10.0%} "
            f"{r['cold_s']:7.2f} {cached_ms:9.1f}  "
            f"{'ok' if r['agree'] else 'MISMATCH'}{noisy}"
        )
    print("-" * len(hdr))
    g_numba = geomean([r["numba_ms"] / r["solar_ms"] for r in rows])
    g_torch = geomean([r["solar_ms"] / r["torch_ms"] for r in rows])
    worst = max(rows, key=lambda r: r["solar_ms"] / r["torch_ms"])
    w_torch = worst["solar_ms"] / worst["torch_ms"]
    print(
        f"geomean native vs Numba (Numba ms / Solar ms, >= 1 means Solar faster): {g_numba:.2f}"
        f"  [target >= 2.0: {'met' if g_numba >= 2.0 else 'NOT met'}]"
    )
    print(
        f"geomean native vs torch (Solar ms / torch ms, <= 1 means Solar faster): {g_torch:.2f}"
        f"  [target <= 1.5: {'met' if g_torch <= 1.5 else 'NOT met'}]"
    )
    print(
        f"worst op vs torch: {worst['op']} {w_torch:.2f}"
        f"  [target <= 3.0: {'met' if w_torch <= 3.0 else 'NOT met'}]"
    )
    for name, key in (("unchecked", "solar_ms"), ("checked", "checked_ms")):
        g = geomean([r[key] / r["torch_ms"] for r in rows])
        w = max(rows, key=lambda r: r[key] / r["torch_ms"])
        met = g <= 1.2 and w[key] / w["torch_ms"] <= 2.0
        print(
            f"issue 44, {name}: geomean Solar/torch {g:.2f}, worst {w['op']} "
            f"{w[key] / w['torch_ms']:.2f}  [target <= 1.2 and <= 2.0: "
            f"{'met' if met else 'NOT met'}]"
        )
    print(
        f"%SOL against this machine's measured peaks: {peak_flops / 1e9:.1f} GFLOP/s, "
        f"{peak_bytes / 1e9:.1f} GB/s; FLOPs and fused bytes as solar.analyze counts them"
    )
    for w in warnings:
        print(w)
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "?"
    print(f"machine: {machine()}")
    busy_end = busy_fraction()
    note = ""
    if any(r["other_load"] > NOISY for r in rows):
        note = (
            f" (rows marked noisy: other processes used > {NOISY:.0%} of the cores while they "
            "were timed: rerun on a quiet machine)"
        )
    print(
        f"CPU busy (all processes) over 1 s before the run {busy_start:.0%}, "
        f"after it {busy_end:.0%}{note}"
    )
    print(
        f"threads: torch {torch.get_num_threads()} (torch {torch.__version__}), numba "
        f"{numba.config.NUMBA_NUM_THREADS} ({layer} layer, numba {numba.__version__}), "
        f"Solar OpenMP default (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}); "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}"
    )
    print(
        "tolerances vs torch: contractions rtol "
        f"{TOL_CONTRACTION[0]:g}, atol {TOL_CONTRACTION[1]:g} x max|ref|; others rtol "
        f"{TOL_POINTWISE[0]:g}, atol {TOL_POINTWISE[1]:g} x max|ref|"
    )
    print(
        "compile latency (cold s, cached ms) per kernel, measured at the --quick sizes; cached "
        "0.0 = below the timing noise"
    )
    print(
        "one-time cost of a new process's first native call (libgomp, OpenMP threads; not in "
        "'cached'), ms: " + ", ".join(f"{r['process_first_ms']:.0f}" for r in rows)
    )
    print(
        "Numba's first call (translation + compile) per kernel, s: "
        + ", ".join(f"{r['op']} {r['numba_first_s']:.1f}" for r in rows)
    )
    print(f"waited {quiet.waited:.0f} s for idle cores (--max-wait {args.max_wait:g})")
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "geomean_numba_over_solar": g_numba,
                    "geomean_solar_over_torch": g_torch,
                    "worst_solar_over_torch": {"op": worst["op"], "ratio": w_torch},
                    "peak_flops_per_second": peak_flops,
                    "peak_bytes_per_second": peak_bytes,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
