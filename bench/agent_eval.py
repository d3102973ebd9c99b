"""Quality of the agentic front end (docs/agent.md, "Benchmark"): translates a suite of
programs through an LLM endpoint and reports pass@1, pass@k, mean iterations, tokens, cost,
failures by category, and how often the accepted translation's fused bound equals the
ground truth's (the hand-written IR of workloads/{numpy,cuda,triton}/ir/, or the
deterministic front end's lowering for PyTorch and JAX programs).

    .venv/bin/python bench/agent_eval.py --endpoint http://127.0.0.1:8000/v1 --model M \\
        [--suite numpy,cuda,triton,pytorch,jax] [--samples 3] [--limit 10] [--out runs.jsonl]

It needs an OpenAI-compatible endpoint (SOLAR_LLM_API_KEY for hosted ones); the test suite
runs it against a scripted server (tests/python/test_agent_eval.py). Every sample is a fresh
translation (the cache is off), at the endpoint's temperature (--temperature, default 0.7
when --samples > 1, else 0).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT / "workloads"


@dataclass
class Program:
    suite: str
    source: Path
    reference: Path | None = None
    truth: Path | None = None  # a hand-written IR translation, where there is one


@dataclass
class Sample:
    suite: str
    source: str
    sample: int
    accepted: bool
    iterations: int
    category: str  # "" when accepted
    tokens: int
    cost: float
    seconds: float
    validation: str = ""
    bound_matches: bool | None = None  # None: no ground truth
    problem: str = ""
    notes: list = field(default_factory=list)


def suite_programs(suites: list[str]) -> list[Program]:
    out = []
    for suite in suites:
        if suite == "numpy":
            for p in sorted((WORKLOADS / "numpy").glob("*.py")):
                out.append(Program("numpy", p, None, WORKLOADS / "numpy" / "ir" / p.name))
        elif suite in ("cuda", "triton"):
            pattern = "*.cu" if suite == "cuda" else "*.py"
            for p in sorted((WORKLOADS / suite).glob(pattern)):
                ref = WORKLOADS / suite / "ref" / (p.stem + ".py")
                out.append(Program(suite, p, ref, WORKLOADS / suite / "ir" / (p.stem + ".py")))
        elif suite == "pytorch":
            for level in ("level1", "level2", "level3"):
                out += [Program("pytorch", p) for p in sorted((WORKLOADS / level).glob("*.py"))]
        elif suite == "jax":
            out += [Program("jax", p) for p in sorted((WORKLOADS / "jax").rglob("*.py"))]
        else:
            raise SystemExit(
                f"agent_eval: unknown suite {suite!r} (numpy, cuda, triton, pytorch, jax)"
            )
    return out


def fused_bytes_of_truth(program: Program) -> float | None:
    """The fused bytes of the ground truth: the hand-written IR, or the deterministic front
    end's lowering (no validation) of a PyTorch or JAX program."""
    import solar
    from solar import _core

    arch = solar.load_arch("H100_PCIe")
    if program.truth is not None and program.truth.is_file():
        graph = solar.trace(program.truth)
        return _core.analyze(graph, arch).fused.bytes
    if program.suite == "pytorch":
        from solar.pytorch import analyze_pytorch

        return analyze_pytorch(str(program.source), validate=False).analyses[0].fused.bytes
    if program.suite == "jax":
        from solar.jax import analyze_jax

        return analyze_jax(str(program.source), validate=False).analyses[0].fused.bytes
    return None


def run_sample(program: Program, i: int, args, endpoint) -> Sample:
    from solar import _core
    from solar.agent import TranslationError, translate
    from solar.errors import UserError

    start = time.monotonic()
    try:
        t = translate(
            str(program.source),
            lang=program.suite,
            reference=str(program.reference) if program.reference else None,
            endpoint=endpoint,
            max_iters=args.max_iters,
            max_seconds=args.max_seconds,
            max_tokens=args.max_tokens,
            cache=False,
            backend=args.backend,
        )
    except TranslationError as e:
        tr = e.translation
        return Sample(
            program.suite,
            _rel(program.source),
            i,
            False,
            len(tr.attempts),
            e.category,
            tr.tokens,
            tr.cost,
            time.monotonic() - start,
            problem=e.diagnostics[0].message[:300],
        )
    except UserError as e:  # the program or its reference cannot be run here
        return Sample(
            program.suite,
            _rel(program.source),
            i,
            False,
            0,
            "setup",
            0,
            0.0,
            time.monotonic() - start,
            problem=str(e)[:300],
        )
    sample = Sample(
        program.suite,
        _rel(program.source),
        i,
        True,
        t.iterations,
        "",
        t.tokens,
        t.cost,
        time.monotonic() - start,
        t.validation,
    )
    if args.bounds:
        import solar

        truth = fused_bytes_of_truth(program)
        if truth is not None:
            graph = _core.trace(_core.load_program_source(t.program, str(program.source)), [])
            got = _core.analyze(graph, solar.load_arch("H100_PCIe")).fused.bytes
            sample.bound_matches = got == truth
            if got != truth:
                sample.notes.append(f"fused bytes {got:.0f}, ground truth {truth:.0f}")
    return sample


def _rel(p: Path) -> str:
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples with c accepted (Chen et al., 2021):
    1 - C(n - c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def summary(samples: list[Sample], n: int) -> list[str]:
    by_program: dict = {}
    for s in samples:
        by_program.setdefault(s.source, []).append(s)
    lines = [f"agent_eval: {len(by_program)} programs x {n} sample(s)"]
    ks = sorted({1, n})
    for k in ks:
        rate = sum(pass_at_k(len(v), sum(x.accepted for x in v), k) for v in by_program.values())
        lines.append(f"  pass@{k}: {rate / max(len(by_program), 1):.3f}")
    accepted = [s for s in samples if s.accepted]
    first = sum(1 for s in accepted if s.iterations == 1)
    mean_iters = sum(s.iterations for s in accepted) / len(accepted) if accepted else float("nan")
    lines.append(
        f"  accepted samples: {len(accepted)}/{len(samples)}; first attempt: {first}; "
        f"mean iterations when accepted: {mean_iters:.2f}"
    )
    tokens = sum(s.tokens for s in samples)
    cost = sum(s.cost for s in samples)
    lines.append(
        f"  tokens: {tokens:,} ({tokens / max(len(samples), 1):,.0f} per sample); cost: ${cost:.4f}"
    )
    failures = Counter(s.category for s in samples if not s.accepted)
    if failures:
        lines.append(
            "  failures by category: " + ", ".join(f"{k} {v}" for k, v in failures.most_common())
        )
    judged = [s for s in accepted if s.bound_matches is not None]
    if judged:
        lines.append(
            f"  fused bound equal to the ground truth: {sum(s.bound_matches for s in judged)}"
            f"/{len(judged)}"
        )
    by_suite = Counter(s.suite for s in samples)
    ok_suite = Counter(s.suite for s in accepted)
    lines.append(
        "  by suite (accepted/samples): "
        + ", ".join(f"{k} {ok_suite[k]}/{v}" for k, v in sorted(by_suite.items()))
    )
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", help="OpenAI-compatible base URL (default $SOLAR_LLM_BASE_URL)")
    p.add_argument("--model", help="model name (default $SOLAR_LLM_MODEL)")
    p.add_argument("--suite", default="numpy,cuda,triton,pytorch,jax")
    p.add_argument("--samples", type=int, default=1, help="translations per program (pass@k)")
    p.add_argument("--temperature", type=float, help="default 0.7 with --samples > 1, else 0")
    p.add_argument("--limit", type=int, default=0, help="programs per suite (0: all)")
    p.add_argument("--max-iters", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=900)
    p.add_argument("--max-tokens", type=int, default=400_000)
    p.add_argument("--timeout", type=float, default=120, help="seconds per request")
    p.add_argument("--backend", default="native", choices=["native", "interpreter"])
    p.add_argument(
        "--no-bounds",
        dest="bounds",
        action="store_false",
        help="skip comparing fused bounds with the ground truth",
    )
    p.add_argument("--out", help="one JSON object per sample")
    args = p.parse_args(argv)

    from solar.agent import Endpoint
    from solar.errors import UserError

    temperature = args.temperature
    if temperature is None:
        temperature = 0.7 if args.samples > 1 else 0.0
    try:
        endpoint = Endpoint.from_env(
            args.endpoint, args.model, timeout=args.timeout, temperature=temperature
        )
    except UserError as e:
        print(e, file=sys.stderr)
        return 1
    programs = []
    for suite in args.suite.split(","):
        chosen = suite_programs([suite.strip()])
        programs += chosen[: args.limit] if args.limit else chosen
    out = open(args.out, "w") if args.out else None  # noqa: SIM115
    samples = []
    try:
        for n, program in enumerate(programs, 1):
            for i in range(args.samples):
                s = run_sample(program, i, args, endpoint)
                samples.append(s)
                verdict = "ok" if s.accepted else f"FAIL ({s.category})"
                print(
                    f"[{n}/{len(programs)}] {s.source} #{i}: {verdict}, {s.iterations} "
                    f"iteration(s), {s.tokens:,} tokens",
                    file=sys.stderr,
                    flush=True,
                )
                if out:
                    out.write(json.dumps(asdict(s)) + "\n")
                    out.flush()
    finally:
        if out:
            out.close()
    print("\n".join(summary(samples, args.samples)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
