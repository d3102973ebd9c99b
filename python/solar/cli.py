"""The `solar` command line. Exit codes: 0 success; 1 a user error (the message on stderr),
a validation mismatch or a SOL violation; 2 an internal error (a bug in Solar); 130
interrupted (Ctrl-C)."""

from __future__ import annotations

import argparse
import os
import sys
import time
import zipfile
import zlib
from pathlib import Path

from . import _core, report
from .accuracy import with_quantize
from .api import dim_overrides, list_archs, load_arch
from .errors import InternalError, UserError, argument_error
from .session import analyze_graph


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default exits 2; a bad option is a user error
        self.print_usage(sys.stderr)
        print(f"solar: error: {message}", file=sys.stderr)
        sys.exit(1)


# --fp32-math: how fp32 contractions may run (docs/sol-modes.md, "Math modes").
FP32_MATH = ["fp32", "tf32", "bf16", "fp16", "fp8"]
QUANTIZE_HELP = (
    "price the contractions that read a weight as a quantised inference engine runs them: "
    + ", ".join(_core.quant_recipe_names())
    + "; a group size as RECIPE:gN, e.g. w4a16:g64 (docs/sol-modes.md, "
    '"Quantisation recipes")'
)
KV_CACHE_HELP = (
    "store the KV cache (the inputs a decode step appends to) and multiply it in this format: "
    + ", ".join(_core.kv_cache_format_names())
    + ' (docs/sol-modes.md, "Quantisation recipes")'
)

QUIET_HELP = "print no progress on stderr (results and errors still print)"


def _dims(values: list[str] | None) -> list[tuple[str, int]]:
    out = []
    for item in values or []:
        name, sep, size = item.partition("=")
        if not sep or not name or not size.strip().lstrip("-").isdigit():
            raise argument_error(f"--dim {item}: expected NAME=INTEGER", "for example --dim B=64")
        out.append((name.strip(), int(size)))
    return dim_overrides(out)


def _load_graph(args):
    from .api import check

    return _core.trace(check(args.file), _dims(args.dim))


def cmd_check(args) -> int:
    from .api import check

    program = check(args.file)
    if args.dump:
        print(_core.check_dump(args.file, args.dump), end="")
        return 0
    kernels = ", ".join(program.kernels) or "none"
    print(f"{args.file}: ok ({len(program.kernels)} kernels: {kernels})")
    return 0


def _archs(names):
    """--arch values: names or spec paths, repeated or comma-separated, or 'all'."""
    from .explore import resolve_archs

    return resolve_archs(names or ["H100_PCIe"])


def _headroom_data(measured) -> list[dict] | None:
    """A --measure result as the headroom bars' data (one bar per architecture; the SOL is
    that of the measured sizes)."""
    if measured is None:
        return None
    name = Path(measured.source).stem
    compiled = measured.compiled.median if measured.compiled else None
    return [
        {
            "name": f"{name} on {s.arch}",
            "measured_seconds": {"eager": measured.eager.median, "compile": compiled},
            "sol_seconds": {"unfused": s.unfused_seconds, "fused": s.fused_seconds},
        }
        for s in measured.sols
        if s.fused_seconds > 0  # a bound of 0 (only views returned) has no headroom
    ] or None


def _visual_reports(args, graph, archs, analyses, validation, measured=None) -> None:
    """--html and --png (docs/reports.md); the figures are drawn once for both."""
    from . import html_report, plots
    from .curve import curves

    curve = curves(graph, archs[0])[0]  # marks: every arch's cache capacity
    if not any(p["dram_bytes"] for p in curve):
        curve = None  # no traffic at any capacity (only views returned): nothing to plot
    headroom = _headroom_data(measured)
    figures = plots.report_figures(graph, archs, analyses, curve=curve, headroom=headroom)
    if args.html:
        html_report.write_report(
            args.html, args.file, graph, archs, analyses, validation, curve=curve,
            headroom=headroom, figures=figures,
        )  # fmt: skip
        print(f"wrote {args.html}")
    if args.png:
        paths = plots.save_all(figures, args.png)
        print(f"wrote {', '.join(str(p) for p in paths)}")


# Seconds between the progress lines of a long stage when stderr is no terminal.
PROGRESS_INTERVAL = 30.0


def _terminal_progress(what: str, quiet: bool = False):
    """Progress on stderr: on a terminal, a one-line stage display rewritten in place; else
    (a script, CI, nohup, a batch worker's log) one line per stage as it ends, `what: stage
    done in N s`, and a line `what: stage (N s)` every PROGRESS_INTERVAL seconds while a
    stage runs, so a long one is not silent until its end. `show("")` ends it; `quiet`
    (--quiet) prints nothing."""
    import time

    if quiet:
        return lambda stage: None
    start = time.perf_counter()
    if not sys.stderr.isatty():
        return _line_progress(what, start)

    def show(stage: str) -> None:
        line = f"{what}: {stage} ({time.perf_counter() - start:.1f} s)" if stage else ""
        sys.stderr.write("\r\033[K" + line)
        sys.stderr.flush()

    return show


def _line_progress(what: str, start: float):
    """`_terminal_progress` where stderr is no terminal: a line as each stage ends, and a
    daemon thread that writes the current stage every PROGRESS_INTERVAL seconds until
    `show("")` (or the process's end)."""
    import threading
    import time

    stream, interval = sys.stderr, PROGRESS_INTERVAL
    current = {"stage": "", "since": start}
    lock = threading.Lock()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(interval):
            with lock:
                if current["stage"]:
                    elapsed = time.perf_counter() - start
                    stream.write(f"{what}: {current['stage']} ({elapsed:.0f} s)\n")
                    stream.flush()

    threading.Thread(target=beat, name="solar-progress", daemon=True).start()

    def show(stage: str) -> None:
        now = time.perf_counter()
        with lock:
            if current["stage"] and stage != current["stage"]:
                took = now - current["since"]
                stream.write(f"{what}: {current['stage']} done in {took:.1f} s\n")
                stream.flush()
            if stage != current["stage"]:
                current["stage"], current["since"] = stage, now
        if not stage:
            done.set()

    return show


def _definition_problem(args) -> str | None:
    """For `solar analyze definition.json`: the generated PyTorch problem file of its one
    workload (or of --workload UUID), or None after printing a table for several."""
    from . import accuracy
    from .definitions import WorkloadTemplates, fp32_math_of, problem_text, slug, workloads_of
    from .execution import cache_dir

    d, items = workloads_of(args.file, args.workloads, dict(_dims(args.dim)))
    math_note = ""
    if args.fp32_math == "default":
        # The reference's fp32 arithmetic may run in the format of the data (docs/definitions.md,
        # "Math mode").
        args.fp32_math = fp32_math_of(d)
        if args.fp32_math != "default":
            math_note = (
                f"  note: the definition's data is {args.fp32_math}, so its reference's fp32 "
                f"products are priced at the {args.fp32_math} rate, as its kernels run them "
                '(docs/definitions.md, "Math mode"; --fp32-math fp32 prices them as written)'
            )
    narrow = sorted(
        {
            spec["dtype"]
            for spec in d.inputs.values()
            if spec["dtype"].startswith("float4") or spec["dtype"] == "uint8"
        }
    )
    args.definition_narrow = ", ".join(narrow)
    if args.workload:
        items = [(w, a) for w, a in items if w.uuid == args.workload]
        if not items:
            raise argument_error(f"{args.file}: no workload {args.workload!r}")
    folder = Path(cache_dir()).parent / "definitions" / slug(d.name)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for w, axes in items:
        path = folder / f"{slug(w.uuid)}.py"
        tmp = folder / f".{slug(w.uuid)}.{os.getpid()}.tmp"  # concurrent batches: atomic
        tmp.write_text(problem_text(d, w, axes))
        os.replace(tmp, path)
        paths.append((w, axes, str(path)))
    from .accuracy import workload_policy

    if len(paths) == 1:
        w, axes, path = paths[0]
        args.policy = workload_policy(w.tolerance, args.fp32_math)
        _check_definition_outputs(d, w, axes, path)
        args.definition_line = (
            f"  definition {d.name}, workload {w.uuid} ("
            + ", ".join(f"{k}={v}" for k, v in axes.items())
            + f"); problem file {path}"
        )
        if math_note:
            args.definition_line += "\n" + math_note
        return path
    from .pytorch import analyze_pytorch

    archs = _archs(args.arch)
    rows = []
    print(f"{d.name}: {len(paths)} workloads on {archs[0].name} (docs/definitions.md)")
    print(f"{'workload':38s} {'fused SOL':>12s} {'bound by':>10s}  {'validation':10s}  IR from")
    if math_note:
        print(math_note)
    failed = False
    started = time.perf_counter()
    sizes = WorkloadTemplates(
        d,
        [(w, axes) for w, axes, _ in paths],
        args.no_validate,
        getattr(args, "capture_each", False),
    )

    def tell(done: int) -> None:  # the pace and the time left on stderr, as solar batch
        if not args.quiet:
            pace = report.rate_line(done, time.perf_counter() - started, len(paths) - done)
            print(f"{args.file}: workload {done}/{len(paths)} ({pace})", file=sys.stderr)

    for done, i in enumerate(sizes.order, 1):
        w, axes, path = paths[i]
        policy = (
            accuracy.parse(args.accuracy, args.fp32_math)
            if args.accuracy is not None
            else workload_policy(w.tolerance, args.fp32_math)
        )
        try:
            route = _check_definition_outputs(d, w, axes, path)
            r = sizes.from_template(i, route, path, archs, policy, not args.no_cache_aware)
            if r is None:
                r = analyze_pytorch(
                    path,
                    archs=archs,
                    fp32_math=policy,
                    validate=not args.no_validate,
                    backend=args.backend,
                    cache_aware=not args.no_cache_aware,
                )
                sizes.captured(i, r, route)
        except UserError as e:
            # One workload's error (its safetensors file missing) leaves the others to run:
            # its row says so, the full message goes to stderr, and the command exits 1.
            failed = True
            print(f"{w.uuid[:38]:38s} {'error':>12s} {'':>10s}  {e.kind}", flush=True)
            print(str(e), file=sys.stderr)
            rows.append({"workload": w.uuid, "axes": axes, "error": str(e)})
            tell(done)
            continue
        a = r.analyses[0]
        failed = failed or r.validation.status == "failed"
        print(
            f"{w.uuid[:38]:38s} {report.seconds(a.fused.seconds):>12s} "
            f"{report.bottleneck_text(a.fused.bottleneck):>10s}  {r.validation.status:10s}  "
            f"{sizes.source[i]}",
            flush=True,
        )
        tell(done)
        if narrow and (note := _narrow_note(args.definition_narrow, a)):
            print(note)
        if args.json:
            import json

            doc = json.loads(
                _core.analysis_json(
                    r.graph, archs, r.analyses, r.validation.status, r.validation.detail
                )
            )
            rows.append({"workload": w.uuid, "axes": axes, "ir_from": sizes.source[i], **doc})
    print(sizes.summary())
    if args.json:
        import json

        Path(args.json).write_text(
            json.dumps({"schema": "solar.definition/1", "definition": d.name, "workloads": rows})
            + "\n"
        )
        print(f"wrote {args.json}")
    return "failed" if failed else ""


def _check_definition_outputs(d, w, axes: dict, path: str) -> tuple | None:
    """The reference's outputs (a run on fake tensors) against the definition's declared
    shapes and dtypes (docs/definitions.md); the route the run took (definitions.reference_run),
    None when it failed."""
    from .definitions import check_outputs, reference_run

    returned, route = reference_run(path)
    if returned is not None:
        check_outputs(d, w, axes, returned)
    return route


def _narrow_note(dtypes: str, analysis) -> str:
    """A definition with narrow inputs whose reference computes in a wider format ("" where
    a contraction already runs as fp4, at its rate or the platform's fastest narrow one:
    `torch._scaled_mm` on NVFP4 operands)."""
    if any(n.math_mode.startswith("fp4") for n in analysis.nodes):
        return ""
    return (
        f"  note: the inputs are {dtypes}; the compute term follows the reference's own "
        "arithmetic, so a kernel that multiplies in the narrow format (FP4 tensor cores) "
        f"is bounded by the memory term alone: {report.seconds(analysis.fused.memory_seconds)}"
        " (docs/definitions.md)"
    )


def cmd_analyze(args) -> int:
    """A PyTorch or JAX program, or a definition, runs contained (solar/contain.py): in a
    worker under --timeout and --memory-limit; an IR program is never executed as Python."""
    from .contain import parse_memory, run_contained
    from .definitions import is_definition
    from .frontend.kind import program_kind

    memory_limit = parse_memory(args.memory_limit)
    if args.timeout < 0:
        raise argument_error(f"--timeout {args.timeout:g}: seconds, 0 or more (0: no limit)")
    runs_python = is_definition(args.file) or program_kind(args.file) in ("pytorch", "jax")
    if args.lang or not runs_python:
        return _analyze_from(args)
    return run_contained(
        lambda: _guarded(_analyze_from, args), args.file, args.timeout, memory_limit, args.argv
    )


def _analyze_from(args) -> int:
    """_analyze with --warm's starting state for every analysis it makes."""
    from .session import starting_state

    with starting_state(warm=args.warm):
        return _analyze(args)


def _math_policy(args, kind: str, workload=None):
    """How the contractions of a program of `kind` are priced (solar/accuracy.py): --accuracy,
    else a definition workload's tolerance (`workload`), else the default of its kind
    (KernelBench's 1e-2 for PyTorch and JAX, none for IR); with --fp32-math, --quantize and
    --kv-cache. One rule for analyze, inverse and sweep."""
    from . import accuracy

    if args.accuracy is not None:
        policy = accuracy.parse(args.accuracy, args.fp32_math)
    elif workload is not None:
        policy = workload
    else:
        policy = accuracy.default_policy(kind, args.fp32_math)
    return with_quantize(policy, args.quantize, args.kv_cache)


def _analyze(args) -> int:
    from .definitions import is_definition
    from .frontend.kind import program_kind

    args.definition_line = args.definition_narrow = ""
    args.policy = None  # a definition's workload sets its tolerance's contract
    if is_definition(args.file):
        problem = _definition_problem(args)
        if problem in ("", "failed"):
            return 1 if problem == "failed" else 0
        args.file = problem

    archs = _archs(args.arch)
    kind = program_kind(args.file)
    # From here on args.fp32_math carries the accuracy contract too (solar/accuracy.py).
    args.fp32_math = _math_policy(args, "ir" if args.lang else kind, args.policy)
    if args.fp32_math.line():
        extra_contract = [args.fp32_math.line()]
    else:
        extra_contract = []
    validation = ("none", "not validated (an IR program; run `solar validate` to execute it)")
    extra = []
    measured = None  # measure.Measurement with --measure
    if args.compile and not args.measure:
        raise argument_error("--compile times torch.compile: it needs --measure")
    if args.llm_fallback and (args.lang or kind == "ir"):
        raise argument_error(
            "--llm-fallback applies to PyTorch and JAX programs (operators without a "
            "lowering); --lang translates a whole program"
        )
    if args.lang:
        import tempfile

        if args.measure or args.phase or args.training:
            raise argument_error("--lang translates the source: no --measure, --phase, --training")
        out = args.emit_ir or str(Path(tempfile.mkdtemp(prefix="solar-translate-")) / "ir.py")
        t = _translate(args, args.file, out)
        program = _core.load_program_source(Path(out).read_text(), args.file)
        graph = _core.trace(program, _dims(args.dim))
        analyses = [analyze_graph(graph, a, args.fp32_math, not args.no_cache_aware) for a in archs]
        validation = (t.validation, t.validation_detail)
        extra = [_translation_line(t) + (f"; IR written to {out}" if args.emit_ir else "")]
    elif kind == "jax":
        from .jax import analyze_jax

        if args.phase or args.training or args.mode or args.compile:
            raise argument_error(
                "--phase, --training, --mode and --compile apply to PyTorch programs; this "
                "is a JAX program (docs/jax.md)"
            )
        result = analyze_jax(
            args.file,
            archs=archs,
            fp32_math=args.fp32_math,
            validate=not args.no_validate,
            backend=args.backend,
            emit_ir=args.emit_ir,
            overrides=dict(_dims(args.dim)),
            cache_aware=not args.no_cache_aware,
            progress=_terminal_progress(args.file, args.quiet),
            llm_fallback=_fallback(args),
        )
        graph, analyses = result.graph, result.analyses
        validation = (result.validation.status, result.validation.detail)
        extra = [
            f"  traced {sum(result.ops.values())} jaxpr equations ({len(result.ops)} "
            f"primitives) with jax.make_jaxpr; lowered to {len(graph.nodes)} IR nodes"
            + (f"; IR written to {args.emit_ir}" if args.emit_ir else "")
        ]
        extra += [f"  note: {n}" for n in result.notes]
        if args.measure:
            from .measure import measure

            measured = measure(
                args.file,
                graph,
                archs,
                args.fp32_math,
                dict(_dims(args.dim)),
                args.repeats,
                args.warmup,
            )
    elif kind == "pytorch":
        from .pytorch import analyze_pytorch

        overrides = dict(_dims(args.dim))  # module-level size constants
        step = None
        if args.phase:
            from .llm import analyze_llm_file

            if args.training or args.measure:
                raise argument_error(
                    "--phase analyses one inference step: no --training, --measure"
                )
            step = analyze_llm_file(
                args.file,
                args.phase,
                args.batch,
                args.seq,
                args.context,
                archs=archs,
                validate=not args.no_validate,
                fp32_math=args.fp32_math,
                cache_aware=not args.no_cache_aware,
                overrides=overrides,
            )
            result = step.result
        else:
            result = None
        result = result or analyze_pytorch(
            args.file,
            archs=archs,
            fp32_math=args.fp32_math,
            validate=not args.no_validate,
            backend=args.backend,
            emit_ir=args.emit_ir,
            overrides=overrides,
            cache_aware=not args.no_cache_aware,
            mode=args.mode,
            progress=_terminal_progress(args.file, args.quiet),
            training=args.training,
            llm_fallback=_fallback(args),
        )
        graph, analyses = result.graph, result.analyses
        validation = (result.validation.status, result.validation.detail)
        extra = [
            f"  captured {sum(result.ops.values())} ATen operators "
            f"({len(result.ops)} kinds) with torch.export; lowered to "
            f"{len(graph.nodes)} IR nodes"
            + (f"; IR written to {args.emit_ir}" if args.emit_ir else "")
        ]
        extra += [f"  note: {n}" for n in result.notes]
        extra += [args.definition_line] if args.definition_line else []
        if args.definition_narrow and (
            note := _narrow_note(args.definition_narrow, result.analyses[0])
        ):
            extra.append(note)
        if step is not None:
            extra.append(
                f"  {step.phase} step: batch {step.batch}, {step.seq} new token(s) per sequence "
                f"after {step.context} cached; {step.tokens_per_second():,.0f} tokens/s at the "
                f"fused bound on {archs[0].name} (docs/llm.md)"
            )
        if args.measure:
            from .measure import measure

            measured = measure(
                args.file,
                graph,
                archs,
                args.fp32_math,
                overrides,
                args.repeats,
                args.warmup,
                args.compile,
                mode=args.mode,
            )
    else:
        if args.emit_ir:
            raise argument_error("--emit-ir applies to PyTorch programs; this is already IR")
        if args.phase or args.training:
            raise argument_error("--phase and --training apply to PyTorch programs")
        if args.measure or args.compile:
            raise argument_error(
                "--measure and --compile time a PyTorch program; this is an IR program",
                "analyse the PyTorch program it came from, or time the IR with `solar run`",
            )
        graph = _load_graph(args)
        analyses = [analyze_graph(graph, a, args.fp32_math, not args.no_cache_aware) for a in archs]
    for i, (arch, analysis) in enumerate(zip(archs, analyses, strict=True)):
        if i:
            print()
        print(report.sol_table(graph, arch, analysis, validation=validation[0]))
        if i == 0:
            for line in [*extra_contract, *extra]:
                print(line)
            if validation[0] != "none" or extra:
                print(f"  validation: {validation[0]} — {validation[1]}")
        if measured is not None:
            from .measure import report_text

            print(report_text(measured, i))
        if args.per_node:
            print()
            print(report.node_table(graph, analysis))
    if len(archs) > 1:
        print()
        print(report.cross_table([(a.name, r) for a, r in zip(archs, analyses, strict=True)]))
    if args.curve:
        from .curve import write_curve

        write_curve(args.curve, graph, archs[0])
        print(f"\nwrote {args.curve} (cache-aware curve on {archs[0].name})")
    if args.json:
        measurements = []
        if measured is not None:
            from .measure import measurement_json

            measurements = measurement_json(measured)
        text = _core.analysis_json(
            graph, archs, analyses, validation[0], validation[1], measurements
        )
        Path(args.json).write_text(text + "\n")
        print(f"\nwrote {args.json}")
    if args.html or args.png:
        _visual_reports(args, graph, archs, analyses, validation, measured)
    violated = measured is not None and any(measured.violations(i) for i in range(len(archs)))
    return 0 if validation[0] != "failed" and not violated else 1


def _endpoint_options(p, *request_timeout: str) -> None:
    """The LLM endpoint and the translation budgets (docs/agent.md), for translate, analyze
    --lang and --llm-fallback. `request_timeout`: the option names of the per-request
    timeout (analyze's --timeout is the limit of the user's code)."""
    p.add_argument("--endpoint", help="OpenAI-compatible base URL (default $SOLAR_LLM_BASE_URL)")
    p.add_argument("--model", help="model name (default $SOLAR_LLM_MODEL)")
    p.add_argument("--max-iters", type=int, default=5, help="attempts per translation (default 5)")
    p.add_argument(
        "--max-seconds", type=float, default=900, help="wall-clock budget per translation"
    )
    p.add_argument("--max-tokens", type=int, default=400_000, help="token budget per translation")
    p.add_argument(
        *(request_timeout or ("--request-timeout",)),
        dest="request_timeout",
        metavar="SECONDS",
        type=float,
        default=120,
        help="seconds per LLM request",
    )
    p.add_argument(
        "--transcript", metavar="FILE", help="write every message and verdict (JSON lines)"
    )
    p.add_argument("--cache-dir", help="translation cache (default $SOLAR_TRANSLATION_CACHE)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")


def _endpoint(args):
    from .agent.client import Endpoint

    return Endpoint.from_env(args.endpoint, args.model, timeout=args.request_timeout)


def _translate(args, source: str, out: str | None):
    from .agent import translate

    return translate(
        source,
        lang=getattr(args, "lang", None),
        reference=args.reference,
        out=out,
        endpoint=_endpoint(args),
        max_iters=args.max_iters,
        max_seconds=args.max_seconds,
        max_tokens=args.max_tokens,
        cache=False if args.no_cache else (args.cache_dir or True),
        transcript=args.transcript,
        backend=getattr(args, "backend", "native"),
        progress=_terminal_progress(source, getattr(args, "quiet", False)),
    )


def _translation_line(t) -> str:
    how = "from the cache" if t.cached else f"in {t.iterations} attempt(s)"
    cost = f", ${t.cost:.4f}" if t.cost else ""
    return (
        f"  translated from {t.language} by {t.model} {how} "
        f"({t.tokens:,} tokens{cost}; docs/agent.md)"
    )


def _fallback(args):
    """The agent's fallback for operators without a lowering (--llm-fallback), or None."""
    if not args.llm_fallback:
        return None
    from .agent.fallback import Fallback
    from .agent.translate import Budget

    return Fallback(
        _endpoint(args),
        Budget(args.max_iters, args.max_seconds, args.max_tokens),
        False if args.no_cache else (args.cache_dir or True),
        args.transcript,
        _terminal_progress(args.file, getattr(args, "quiet", False)),
    )


def cmd_translate(args) -> int:
    t = _translate(args, args.file, args.out)
    print(f"wrote {args.out}" if args.out else t.program, end="\n" if args.out else "")
    print(_translation_line(t).strip())
    print(f"validation: {t.validation} — {t.validation_detail}")
    return 0


def cmd_batch(args) -> int:
    from .batch import run_batch, summary

    extra = ["--backend", args.backend] + (["--no-validate"] if args.no_validate else [])
    extra += ["--no-cache-aware"] if args.no_cache_aware else []
    extra += ["--warm"] if args.warm else []
    extra += ["--accuracy", args.accuracy] if args.accuracy is not None else []
    with_quantize("default", args.quantize, args.kv_cache)  # refused here, not per workload
    extra += ["--quantize", args.quantize] if args.quantize else []
    extra += ["--kv-cache", args.kv_cache] if args.kv_cache else []
    if args.measure:
        extra += ["--measure", "--repeats", str(args.repeats), "--warmup", str(args.warmup)]
        extra += ["--compile"] if args.compile else []
    elif args.compile:
        raise argument_error("--compile times torch.compile: it needs --measure")
    from .contain import parse_memory

    parse_memory(args.memory_limit)  # refused here, not once per workload
    extra += ["--timeout", f"{args.timeout:g}", "--memory-limit", args.memory_limit]
    if args.arch.lower() == "local":
        load_arch("local")  # derived (and measured) once, before the workers share it
    results = run_batch(
        args.paths,
        args.arch,
        args.out,
        args.jobs,
        args.timeout,
        extra,
        workers=args.workers,
        engine=args.engine,
        address=args.address,
        stream=open(os.devnull, "w") if args.quiet else None,  # noqa: SIM115 (the process's)
    )
    print(summary(results))
    return 0


def _batch_results(path: str) -> list:
    """The rows of a `solar batch` results file (score, headroom)."""
    from .batch import read_results

    if not Path(path).is_file():
        raise argument_error(f"no such results file: '{path}'")
    return read_results(Path(path))[0]


def cmd_score(args) -> int:
    import dataclasses
    import json

    from .score import load_timings, report, score_results

    results = _batch_results(args.results)
    scores, unmatched = score_results(results, load_timings(args.timings), args.mode)
    if not scores:
        raise argument_error(
            f"no workload of {args.results} has a timing in {args.timings}",
            "timings name a workload by its source path, file name or stem",
        )
    print(report(scores, unmatched, args.mode))
    if args.json:
        rows = [dict(dataclasses.asdict(s), headroom=s.headroom) for s in scores]
        Path(args.json).write_text(json.dumps({"mode": args.mode, "scores": rows}, indent=1))
        print(f"wrote {args.json}")
    return 1 if any(s.violation for s in scores) else 0


def cmd_headroom(args) -> int:
    from .suite_report import html_report, join, load_runtimes, text_report

    results = _batch_results(args.results)
    rows, unmatched = join(results, load_runtimes(args.timings))
    if not rows:
        raise argument_error(
            f"no workload of {args.results} has a runtime in {args.timings}",
            "runtimes name a workload by its source path, file name or stem",
        )
    print(text_report(rows, unmatched, args.mode))
    if args.html:
        title = f"Solar suite report: {Path(args.results).name}"
        Path(args.html).write_text(html_report(rows, unmatched, args.mode, title), encoding="utf-8")
        print(f"wrote {args.html}")
    return (
        1 if any(r.violation(f) for r in rows for f in ("unfused", "fused", "cache_aware")) else 0
    )


def cmd_graph(args) -> int:
    graph = _load_graph(args)
    text = graph.to_yaml()
    if args.out and args.out != "-":
        Path(args.out).write_text(text)
        print(f"wrote {args.out} ({len(graph.nodes)} nodes, {len(graph.tensors)} tensors)")
    else:
        sys.stdout.write(text)
    return 0


def cmd_format(args) -> int:
    text = _core.read_source(args.file)
    sys.stdout.write(_core.format_source(text, args.file))
    return 0


def _savez(path: str, arrays: dict) -> None:
    """Writes arrays to .npz; formats NumPy cannot store (bf16, fp8, nvfp4, int4) are
    widened to float32 / int8, which `solar run` rounds back to the declared dtype."""
    import numpy as np

    plain = {}
    for k, a in arrays.items():
        if a.dtype.kind == "V" or a.dtype.name in {
            "bfloat16",
            "float8_e4m3fn",
            "float8_e5m2",
            "float4_e2m1fn",
        }:
            a = a.astype(np.float32)
        elif a.dtype.name == "int4":
            a = a.astype(np.int8)
        plain[k] = a
    np.savez(path, **plain)


def _inputs_error(path: str, message: str, hint: str = ""):
    from .errors import Diagnostic, UserError

    d = Diagnostic("input", path, 0, 0, f"cannot read arrays from '{path}': {message}", hint)
    return UserError(str(d), [d])


_NPZ_HINT = "write it with numpy.savez(path, name=array, ...) or `solar inputs`"


def _npz_members(path: str) -> list[tuple[str, tuple, object, int]]:
    """(name, shape, dtype, bytes stored) of each array of an .npz file, read from the
    headers alone; malformed files are a user error naming the file."""
    import zipfile

    import numpy as np

    p = Path(path)
    if p.is_dir():
        raise _inputs_error(path, "it is a directory", _NPZ_HINT)
    try:
        with p.open("rb") as f:
            magic = f.read(6)
    except OSError as e:
        raise _inputs_error(path, e.strerror or str(e), _NPZ_HINT) from None
    if magic == b"\x93NUMPY":
        raise _inputs_error(
            path,
            "it is a .npy file (one unnamed array), not an .npz archive of named arrays",
            "write numpy.savez(path, x=array) with one array per model() input",
        )
    if not zipfile.is_zipfile(path):
        raise _inputs_error(path, "it is not an .npz file (not a zip archive)", _NPZ_HINT)
    members = []
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with z.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                    else:
                        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                    header = f.tell()
                if dtype.hasobject:
                    raise _inputs_error(
                        path,
                        f"array '{info.filename[:-4]}' holds Python objects, not numbers",
                        _NPZ_HINT,
                    )
                n = 1
                for d in shape:
                    n *= int(d)
                need = n * dtype.itemsize
                if need > info.file_size - header:
                    raise _inputs_error(
                        path,
                        f"array '{info.filename[:-4]}' claims shape {list(shape)} "
                        f"({need / 2**30:.3g} GiB) but holds {info.file_size - header} bytes",
                        "the file is truncated or damaged; write it again",
                    )
                members.append((info.filename[:-4], tuple(shape), dtype, need))
    except (*_NPZ_DAMAGE, ValueError, EOFError, OSError, KeyError) as e:
        raise _inputs_error(path, f"it is damaged ({e})", _NPZ_HINT) from None
    return members


# What a damaged .npz raises beyond OSError/ValueError/EOFError: a bad CRC (patched data, a
# member's bad magic), a RuntimeError from zipfile (a zip version it cannot read, "18.8", is
# NotImplementedError; a member flagged encrypted), a corrupt deflate stream.
_NPZ_DAMAGE = (zipfile.BadZipFile, RuntimeError, zlib.error)


def _loadz(path: str, max_bytes: int | None = None) -> dict:
    """The arrays of an .npz file. Checked before anything is allocated: a malformed file
    (not a zip archive, a .npy, a header claiming more than the file holds, pickled objects)
    is a user error naming the file, and arrays that would not fit `max_bytes` (default:
    the execution budget) are refused."""
    import numpy as np

    from .execution import DEFAULT_MAX_BYTES, budget_error

    members = _npz_members(path)
    total = sum(m[3] for m in members)
    limit = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    if total > limit:
        raise budget_error(
            [f"{total / 2**30:.2f} GiB to load '{path}' (budget {limit / 2**30:.2f} GiB)"], None
        )
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (*_NPZ_DAMAGE, OSError, ValueError, EOFError) as e:
        raise _inputs_error(path, f"it is damaged ({e})", _NPZ_HINT) from None


def _max_bytes(args) -> int | None:
    return int(args.max_memory * 2**30) if getattr(args, "max_memory", None) else None


def cmd_inputs(args) -> int:
    from .execution import make_inputs

    arrays = make_inputs(
        args.file, seed=args.seed, dims=_dims(args.dim), max_bytes=_max_bytes(args)
    )
    _savez(args.out, arrays)
    for k, a in arrays.items():
        print(f"{k:16s} {str(list(a.shape)):24s} {a.dtype}")
    print(f"wrote {args.out} (seed {args.seed})")
    return 0


def _execute(args, inputs=None):
    from .execution import execute

    inputs = _loadz(args.inputs, _max_bytes(args)) if inputs is None else inputs
    return execute(
        args.file,
        inputs,
        dims=_dims(args.dim) or None,
        backend=args.backend,
        bounds_check=not args.no_bounds_check,
        max_bytes=_max_bytes(args),
        max_seconds=args.max_seconds,
    )


def cmd_run(args) -> int:
    ex = _execute(args)
    for k, a in ex.outputs.items():
        print(f"{k:8s} {str(list(a.shape)):24s} {a.dtype}")
    print(f"ran {args.file} with the {ex.backend} backend in {ex.seconds:.3f} s")
    if args.out:
        _savez(args.out, ex.outputs)
        print(f"wrote {args.out}")
    return 0


def cmd_validate(args) -> int:
    import numpy as np

    from .execution import NUMPY_TYPES, model_inputs, prepare
    from .tolerance import (
        FLOAT_TYPES,
        compare_all,
        output_budgets,
        perturb,
        perturbation_unit,
    )

    inputs = _loadz(args.inputs, _max_bytes(args))
    ex = _execute(args, inputs)
    outs = ex.outputs
    expected = _loadz(args.expected, _max_bytes(args))
    # The graph of the run: its nodes decide how much rounding each output may carry.
    _, graph, _ = prepare(args.file, inputs, _dims(args.dim) or None)
    budgets = output_budgets(graph)
    keys = list(expected)
    ok = True
    print(
        f"validating {args.file} ({ex.backend} backend, {ex.seconds:.3f} s) against {args.expected}"
    )
    pairs = []
    for i, name in enumerate(outs):
        key = (
            name
            if name in expected
            else (f"arr_{i}" if f"arr_{i}" in expected else (keys[i] if i < len(keys) else None))
        )
        if key is None:
            print(f"  {name}: no expected array (expected file has {', '.join(keys)})")
            ok = False
        else:
            pairs.append((i, name, key))

    def rerun():
        # The program once more on inputs moved by one ulp: how much its outputs respond.
        # Each input is moved in its parameter's own format (an .npz widens bf16 to fp32).
        rng = np.random.default_rng(0)
        formats = {name: NUMPY_TYPES[dtype] for name, _, dtype, _ in model_inputs(args.file)}
        typed = {
            k: v.astype(formats[k]) if v.dtype.kind == "f" and formats.get(k) in FLOAT_TYPES else v
            for k, v in inputs.items()
        }
        moved = {k: perturb(v, rng) for k, v in typed.items()}
        again = _execute(args, moved).outputs
        return [again[name] for _, name, _ in pairs], perturbation_unit(typed.values())

    results = compare_all(
        [name for _, name, _ in pairs],
        [outs[name] for _, name, _ in pairs],
        [expected[key] for _, _, key in pairs],
        [graph.tensors[graph.outputs[i]].dtype for i, _, _ in pairs],
        [budgets[i] for i, _, _ in pairs],
        rerun,
        "actual",
        args.rtol,
        args.atol,
    )
    for (_, name, key), c in zip(pairs, results, strict=True):
        ok = ok and c.ok
        status = "ok" if c.ok else "MISMATCH"
        print(f"  {name} vs {key}: {status}")
        print(
            f"    shape {list(c.shape)} (expected {list(c.expected_shape)}), "
            f"dtype {c.dtype} (expected {c.expected_dtype})"
        )
        if c.shape == c.expected_shape:
            print(f"    {c.criterion}")
            print(
                f"    max abs error {c.max_abs_error:.3g}, max rel error {c.max_rel_error:.3g}"
                + (
                    f", norm-wise relative error {c.norm_error:.3g} (allowed {c.norm_allowed:.3g})"
                    if c.norm_allowed != float("inf")
                    else ""
                )
            )
            print(
                f"    mismatches {c.mismatches} of {c.elements} "
                f"({100.0 * c.mismatches / max(c.elements, 1):.4f}%)"
            )
            if c.worst_index is not None:
                print(
                    f"    worst at {list(c.worst_index)}: got {c.worst_values[0]!r}, "
                    f"expected {c.worst_values[1]!r}, error {c.worst_error:.3g} "
                    f"(allowed {c.worst_allowed:.3g})"
                )
            if c.first_mismatch is not None:
                print(
                    f"    first mismatch at {list(c.first_mismatch)}: got {c.first_values[0]!r}, "
                    f"expected {c.first_values[1]!r} (allowed error {c.first_allowed:.3g})"
                )
            print(f"    NaN {c.nan_count} (expected {c.expected_nan_count}), Inf {c.inf_count}")
        for note in c.notes:
            print(f"    {note}")
    print("all outputs match" if ok else "validation FAILED")
    return 0 if ok else 1


def cmd_arch(args) -> int:
    if args.action == "list":
        for name in list_archs():
            spec = load_arch(name)
            print(f"{name:18s} {spec.description}")
        return 0
    if args.action == "local":  # `solar arch local [--refresh]`: this machine's spec
        args.name = "local"
    if not args.name:
        raise argument_error("solar arch show NAME: give an architecture name or a spec path")
    if args.refresh:
        if args.name.lower() != "local":
            raise argument_error("--refresh re-derives the local spec: solar arch show local")
        from .local_arch import local_spec_path

        local_spec_path(refresh=True)
    a = load_arch(args.name)
    print(f"{a.name}: {a.description}")
    print(f"  file: {a.file}")
    print(f"  fp32 contractions default to: {a.fp32_matrix_mode}")
    print(f"  peaks: {a.sparsity} (no structured sparsity), at the {a.clock} clock")
    print("  matrix peaks:")
    accumulate = a.matrix_accumulate
    for k, (v, src) in a.matrix_flops_per_second.items():
        acc = f" ({accumulate[k]} accumulate)" if k in accumulate else ""
        print(f"    {k:5s} {report.rate(v, 'FLOP'):>14s}{acc}   [{src}]")
    print("  vector peaks:")
    for k, (v, src) in a.vector_flops_per_second.items():
        print(f"    {k:5s} {report.rate(v, 'FLOP'):>14s}   [{src}]")
    v, src = a.dram_bytes_per_second
    print(f"  DRAM: {report.rate(v, 'B')}   [{src}]")
    if a.on_chip:
        # Every on-chip storage level, totals over the chip (docs/arch-spec.md); the
        # cache-aware schedule uses cache_level alone, the sum bounds what any schedule holds.
        total = sum(level["capacity_bytes"] for level in a.on_chip)
        print(
            f"  on chip: {len(a.on_chip)} levels, {report.si(total, 'B')} in all"
            f" ({total:,.0f} B); the cache-aware schedule uses {a.cache_level}"
        )
    for level in a.on_chip:
        bw = level["bytes_per_second"]
        bw_text = report.rate(bw, "B") if bw else "bandwidth not published"
        used = " (cache-aware level)" if level["name"] == a.cache_level else ""
        print(
            f"    {level['name']}: {report.si(level['capacity_bytes'], 'B')}{used}, {bw_text}"
            f"   [{level['source']}]"
        )
    if a.notes:
        print(f"  notes: {a.notes}")
    return 0


def _measure_options(p) -> None:
    """--measure and its options (docs/measure.md), for analyze and batch."""
    p.add_argument(
        "--measure",
        action="store_true",
        help="PyTorch programs: time the program here and report headroom over its SOL",
    )
    p.add_argument("--compile", action="store_true", help="with --measure: time torch.compile too")
    p.add_argument("--repeats", type=int, default=5, help="timed runs (default 5; median)")
    p.add_argument("--warmup", type=int, default=2, help="untimed runs first (default 2)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="solar", description="Validated speed-of-light bounds for DL programs.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check", help="parse and check an IR program")
    c.add_argument("file")
    c.add_argument(
        "--dump",
        metavar="PASS",
        help="print the checked program after a checker pass (check_and_lower, "
        "lower_scalars, count_flops, derive_einsums) or after each (all): kernels as loop "
        "nests with their affine accesses, FLOPs per point and MAC patterns; kernel-ir: the "
        "typed scalar IR of every update",
    )
    c.set_defaults(func=cmd_check)

    a = sub.add_parser("analyze", help="SOL bounds of an IR program on one or more archs")
    a.add_argument("file")
    a.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    _containment_options(a, "the user's code (PyTorch, JAX, a definition's reference)")
    a.add_argument(
        "--arch",
        action="append",
        help="architecture name or spec path (repeatable, or a comma list A,B,C; 'all' for "
        "every spec); default H100_PCIe",
    )
    a.add_argument(
        "--dim",
        action="append",
        metavar="K=V",
        help="override a size: a DIMS entry (IR) or a module-level integer constant (PyTorch)",
    )
    a.add_argument("--per-node", action="store_true", help="print a per-node table")
    a.add_argument("--json", metavar="OUT", help="write the analysis JSON (solar.analysis/1)")
    a.add_argument("--html", metavar="OUT", help="write a self-contained HTML report with plots")
    a.add_argument("--png", metavar="DIR", help="write the report's plots as PNG files to DIR")
    a.add_argument(
        "--curve",
        metavar="OUT",
        help="write the cache-aware DRAM-traffic-versus-capacity curve (.csv or .json; "
        "the capacity point is the first --arch's cache level)",
    )
    a.add_argument(
        "--fp32-math",
        choices=FP32_MATH,
        default="default",
        help="math mode of fp32 contractions (default: the program's setting, else the "
        "platform's default, TF32 on NVIDIA Ampere and later; a definition whose data is "
        "bf16, fp16 or fp8: that format). bf16, fp16 and fp8 apply where the platform has "
        "their matrix rate",
    )
    a.add_argument(
        "--accuracy",
        metavar="TOL",
        help="the accuracy a correct implementation must meet, which decides the fastest "
        "format each contraction is priced in: X (atol = rtol = X), atol=A,rtol=R, exact, or "
        "framework (no contract: the framework's settings). Default: a definition's workload "
        "tolerance; KernelBench's 1e-2 for PyTorch and JAX programs; framework for IR "
        '(docs/sol-modes.md, "The accuracy contract")',
    )
    a.add_argument("--quantize", metavar="RECIPE", help=QUANTIZE_HELP)
    a.add_argument("--kv-cache", metavar="FORMAT", help=KV_CACHE_HELP)
    a.add_argument("--emit-ir", metavar="OUT", help="PyTorch programs: write the IR program")
    a.add_argument(
        "--mode",
        choices=["train", "eval"],
        default=None,
        help="PyTorch programs: the model's mode (default: as Model(...) builds it, training "
        "mode for a freshly built nn.Module, the KernelBench convention)",
    )
    a.add_argument(
        "--phase",
        choices=["prefill", "decode"],
        help="a Hugging Face causal LM's inference step (Model built from get_init_inputs(); "
        "docs/llm.md): prefill --seq S tokens, or decode one token, after --context cached",
    )
    a.add_argument("--batch", type=int, default=1, help="with --phase: sequences per step")
    a.add_argument("--seq", type=int, help="with --phase prefill: new tokens (default 128)")
    a.add_argument("--context", type=int, default=0, help="with --phase: cached tokens")
    a.add_argument(
        "--training",
        action="store_true",
        help="PyTorch programs: analyse a training step, forward + backward of the sum of the "
        "outputs (gradients of every parameter), validated against autograd",
    )
    a.add_argument(
        "--no-validate",
        action="store_true",
        help="PyTorch programs: skip running PyTorch and the IR to compare outputs",
    )
    a.add_argument(
        "--no-cache-aware",
        action="store_true",
        help="skip the cache-aware tiling search (its row, JSON fields and node column)",
    )
    a.add_argument(
        "--warm",
        action="store_true",
        help="a kernel repeated without flushing: the fused and cache-aware bounds let the "
        "last-level cache serve up to its capacity of the inputs, weights and outputs "
        "(default: they start in DRAM; docs/sol-modes.md, 'Starting state')",
    )
    a.add_argument(
        "--backend",
        choices=["native", "interpreter"],
        default="native",
        help="executor backend for validation",
    )
    _measure_options(a)
    a.add_argument(
        "--lang",
        choices=["pytorch", "jax", "numpy", "tensorflow", "cuda", "triton"],
        help="translate the source with the LLM agent first (docs/agent.md), then analyse",
    )
    a.add_argument("--reference", help="with --lang: the program giving golden outputs")
    a.add_argument(
        "--workloads",
        metavar="FILE",
        help="a definition.json's workloads (JSON lines; default: the file beside it)",
    )
    a.add_argument("--workload", metavar="UUID", help="with a definition: only this workload")
    a.add_argument(
        "--capture-each",
        action="store_true",
        help="with a definition and --no-validate: capture every workload, no size template "
        "(docs/definitions.md)",
    )
    a.add_argument(
        "--llm-fallback",
        action="store_true",
        help="PyTorch and JAX programs: lower operators without a rule through the LLM "
        "agent, one validated kernel each (docs/agent.md)",
    )
    _endpoint_options(a)
    a.set_defaults(func=cmd_analyze)

    t = sub.add_parser("translate", help="translate a program of any language into IR (LLM)")
    t.add_argument("file")
    t.add_argument(
        "--lang",
        choices=["pytorch", "jax", "numpy", "tensorflow", "cuda", "triton"],
        help="the source's language (default: from its extension and imports)",
    )
    t.add_argument(
        "--reference",
        help="a PyTorch/JAX/NumPy problem file or an .npz (in0.., out0..) giving the golden "
        "outputs (needed for CUDA and Triton)",
    )
    t.add_argument("--out", "-o", help="write the accepted IR program here (default: stdout)")
    t.add_argument(
        "--backend", choices=["native", "interpreter"], default="native", help="executor backend"
    )
    _endpoint_options(t, "--timeout", "--request-timeout")
    t.set_defaults(func=cmd_translate)

    b = sub.add_parser("batch", help="analyse many programs into a JSON-lines file")
    b.add_argument("paths", nargs="+", help="files or directories (searched for *.py)")
    b.add_argument("--arch", default="H100_PCIe")
    b.add_argument("--out", default="results.jsonl", help="results, one JSON object a line")
    b.add_argument("--jobs", type=int, default=0, help="parallel workloads (default: cores)")
    _containment_options(b, "each workload")
    b.add_argument(
        "--workers",
        choices=["warm", "cold"],
        default="warm",
        help="warm: fork each workload from one process that imported torch/JAX once "
        "(default); cold: a fresh process per workload",
    )
    b.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local: this machine (default); ray: Ray actors on a cluster (--address)",
    )
    b.add_argument(
        "--address",
        help="with --engine ray: the cluster (auto, or ray://HOST:10001); default: a local one",
    )
    b.add_argument("--no-validate", action="store_true")
    b.add_argument("--no-cache-aware", action="store_true", help="as for analyze")
    b.add_argument("--warm", action="store_true", help="as for analyze")
    b.add_argument("--accuracy", metavar="TOL", help="as for analyze")
    b.add_argument("--quantize", metavar="RECIPE", help="as for analyze")
    b.add_argument("--kv-cache", metavar="FORMAT", help="as for analyze")
    b.add_argument("--backend", choices=["native", "interpreter"], default="native")
    b.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    _measure_options(b)
    b.set_defaults(func=cmd_batch)

    sc = sub.add_parser(
        "score", help="SOL-ExecBench score of measured kernels against a batch's bounds"
    )
    sc.add_argument("results", help="a `solar batch` results file (JSON lines)")
    sc.add_argument(
        "--timings",
        required=True,
        help="name, kernel and baseline times per workload (JSON lines, JSON or CSV)",
    )
    sc.add_argument(
        "--mode", choices=["fused", "cache_aware", "unfused"], default="fused", help="T_SOL"
    )
    sc.add_argument("--json", metavar="OUT", help="write the scores as JSON")
    sc.set_defaults(func=cmd_score)

    hr = sub.add_parser(
        "headroom", help="a batch's bounds against measured runtimes, with a suite report"
    )
    hr.add_argument("results", help="a `solar batch` results file (JSON lines)")
    hr.add_argument(
        "--timings",
        required=True,
        help="runtimes: CSV/JSON of name -> time, KernelBench timing JSON, PyTorch "
        "profiler traces (a file or a directory of them), or SOL-ExecBench's metadata.json "
        "(a file or the problems directory: NVIDIA's baselines, with sol_ms as a reference)",
    )
    hr.add_argument(
        "--mode",
        choices=["fused", "cache_aware", "unfused"],
        default="fused",
        help="the bound of the scatter plot and the tightest list",
    )
    hr.add_argument("--html", metavar="OUT", help="write the HTML suite report")
    hr.set_defaults(func=cmd_headroom)

    g = sub.add_parser("graph", help="write the einsum-graph YAML sidecar")
    g.add_argument("file")
    g.add_argument("--out", default="-", help="output path (default: stdout)")
    g.add_argument("--dim", action="append", metavar="K=V")
    g.set_defaults(func=cmd_graph)

    f = sub.add_parser("format", help="print an IR program in canonical layout")
    f.add_argument("file")
    f.set_defaults(func=cmd_format)

    i = sub.add_parser("inputs", help="write random inputs for model() to an .npz file")
    i.add_argument("file")
    i.add_argument("--out", required=True)
    i.add_argument("--seed", type=int, default=0)
    i.add_argument("--dim", action="append", metavar="K=V")
    i.add_argument(
        "--max-memory", type=float, metavar="GIB", help="memory budget in GiB (default 8)"
    )
    i.set_defaults(func=cmd_inputs)

    for name, helptext in (
        ("run", "execute model() on inputs from an .npz file"),
        ("validate", "execute model() and compare with expected outputs"),
    ):
        x = sub.add_parser(name, help=helptext)
        x.add_argument("file")
        x.add_argument("--inputs", required=True, help=".npz with one array per model() input")
        x.add_argument("--dim", action="append", metavar="K=V")
        x.add_argument("--backend", choices=["native", "interpreter"], default="native")
        x.add_argument(
            "--no-bounds-check", action="store_true", help="skip per-access bounds checks (faster)"
        )
        x.add_argument(
            "--max-memory", type=float, metavar="GIB", help="memory budget in GiB (default 8)"
        )
        x.add_argument("--max-seconds", type=float, help="time budget (default 60)")
        if name == "run":
            x.add_argument("--out", help="write the outputs (out0, out1, ...) to this .npz")
            x.set_defaults(func=cmd_run)
        else:
            x.add_argument("--expected", required=True, help=".npz of expected outputs")
            x.add_argument(
                "--rtol",
                type=float,
                help="fixed relative tolerance: with --atol, replaces the derived criterion",
            )
            x.add_argument(
                "--atol",
                type=float,
                help="fixed absolute tolerance: with --rtol, replaces the derived criterion",
            )
            x.set_defaults(func=cmd_validate)

    _add_explore_parsers(sub)

    r = sub.add_parser("arch", help="list or show architecture specs")
    r.add_argument("action", choices=["list", "show", "local"])
    r.add_argument("name", nargs="?")
    r.add_argument(
        "--refresh", action="store_true", help="show local: derive and measure this machine again"
    )
    r.set_defaults(func=cmd_arch)
    return p


# --- solar inverse | sweep | chains (python/solar/explore.py) -----------------------------


def _write_json(path: str, obj) -> None:
    import json

    Path(path).write_text(json.dumps(obj, indent=2) + "\n")
    print(f"\nwrote {path}")


def cmd_inverse(args) -> int:
    from .explore import inverse, inverse_dict, quantization_dict
    from .frontend.kind import program_kind

    policy = _math_policy(args, program_kind(args.file))
    graph, results, note = inverse(
        args.file,
        latency=args.latency,
        rate=args.rate,
        arch=args.arch or ["H100_PCIe"],
        fp32_math=policy,
        dims=_dims(args.dim),
    )
    for i, (_, analysis, inv) in enumerate(results):
        if i:
            print()
        print(report.inverse_table(args.file, inv))
        if analysis.quantization is not None and i == 0:
            print(report.quantization_lines(graph, analysis.quantization))
    if policy.line():
        print(policy.line())
    if note:
        print(f"  note: {note}")
    if args.json:
        _write_json(
            args.json,
            {
                "schema": "solar.inverse/1",
                "source": args.file,
                "dims": dict(graph.dims),
                "quantization": quantization_dict(results[0][1].quantization),
                "inverses": [inverse_dict(inv) for _, _, inv in results],
            },
        )
    return 0


def cmd_sweep(args) -> int:
    from .explore import parse_axis, regime_changes, sweep

    if not args.dim:
        raise argument_error(
            "solar sweep needs at least one --dim NAME=VALUES",
            "for example --dim B=1,2,4,8 --dim S=512:8192:x2",
        )
    axes = [parse_axis(item) for item in args.dim]
    from .frontend.kind import program_kind

    args.fp32_math = _math_policy(args, program_kind(args.file))
    points = sweep(
        args.file,
        axes,
        arch=args.arch or ["H100_PCIe"],
        grid=args.grid,
        fp32_math=args.fp32_math,
        progress=None if args.quiet else _sweep_progress(args.file),
    )
    changes = regime_changes(points)
    kind = "grid (Cartesian product)" if args.grid else "each axis alone, the others at defaults"
    print(f"Sweep of {args.file}: {len(points)} points, {kind}")
    print()
    print(report.sweep_table(points, changes))
    if args.csv:
        import csv

        names = list(dict.fromkeys(k for p in points for k in p["dims"]))
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                ["arch", "axis", *names, "flops", "unfused_bytes", "fused_bytes"]
                + ["unfused_seconds", "fused_seconds", "unfused_bottleneck", "fused_bottleneck"]
            )
            for p in points:
                w.writerow(
                    [p["arch"], p["axis"] or ""]
                    + [p["dims"].get(n, "") for n in names]
                    + [p["flops"], p["bytes"]["unfused"], p["bytes"]["fused"]]
                    + [p["seconds"]["unfused"], p["seconds"]["fused"]]
                    + [p["bottleneck"]["unfused"], p["bottleneck"]["fused"]]
                )
        print(f"\nwrote {args.csv}")
    if args.json:
        _write_json(
            args.json,
            {
                "schema": "solar.sweep/1",
                "source": args.file,
                "grid": args.grid,
                "quantize": args.fp32_math.quantize or None,
                "kv_cache": args.fp32_math.kv_cache or None,
                "points": points,
                "regime_changes": changes,
            },
        )
    if args.html or args.png:
        _sweep_reports(args, points)
    return 0


def _sweep_progress(what: str):
    """One stderr line per configuration of a sweep that captures each (a PyTorch or JAX
    program): the count, its sizes, its time, the pace and the time left."""
    import time

    from .report import rate_line

    start = time.perf_counter()

    def show(done: int, total: int, dims: dict, seconds: float) -> None:
        sizes = ", ".join(f"{k}={v}" for k, v in dims.items()) or "defaults"
        pace = rate_line(done, time.perf_counter() - start, total - done)
        print(
            f"{what}: point {done}/{total} ({sizes}) in {seconds:.1f} s ({pace})",
            file=sys.stderr,
            flush=True,
        )

    return show


def _sweep_reports(args, points) -> None:
    """--html / --png of solar sweep: SOL against each axis; the HTML report also has the
    program's analysis at its default sizes (roofline, tables)."""
    from . import html_report, plots
    from .explore import load_graph

    archs = _archs(args.arch)
    graph, _note = load_graph(args.file)
    analyses = [analyze_graph(graph, a, args.fp32_math) for a in archs]
    figures = plots.report_figures(graph, archs, analyses, sweep=points)
    if args.html:
        validation = ("none", "not validated (solar sweep analyses without executing)")
        html_report.write_report(
            args.html, args.file, graph, archs, analyses, validation, sweep=points, figures=figures
        )
        print(f"wrote {args.html}")
    if args.png:
        sweeps = {k: v for k, v in figures.items() if k.startswith("sweep")}
        paths = plots.save_all(sweeps, args.png)
        print(f"wrote {', '.join(str(p) for p in paths)}")


def cmd_chains(args) -> int:
    from .explore import chain_dict, chains

    graph, found, note = chains(args.file, dims=_dims(args.dim))
    print(report.chains_table(args.file, found))
    if note:
        print(f"  note: {note}")
    if args.json:
        _write_json(
            args.json,
            {
                "schema": "solar.chains/1",
                "source": args.file,
                "dims": dict(graph.dims),
                "chains": [chain_dict(c) for c in found],
            },
        )
    return 0


def _add_explore_parsers(sub) -> None:
    arch_help = (
        "architecture name or spec path (repeatable, or a comma list A,B,C; 'all' for every "
        "spec); default H100_PCIe"
    )
    fp32_help = "math mode of fp32 contractions (default: the platform's default)"

    v = sub.add_parser(
        "inverse", help="inverse roofline: the compute and bandwidth a target latency needs"
    )
    v.add_argument("file")
    target = v.add_mutually_exclusive_group(required=True)
    target.add_argument("--latency", metavar="T", help="time per run: 2ms, 500us, 1.5s")
    target.add_argument("--rate", metavar="R", help="runs per second: 500Hz, 1kHz")
    v.add_argument("--arch", action="append", help=arch_help)
    v.add_argument(
        "--dim",
        action="append",
        metavar="K=V",
        help="override DIMS (IR) or a module-level size constant (PyTorch)",
    )
    v.add_argument("--fp32-math", choices=FP32_MATH, default="default", help=fp32_help)
    v.add_argument("--accuracy", metavar="TOL", help="as for analyze")
    v.add_argument("--quantize", metavar="RECIPE", help=QUANTIZE_HELP)
    v.add_argument("--kv-cache", metavar="FORMAT", help=KV_CACHE_HELP)
    v.add_argument("--json", metavar="OUT", help="write solar.inverse/1 JSON")
    v.set_defaults(func=cmd_inverse)

    w = sub.add_parser("sweep", help="SOL across sizes: one or more --dim axes")
    w.add_argument("file")
    w.add_argument(
        "--dim",
        action="append",
        metavar="NAME=VALUES",
        help="an axis: 1,2,4 (list), 512:8192:x2 (geometric), 64:512:+64 (arithmetic); "
        "IR programs: a DIMS name; PyTorch programs: a module-level size constant",
    )
    w.add_argument("--grid", action="store_true", help="sweep the Cartesian product of axes")
    w.add_argument("--arch", action="append", help=arch_help)
    w.add_argument("--fp32-math", choices=FP32_MATH, default="default", help=fp32_help)
    w.add_argument("--accuracy", metavar="TOL", help="as for analyze")
    w.add_argument("--quantize", metavar="RECIPE", help=QUANTIZE_HELP)
    w.add_argument("--kv-cache", metavar="FORMAT", help=KV_CACHE_HELP)
    w.add_argument("--csv", metavar="OUT", help="write one CSV row per point")
    w.add_argument("--json", metavar="OUT", help="write solar.sweep/1 JSON")
    w.add_argument("--html", metavar="OUT", help="self-contained HTML report with a plot per axis")
    w.add_argument("--png", metavar="DIR", help="write the plots as PNG files into DIR")
    w.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    w.set_defaults(func=cmd_sweep)

    c = sub.add_parser(
        "chains", help="association orders of multi-operand products and contraction chains"
    )
    c.add_argument("file")
    c.add_argument(
        "--dim",
        action="append",
        metavar="K=V",
        help="override DIMS (IR) or a module-level size constant (PyTorch)",
    )
    c.add_argument("--json", metavar="OUT", help="write solar.chains/1 JSON")
    c.set_defaults(func=cmd_chains)


def _containment_options(p, what: str) -> None:
    """--timeout and --memory-limit (solar/contain.py, docs/execution.md "User code")."""
    from .contain import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT

    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"wall-time limit of {what} (default {DEFAULT_TIMEOUT:g} s; 0: none)",
    )
    p.add_argument(
        "--memory-limit",
        default=DEFAULT_MEMORY_LIMIT,
        metavar="SIZE",
        help=f"data memory limit of {what}, e.g. 8GiB or 512MiB (RLIMIT_DATA; default "
        f"{DEFAULT_MEMORY_LIMIT}; none: no limit)",
    )


# Libraries whose import logs warnings a user of the command line cannot act on: torchao
# (installed with the `quant` extra, imported by transformers) tries its CUDA kernels on a CPU
# build ("Failed to load ..._C_cutlass_90a.abi3.so") and registers enums torch's pytree
# calls deprecated. Errors still print.
QUIET_LOGGERS = ("torchao", "torch.utils._pytree")


def main(argv: list[str] | None = None) -> int:
    import logging

    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # a contained command may run again in a fresh interpreter (contain.py)
    return _guarded(args.func, args)


def _guarded(func, args) -> int:
    """`func(args)` with Solar's errors printed as one line and turned into a status."""
    try:
        return func(args)
    except UserError as e:
        print(str(e), file=sys.stderr)
        return 1
    except InternalError as e:
        print(f"solar: internal error (please report): {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"solar: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("solar: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
