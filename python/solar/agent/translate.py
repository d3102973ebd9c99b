"""The translation loop (docs/agent.md): generate -> parse and check (the C++ core, never
`exec`) -> run at validation sizes (Solar's executor) -> compare with golden outputs -> feed
the diagnostics back -> retry, up to `max_iters`, within a wall-clock and a token budget.

A program is accepted only when every output matches the golden run (solar.tolerance, the
rule every front end's validation uses), at the source's own sizes (`full`) or at reduced
ones (`scaled`, named in the result) when the program does not fit the execution budget.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _core
from ..errors import Diagnostic, UserError, argument_error
from . import prompt, reply
from .cache import Cache
from .client import Endpoint, EndpointError, chat
from .languages import Golden, Language, Signature, detect, language, reference_golden

DEFAULT_MAX_ITERS = 5
DEFAULT_MAX_SECONDS = 900.0
DEFAULT_MAX_TOKENS = 400_000  # prompt and completion tokens over all iterations
MAX_PROBLEMS = 12  # diagnostics fed back per iteration (the first ones: the rest follow)


@dataclass
class SourceFile:
    path: str
    name: str
    text: str
    language: Language

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass
class Attempt:
    """One iteration: the reply, the program found in it and what was wrong with it."""

    iteration: int
    reply: str
    program: str
    problems: list
    category: (
        str  # "" (accepted), endpoint, no-program, unsafe, check, contract, execution, numeric
    )
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Translation:
    """An accepted translation (or, inside a TranslationError, the attempts of a failed one)."""

    source: str  # the source file's path
    source_sha256: str
    language: str
    model: str
    program: str = ""  # the accepted IR, with its header (what --out writes)
    iterations: int = 0
    validation: str = ""  # full | scaled
    validation_detail: str = ""
    attempts: list = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    cached: bool = False
    transcript: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TranslationError(UserError):
    """No program was accepted (kind `translate`); `.translation` holds every attempt."""

    def __init__(self, message: str, hint: str, translation: Translation, category: str):
        d = Diagnostic("translate", translation.source, 0, 0, message, hint)
        super().__init__(str(d), [d])
        self.translation = translation
        self.category = category


class _Transcript:
    """One JSON object a line: the messages sent, the replies, the verdicts. The API key is
    never in it (it travels only in the request header)."""

    def __init__(self, path: str | None):
        self.path = path
        self.file = open(path, "w") if path else None  # noqa: SIM115 - closed by close()

    def write(self, **record) -> None:
        if self.file:
            self.file.write(json.dumps(record, default=str) + "\n")
            self.file.flush()

    def close(self) -> None:
        if self.file:
            self.file.close()


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise argument_error(f"cannot read the {what} {path}: {e}") from None


def source_file(path: str, lang: str | None = None) -> SourceFile:
    text = _read(path, "source")
    name = lang or detect(path, text)
    if not name:
        raise argument_error(
            f"cannot tell the language of {path}",
            "pass --lang (pytorch, jax, numpy, tensorflow, cuda, triton)",
        )
    return SourceFile(path, Path(path).name, text, language(name))


class _Goldens:
    """Golden runs of the program that defines the outputs (the source, or its reference),
    per size, each made once."""

    def __init__(self, source: SourceFile, reference: SourceFile | None, npz: str, seed: int):
        self.source, self.reference, self.npz, self.seed = source, reference, npz, seed
        self.runs: dict = {}
        self.text = reference.text if reference is not None else source.text
        if reference is None and not npz and source.language.golden is None:
            raise argument_error(
                f"{source.name} is {source.language.title}, which Solar cannot run here: "
                "golden outputs need a reference",
                "pass --reference REF: a PyTorch, JAX or NumPy problem file computing the "
                "same thing, or an .npz of its inputs (in0, ...) and outputs (out0, ...)",
            )

    @property
    def scalable(self) -> bool:
        return not self.npz

    def sizes(self) -> dict:
        from ..frontend.problem import int_constants

        return {} if self.npz else int_constants(self.text)

    def at(self, overrides: dict) -> Golden:
        key = tuple(sorted(overrides.items()))
        if key not in self.runs:
            if self.npz:
                self.runs[key] = reference_golden(self.npz, overrides, self.seed)
            elif self.reference is not None:
                self.runs[key] = reference_golden(self.reference.path, overrides, self.seed)
            else:
                self.runs[key] = self.source.language.golden(self.source.path, overrides, self.seed)
        return self.runs[key]

    def signature(self) -> Signature:
        """model()'s contract at the program's own sizes, without a full-size run where the
        language can say it on fake tensors."""
        program = self.reference or self.source
        if not self.npz and program.language.signature is not None:
            return program.language.signature(program.path, {})
        return self.at({}).signature()


def canonical(program: str, name: str) -> str:
    """The program as Solar's printer re-emits it from the checked AST (comments and the
    reply's own layout dropped), or raises UserError with the checker's diagnostics. What
    Solar validates, caches and writes is this text, never a reply's or a cache entry's."""
    return _core.canonical_program(program, name)


def _check(program: str, name: str):
    """(Program, full-size Graph) or raises UserError with the checker's diagnostics."""
    prog = _core.load_program_source(program, name)
    return prog, _core.trace(prog, [])


def _contract_problems(graph, signature: Signature) -> list[str]:
    """How the program's model() at its DIMS differs from the source's signature."""
    problems = []
    params, outs = signature.params, signature.outputs
    if len(graph.inputs) != len(params):
        problems.append(
            f"model() takes {len(graph.inputs)} tensor parameter(s); the source's program takes "
            f"{len(params)} ({', '.join(n for n, _, _ in params)})"
        )
    else:
        for i, (tid, (name, shape, dtype)) in enumerate(zip(graph.inputs, params, strict=True)):
            t = graph.tensors[tid]
            if tuple(t.shape) != tuple(shape):
                problems.append(
                    f"parameter {i} ({t.name}) has shape {list(t.shape)} at DIMS; the source's "
                    f"{name} has shape {list(shape)}: fix DIMS or the parameter's dims"
                )
            elif t.dtype != dtype:
                problems.append(
                    f"parameter {i} ({t.name}) is {t.dtype}; the source's {name} is {dtype}"
                )
    if len(graph.outputs) != len(outs):
        problems.append(
            f"model() returns {len(graph.outputs)} output(s); the source returns {len(outs)}"
        )
    else:
        for i, (tid, (shape, dtype)) in enumerate(zip(graph.outputs, outs, strict=True)):
            t = graph.tensors[tid]
            if tuple(t.shape) != tuple(shape):
                problems.append(
                    f"output {i} has shape {list(t.shape)} at DIMS; the source's has {list(shape)}"
                )
            elif t.dtype != dtype:
                problems.append(f"output {i} is {t.dtype}; the source's is {dtype}")
    return problems


def _validation_sizes(graph, goldens: _Goldens, backend: str, tries: int):
    """Overrides of the size constants to validate at: {} (own sizes) when the program fits
    the execution budget, else the size constants divided by powers of two (the search every
    front end's scaled validation uses)."""
    from ..execution import check_budget, estimate_seconds
    from ..frontend.sizes import scalable_sizes, size_search, start_factor
    from ..frontend.validation import VALIDATION_MAX_BYTES, VALIDATION_MAX_SECONDS

    try:
        check_budget(graph, backend, VALIDATION_MAX_BYTES, VALIDATION_MAX_SECONDS)
        yield {}
        return
    except UserError:
        pass
    sizes = scalable_sizes(goldens.text) if goldens.scalable else {}
    if not sizes:
        return
    start = start_factor(estimate_seconds(graph, backend), VALIDATION_MAX_SECONDS * 0.25)
    search = size_search(sizes, start, tries)
    verdict = None
    while True:
        try:
            overrides, _ = search.send(verdict)
        except StopIteration:
            return
        verdict = yield overrides


def _run_and_compare(prog, golden: Golden, backend: str, where: str) -> tuple[list[str], str, str]:
    """(problems, category, detail) of executing `prog` on the golden inputs."""
    from ..execution import execute, prepare
    from ..frontend.validation import VALIDATION_MAX_BYTES, VALIDATION_MAX_SECONDS, compared
    from ..tolerance import compare_all, output_budgets, perturb, perturbation_unit

    _, graph, _ = prepare(prog, golden.inputs)

    def outputs(inputs) -> list:
        run = execute(
            prog,
            inputs,
            backend=backend,
            max_bytes=VALIDATION_MAX_BYTES,
            max_seconds=VALIDATION_MAX_SECONDS,
        )
        return run, [run.outputs[f"out{i}"] for i in range(len(run.outputs))]

    def rerun():
        # The translation once more on inputs moved by one ulp: how much its outputs
        # respond (an ill-conditioned output's rounding errors act on that), as the other
        # front ends' validation does.
        rng = np.random.default_rng(0)
        return outputs([perturb(a, rng) for a in golden.inputs])[1], perturbation_unit(
            golden.inputs
        )

    run, actual = outputs(golden.inputs)
    if len(actual) != len(golden.outputs):
        return (
            [f"model() returned {len(actual)} output(s), the source {len(golden.outputs)}"],
            "contract",
            "",
        )
    names = [f"output {i}" for i in range(len(actual))]
    dtypes = [graph.tensors[t].dtype for t in graph.outputs]
    results = compare_all(names, actual, golden.outputs, dtypes, output_budgets(graph), rerun)
    v = compared(results, "the source", where, run.backend)
    if v.status != "failed":  # full, or inconclusive (its detail says which output and why)
        return [], "", v.detail
    # Comparison.summary writes "yours vs the source's" for each value pair it shows.
    return (
        [c.summary(where) + " (values: yours vs the source's)" for c in results if not c.ok],
        "numeric",
        "",
    )


def _on_best_backend(prog, golden: Golden, backend: str, where: str):
    """_run_and_compare on the native backend, or on the interpreter where the native one
    cannot compile or load here (a `compile` error says nothing about the program)."""
    from ..execution import native_unavailable
    from ..frontend.validation import is_compile_error

    if backend == "native" and not native_unavailable():
        try:
            return _run_and_compare(prog, golden, "native", where)
        except UserError as e:
            if not is_compile_error(e):
                raise
    return _run_and_compare(prog, golden, "interpreter", where)


def _evaluate(text: str, iteration: int, goldens, signature, backend: str, rewrite=None):
    """(problems, category, accepted program, validation status, detail) of one reply."""
    program, why = reply.extract(text)
    if not program:
        return [why], "no-program", "", "", ""
    unsafe = reply.screen(program)
    if unsafe:
        return unsafe[:MAX_PROBLEMS], "unsafe", "", "", ""
    name = f"attempt{iteration}.py"
    try:  # from here on, the program is Solar's printing of the checked AST, not the reply
        program = canonical(program, name)
        prog, graph = _check(program, name)
    except UserError as e:
        return [str(d) for d in e.diagnostics[:MAX_PROBLEMS]], "check", "", "", ""
    if rewrite is not None:  # the program to validate is made from the reply's
        program, problems = rewrite(program)
        if problems:
            return problems, "contract", "", "", ""
        try:
            program = canonical(program, name)
            prog, graph = _check(program, name)
        except UserError as e:
            return [str(d) for d in e.diagnostics[:MAX_PROBLEMS]], "check", "", "", ""
    if signature is not None:
        problems = _contract_problems(graph, signature)
        if problems:
            return problems, "contract", "", "", ""
    search = _validation_sizes(graph, goldens, backend, 6)
    verdict = None
    last = [f"model() does not fit the execution budget at any reduced size ({name})"], "execution"
    while True:
        try:
            overrides = search.send(verdict)
        except StopIteration:
            return last[0], last[1], "", "", ""
        where = (
            "at the source's own sizes"
            if not overrides
            else "at reduced sizes " + ", ".join(f"{k}={v}" for k, v in overrides.items())
        )
        try:
            golden = goldens.at(overrides)
        except UserError as e:
            if overrides:
                verdict, last = "next", ([str(d) for d in e.diagnostics], "execution")
                continue
            raise
        try:
            problems, category, detail = _on_best_backend(prog, golden, backend, where)
        except UserError as e:
            if e.kind == "budget" and overrides:
                verdict = "larger"
                continue
            return [str(d) for d in e.diagnostics[:MAX_PROBLEMS]], "execution", "", "", ""
        if problems:
            return problems, category, "", "", ""
        return [], "", program, "scaled" if overrides else "full", detail


def _one_line(value) -> str:
    """A header field as one line of text (a line break would end the comment)."""
    return " ".join(str(value).split())


def _cached_int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _header(t: Translation, ir_version: str) -> str:
    """The comment block Solar writes above a translated program: every field one line."""
    fields = [
        f"Translated by `solar translate` from {t.source} ({t.language})",
        f"source sha256: {t.source_sha256}",
        f"model: {t.model}; iterations: {t.iterations}; IR spec {ir_version}",
        f"validation: {t.validation} — {t.validation_detail}",
    ]
    return "".join(f"# {_one_line(f)}\n" for f in fields)


def translate(
    source: str,
    lang: str | None = None,
    reference: str | None = None,
    out: str | None = None,
    endpoint: Endpoint | None = None,
    max_iters: int = DEFAULT_MAX_ITERS,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    cache: bool | str = True,
    transcript: str | None = None,
    backend: str = "native",
    seed: int = 0,
    progress=None,
) -> Translation:
    """Translates `source` into a validated IR program (docs/agent.md). `reference`: a
    PyTorch/JAX/NumPy problem file or an .npz giving the golden outputs (needed for CUDA and
    Triton). `cache`: True (the default directory), a directory, or False. `progress(msg)`
    is told each step. Raises TranslationError when no attempt is accepted."""
    if max_iters < 1:
        raise argument_error("--max-iters must be at least 1")
    endpoint = endpoint or Endpoint.from_env()
    src = source_file(source, lang)
    ref, npz = None, ""
    if reference:
        if reference.endswith(".npz"):
            npz = reference
        else:
            ref = source_file(reference)
    goldens = _Goldens(src, ref, npz, seed)
    key_text = src.text + "\0" + (ref.text if ref else _npz_digest(npz))
    store = Cache.at(cache)
    key = Cache.key(
        key_text, src.language.name, endpoint.model, prompt.ir_spec_version(), "program"
    )
    result = Translation(
        source, src.digest, src.language.name, endpoint.model, transcript=transcript or ""
    )
    say = progress or (lambda msg: None)
    if store is not None:
        hit = store.get(key)
        body = ""
        if hit is not None:
            try:  # a cached program is checked and printed like a fresh reply
                body = canonical(hit["program"], src.name)
            except UserError as e:
                say(
                    f"note: the cached translation of {src.name} is refused by the checker "
                    f"({e.diagnostics[0] if e.diagnostics else e}); translating again"
                )
                hit = None
        if hit is not None:
            say(f"cached translation of {src.name} ({endpoint.model})")
            result.cached = True
            result.iterations = _cached_int(hit.get("iterations"))
            result.validation = _one_line(hit.get("validation", ""))
            result.validation_detail = _one_line(hit.get("detail", ""))
            result.program = _header(result, prompt.ir_spec_version()) + body
            _write(out, result.program)
            return result
    signature = _signature(goldens)
    messages = [
        {"role": "system", "content": prompt.system(src.language)},
        {
            "role": "user",
            "content": prompt.task(
                src, ref, signature, goldens.sizes(), "at the source's own sizes"
            ),
        },
    ]
    budget = Budget(max_iters, max_seconds, max_tokens)
    log = _Transcript(transcript)
    log.write(
        event="start",
        source=source,
        language=src.language.name,
        model=endpoint.model,
        endpoint=endpoint.base_url,
        ir_spec=prompt.ir_spec_version(),
        messages=messages,
    )
    try:
        program, status, detail = converse(
            endpoint, messages, goldens, signature, budget, result, log, say, src.name, backend
        )
    finally:
        log.close()
    result.validation, result.validation_detail = status, detail
    result.program = _header(result, prompt.ir_spec_version()) + program
    if store is not None:
        store.put(
            key,
            {
                "program": result.program,
                "iterations": result.iterations,
                "validation": status,
                "detail": detail,
                "source": source,
                "model": endpoint.model,
            },
        )
    _write(out, result.program)
    return result


@dataclass(frozen=True)
class Budget:
    iterations: int = DEFAULT_MAX_ITERS
    seconds: float = DEFAULT_MAX_SECONDS
    tokens: int = DEFAULT_MAX_TOKENS


def converse(
    endpoint,
    messages,
    goldens,
    signature,
    budget: Budget,
    result: Translation,
    log,
    say,
    label: str,
    backend: str = "native",
    rewrite=None,
):
    """The loop: ask, evaluate the reply (`_evaluate`; with `rewrite(program)` -> (program,
    problems), the program it makes from the reply's is the one validated), feed back,
    until a reply is accepted or a budget runs out. Returns
    (program, validation status, detail); accounts tokens, cost and attempts in `result`;
    raises TranslationError."""
    start = time.monotonic()
    deadline = start + budget.seconds
    category, problems = "budget", ["no attempt was made"]
    try:
        for iteration in range(1, budget.iterations + 1):
            if time.monotonic() >= deadline:
                category, problems = (
                    "budget",
                    [f"the wall-clock budget of {budget.seconds:.0f} s ran out"],
                )
                break
            if result.tokens >= budget.tokens:
                category, problems = "budget", [f"the token budget of {budget.tokens:,} ran out"]
                break
            say(f"{label}: attempt {iteration}/{budget.iterations} ({endpoint.model})")
            try:
                answer = chat(endpoint, messages, deadline)
            except EndpointError as e:
                message = e.diagnostics[0].message
                log.write(event="endpoint-error", iteration=iteration, error=message)
                result.attempts.append(Attempt(iteration, "", "", [message], "endpoint"))
                category, problems = "endpoint", [message]
                if e.retryable:
                    continue  # a garbled, huge or slow reply: ask again
                raise TranslationError(
                    f"the LLM endpoint failed: {message}", e.diagnostics[0].hint, result, "endpoint"
                ) from None
            result.prompt_tokens += answer.prompt_tokens
            result.completion_tokens += answer.completion_tokens
            result.cost += endpoint.cost(answer.prompt_tokens, answer.completion_tokens)
            log.write(
                event="reply",
                iteration=iteration,
                text=answer.text,
                finish_reason=answer.finish_reason,
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
                seconds=answer.seconds,
            )
            status = detail = program = ""
            if answer.finish_reason == "length":
                category, problems = (
                    "no-program",
                    [
                        "the reply was cut off at the token limit of a reply "
                        f"({endpoint.max_tokens} tokens): write a shorter program "
                        "(helpers and loops, no repeated code)"
                    ],
                )
            else:
                problems, category, program, status, detail = _evaluate(
                    answer.text, iteration, goldens, signature, backend, rewrite
                )
            result.attempts.append(
                Attempt(
                    iteration,
                    answer.text,
                    program,
                    problems,
                    category,
                    answer.prompt_tokens,
                    answer.completion_tokens,
                    answer.seconds,
                )
            )
            log.write(
                event="verdict",
                iteration=iteration,
                category=category or "accepted",
                problems=problems,
            )
            if not problems:
                result.iterations = iteration
                result.seconds += time.monotonic() - start
                say(f"{label}: accepted after {iteration} attempt(s) ({status})")
                return program, status, detail
            say(f"{label}: attempt {iteration} rejected ({category}): {problems[0]}")
            messages.append({"role": "assistant", "content": answer.text})
            messages.append({"role": "user", "content": prompt.feedback(iteration, problems)})
        raise TranslationError(
            f"no translation of {label} was accepted after {len(result.attempts)} "
            f"attempt(s) ({category}): {problems[0]}",
            "raise --max-iters, try a stronger model, or read the transcript (--transcript)",
            result,
            category,
        )
    finally:
        result.seconds = max(result.seconds, time.monotonic() - start)
        log.write(
            event="end",
            accepted=any(not a.problems for a in result.attempts),
            tokens=result.tokens,
            cost=result.cost,
            seconds=time.monotonic() - start,
        )


def _signature(goldens: _Goldens):
    try:
        return goldens.signature()
    except UserError:
        raise
    except Exception as e:  # the reference program failed: its own error, not a traceback
        raise argument_error(
            f"running the program that defines the golden outputs failed: {type(e).__name__}: {e}"
        ) from None


def _npz_digest(path: str) -> str:
    if not path:
        return ""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write(out: str | None, program: str) -> None:
    if out:
        Path(out).write_text(program)
