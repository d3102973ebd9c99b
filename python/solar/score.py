"""`solar score`: the SOL-ExecBench score of measured kernels against Solar's bounds.

For a workload with a speed-of-light time T_SOL (a `solar batch` result's bound in one
mode, fused by default), a kernel measured at T_k and a baseline measured at T_b:

    S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL))

S = 1 for a kernel at the bound, 1/2 for one as fast as the baseline, toward 0 for slower
ones. Two cases fall outside the formula and are reported, never scored silently:

- T_k < T_SOL: the kernel beats a lower bound. The bound is wrong or the measurement is.
  This is a **violation**. S is printed as the formula gives it: above 1, or negative when
  the kernel is further under the bound than the baseline is over it. It is left out of
  the mean.
- T_b <= T_SOL: the baseline is at or under the bound. The denominator is zero or negative,
  so S is undefined (None). If T_b < T_SOL, that is also a violation.

Timings files hold a name and two times per workload. They can be JSON lines, a JSON list
or object, or CSV. A time is given as `kernel_seconds`/`kernel_ms`/`kernel_us` and
`baseline_seconds`/`baseline_ms`/`baseline_us`, or as `kernel` and `baseline` in seconds.
A name matches a result by its source path, its file name or its stem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .timings import match_source, named, read, time_of, timings_line


@dataclass
class Score:
    name: str
    t_sol: float
    t_kernel: float
    t_baseline: float
    score: float | None
    violation: str  # "" or what beat the bound
    warm: bool = False  # the bound is --warm's (docs/sol-modes.md, "Starting state")

    @property
    def headroom(self) -> float:
        return self.t_kernel / self.t_sol if self.t_sol > 0 else math.inf


def sol_score(t_kernel: float, t_baseline: float, t_sol: float) -> tuple[float | None, str]:
    """(S, violation) by the formula above; S is None where it is undefined."""
    violation = []
    if t_kernel < t_sol:
        violation.append(f"the kernel ({t_kernel:.4g} s) beats the bound ({t_sol:.4g} s)")
    if t_baseline < t_sol:
        violation.append(f"the baseline ({t_baseline:.4g} s) beats the bound ({t_sol:.4g} s)")
    if t_baseline <= t_sol:
        return None, "; ".join(violation)
    return 1.0 / (1.0 + (t_kernel - t_sol) / (t_baseline - t_sol)), "; ".join(violation)


def load_timings(path: str) -> dict[str, tuple[float, float]]:
    """name -> (kernel seconds, baseline seconds)."""
    out = {}
    for n, row in enumerate(named(read(path), path), 1):
        where = f"{path}: entry {n}"
        out[str(row["name"])] = (time_of(row, where, "kernel"), time_of(row, where, "baseline"))
    return out


def score_results(results: list[dict], timings: dict, mode: str = "fused") -> tuple[list, list]:
    """(Scores of the results that have timings, names of timings with no result)."""
    scores, used = [], set()
    for r in results:
        if r.get("status") != "ok":
            continue
        key = match_source(r["source"], timings)
        if key is None:
            continue
        used.add(key)
        t_sol = float(r["totals"]["seconds"][mode])
        k, b = timings[key]
        s, violation = sol_score(k, b, t_sol)
        warm = bool(r.get("starting_state", {}).get("warm", False))
        scores.append(Score(r["source"], t_sol, k, b, s, violation, warm))
    return scores, sorted(set(timings) - used)


def report(scores: list, unmatched: list, mode: str) -> str:
    from .report import seconds

    lines = [
        f"{'workload':40s} {'SOL (' + mode + ')':>14s} {'kernel':>10s} {'baseline':>10s}"
        f" {'score':>7s}"
    ]
    for s in scores:
        value = "n/a" if s.score is None else f"{s.score:.3f}"
        lines.append(
            f"{Path(s.name).name:40s} {seconds(s.t_sol):>14s} {seconds(s.t_kernel):>10s} "
            f"{seconds(s.t_baseline):>10s} {value:>7s}"
            + (f"  VIOLATION: {s.violation}" if s.violation else "")
        )
    defined = [s.score for s in scores if s.score is not None and not s.violation]
    undefined = sum(1 for s in scores if s.score is None)
    if defined:
        lines.append(
            f"mean score {sum(defined) / len(defined):.3f} over {len(defined)} workload(s)"
            + (f"; {undefined} undefined (baseline at or under SOL)" if undefined else "")
            + ("; violations left out" if any(s.violation for s in scores) else "")
        )
    violations = [s for s in scores if s.violation]
    if violations:
        lines.append(
            f"{len(violations)} VIOLATION(S) of the bound: check the bound and the timings"
        )
    if unmatched:
        lines.append(f"no result for {len(unmatched)} timing(s): {', '.join(unmatched[:5])}")
    lines.append(timings_line(any(s.warm for s in scores)))
    return "\n".join(lines)
