"""The agentic front end (solar.agent, docs/agent.md) against a scripted OpenAI-compatible
server on 127.0.0.1 (tests/python/scripted_llm.py: a real HTTP server, not a mock of the
client). Each test states the replies it scripts and what the loop must make of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import solar
from scripted_llm import ScriptedServer, endless, fenced, huge, raw, reply, status
from solar import _core
from solar.agent import Endpoint, EndpointError, TranslationError, client, prompt, translate
from solar.agent.languages import language
from solar.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "agent_data"
SOFTMAX_NP = str(DATA / "softmax_np.py")
RIGHT = (DATA / "softmax_ir.py").read_text()
SOLAR = [sys.executable, "-m", "solar.cli"]


def endpoint(server, **kw) -> Endpoint:
    kw.setdefault("backoff", 0.01)
    return Endpoint(server.url, "scripted", **kw)


def test_each_iteration_feeds_back_what_failed(tmp_path):
    """Syntax error, then a non-affine index, then a wrong normalisation, then the right
    program: accepted at attempt 4, and each request carries the previous verdict."""
    syntax = RIGHT.replace("S[i] += exp", "S[i] += = exp")  # line 14 of the program
    non_affine = RIGHT.replace("exp(X[i, j] - M[i]) / S[i]", "exp(X[i, j * i] - M[i]) / S[i]")
    wrong = RIGHT.replace("/ S[i]", "/ (S[i] + 1)")
    script = [reply(fenced(p)) for p in (syntax, non_affine, wrong, RIGHT)]
    transcript = tmp_path / "t.jsonl"
    with ScriptedServer(script) as s:
        t = translate(
            SOFTMAX_NP,
            endpoint=endpoint(s, api_key="sk-SECRET"),
            cache=False,
            transcript=str(transcript),
            out=str(tmp_path / "out.py"),
        )
        second, third, fourth = (s.user_messages(i)[-1] for i in (1, 2, 3))
        assert s.headers[0]["Authorization"] == "Bearer sk-SECRET"
    assert "attempt1.py:14:21: error[syntax]" in second
    assert "error[non-affine]: index 'j * i' of 'X'" in third and "hint:" in third
    # The numeric verdict names the output, the count, the worst and first mismatching
    # index with both values, and the allowed error.
    assert "output 0 differs at the source's own sizes: 8192 of 8192 elements" in fourth
    assert "worst at [" in fourth and "first at [0, 0]:" in fourth and "allowed" in fourth
    assert (t.iterations, t.validation) == (4, "full")
    # 4 replies of 1,000 prompt + 200 completion tokens (scripted_llm.reply's defaults).
    assert (t.prompt_tokens, t.completion_tokens) == (4000, 800)
    assert [a.category for a in t.attempts] == ["check", "check", "numeric", ""]
    written = (tmp_path / "out.py").read_text()
    assert written.startswith("# Translated by `solar translate` from ")
    assert "# model: scripted; iterations: 4;" in written and "# source sha256: " in written
    solar.check(tmp_path / "out.py")  # the written program is IR the checker accepts
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [r["event"] for r in records].count("verdict") == 4
    assert "SECRET" not in transcript.read_text()


def test_python_in_a_reply_is_refused_and_never_runs(tmp_path):
    """`import os; os.system(...)` in a reply: refused before the parser with the reason,
    and refused by the C++ parser itself (module-level statements are not evaluated); the
    marker file the command would create never appears."""
    marker = tmp_path / "pwned"
    evil = f'import os\nos.system("touch {marker}")\n' + RIGHT
    with ScriptedServer([reply(fenced(evil)), reply(fenced(RIGHT))]) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False)
        feedback = s.user_messages(1)[-1]
    assert "line 1:1: `import os`: the IR imports nothing but solar.ir" in feedback
    assert "attribute `.system`" in feedback
    assert t.attempts[0].category == "unsafe" and t.iterations == 2
    with pytest.raises(UserError, match="statements at module level are not evaluated"):
        _core.load_program_source(evil, "evil.py")
    assert not marker.exists()


def test_screen_names_hidden_python():
    from solar.agent.reply import screen

    assert screen(RIGHT) == []
    problems = screen(RIGHT.replace("return softmax(x)", "return __import__('os')"))
    assert any("`__import__` is Python" in p for p in problems)
    assert any("`exec` is Python" in p for p in screen(RIGHT + "\nexec('1')\n"))


def test_garbage_and_errors_then_a_right_reply():
    """Garbage (not JSON), a 503 and an empty reply, then the right program: the garbage is
    an endpoint attempt and asked again, the 503 is retried inside one request, the empty
    reply is fed back."""
    script = [
        raw(b"<html>bad gateway</html>", "text/html"),
        status(503, "overloaded"),
        reply(""),
        reply(fenced(RIGHT)),
    ]
    with ScriptedServer(script) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False)
        assert len(s.requests) == 4
        assert "the reply was empty" in s.user_messages(3)[-1]
    assert "is not a chat completion" in t.attempts[0].problems[0]
    assert [a.category for a in t.attempts] == ["endpoint", "no-program", ""]


def test_429_waits_as_retry_after_says():
    """429 with Retry-After: 2, then a reply: chat() sleeps exactly 2 s (recorded, not
    slept) and returns the reply after 2 HTTP attempts."""
    waits = []
    with ScriptedServer([status(429, "slow down", retry_after=2), reply("hi")]) as s:
        r = client.chat(endpoint(s), [{"role": "user", "content": "x"}], sleep=waits.append)
    assert waits == [2.0] and r.attempts == 2 and r.text == "hi"


def test_5xx_backoff_doubles_and_gives_up():
    """Five 500s with retries=2: waits 0.01 then 0.02 (backoff doubling), then an error
    naming the last status."""
    waits = []
    with ScriptedServer([status(500, "boom")] * 5) as s:
        with pytest.raises(EndpointError, match=r"after 3 attempt\(s\): HTTP 500"):
            client.chat(endpoint(s, retries=2), [], sleep=waits.append)
    assert waits == [0.01, 0.02]


def test_a_20_mb_reply_is_refused():
    """20 MB declared (refused unread) and undeclared (read up to the 4 MiB cap, then cut)."""
    with ScriptedServer([huge(20 << 20), huge(20 << 20, declared=False)]) as s:
        with pytest.raises(EndpointError, match="20,971,520 bytes, over the limit of 4,194,304"):
            client.chat(endpoint(s), [])
        with pytest.raises(EndpointError, match="passed the limit of 4,194,304 bytes"):
            client.chat(endpoint(s), [])


def test_a_reply_that_never_ends_times_out():
    """Headers, then a byte every 50 ms for 30 s: the 1 s request timeout ends it."""
    with ScriptedServer([endless(30)]) as s:
        start = time.monotonic()
        with pytest.raises(EndpointError, match="did not finish within the request timeout"):
            client.chat(endpoint(s, timeout=1.0), [])
        assert time.monotonic() - start < 5


def test_a_refusing_server_is_one_clear_error():
    """HTTP 401: no retry, a `translate` error that names the status and the key variable,
    never the key."""
    with ScriptedServer([status(401, "bad key")] * 3) as s:
        with pytest.raises(TranslationError) as e:
            translate(SOFTMAX_NP, endpoint=endpoint(s, api_key="sk-NEVER-SHOWN"), cache=False)
        assert len(s.requests) == 1
    text = str(e.value)
    assert (
        "error[translate]: the LLM endpoint failed: the server refused the request: HTTP 401"
        in text
    )
    assert "SOLAR_LLM_API_KEY" in text and "NEVER" not in text


def test_truncated_replies_and_budgets():
    """Replies cut off at max_tokens are fed back; the token budget (2,500: two replies of
    1,200) ends the loop with the reason."""
    with ScriptedServer([reply("```python\ndef model(", finish="length")] * 5) as s:
        with pytest.raises(TranslationError, match="the token budget of 2,500 ran out") as e:
            translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False, max_tokens=2500)
        assert "cut off at the token limit" in s.user_messages(1)[-1]
    assert e.value.category == "budget" and len(e.value.translation.attempts) == 3


def test_accepted_translations_are_cached(tmp_path):
    """The second translation of the same source by the same model asks nothing."""
    with ScriptedServer([reply(fenced(RIGHT))]) as s:
        first = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=str(tmp_path))
        again = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=str(tmp_path))
        assert len(s.requests) == 1
    assert not first.cached and again.cached and again.program == first.program
    other_model = Endpoint(s.url, "another-model")
    key_files = list(tmp_path.glob("*.json"))
    assert len(key_files) == 1 and other_model.model not in key_files[0].name


def test_cuda_softmax_gives_the_pytorch_bound():
    """A CUDA softmax (workloads/cuda/softmax.cu) with its PyTorch reference, translated
    through the scripted right reply: validated at the reference's own sizes, and the same
    fused bound as the PyTorch program analysed by the deterministic front end: both read x
    and write y once, 2 x 16 x 16384 x 4 B = 2,097,152 B, memory-bound."""
    from solar.pytorch import analyze_pytorch

    ir = (ROOT / "workloads" / "cuda" / "ir" / "softmax.py").read_text()
    with ScriptedServer([reply(fenced(ir))]) as s:
        t = translate(
            str(ROOT / "workloads" / "cuda" / "softmax.cu"),
            reference=str(ROOT / "workloads" / "cuda" / "ref" / "softmax.py"),
            endpoint=endpoint(s),
            cache=False,
        )
        first = s.user_messages(0)[0]
    assert "CUDA C++ program (softmax.cu)" in first and "class Model" in first
    assert "- input0: shape [16, 16384], dtype fp32" in first or "- x: shape [16, 16384]" in first
    assert t.validation == "full" and t.language == "cuda"
    arch = solar.load_arch("H100_PCIe")
    translated = _core.analyze(_core.trace(_core.load_program_source(t.program, "t.py"), []), arch)
    pytorch = analyze_pytorch(
        str(ROOT / "workloads" / "cuda" / "ref" / "softmax.py"), validate=False
    ).analyses[0]
    assert translated.fused.bytes == pytorch.fused.bytes == 2 * 16 * 16384 * 4
    assert translated.fused.seconds == pytest.approx(pytorch.fused.seconds, rel=1e-12)


def test_cuda_without_a_reference_says_what_to_pass():
    with pytest.raises(UserError, match="CUDA C.., which Solar cannot run here: golden outputs"):
        translate(
            str(ROOT / "workloads" / "cuda" / "softmax.cu"),
            endpoint=Endpoint("http://127.0.0.1:9/v1", "m"),
            cache=False,
        )


def test_llm_fallback_lowers_an_operator_without_a_rule(tmp_path):
    """aten.hypot has no lowering rule. With the fallback, the agent's kernel (first a wrong
    one, fed back, then sqrt(x^2 + y^2)) is validated per kernel against torch.hypot, the
    program is then validated whole against PyTorch, and the report notes the operator."""
    from solar.agent.fallback import Fallback
    from solar.pytorch import analyze_pytorch

    right = (DATA / "hypot_kernel_ir.py").read_text()
    wrong = right.replace("+ Y[i, j] * Y[i, j]", "+ Y[i, j]")
    program = str(DATA / "hypot_torch.py")
    with pytest.raises(UserError, match="operator aten.hypot.default has no lowering"):
        analyze_pytorch(program, validate=False)
    with ScriptedServer([reply(fenced(wrong)), reply(fenced(right))]) as s:
        fb = Fallback(endpoint(s), cache=str(tmp_path))
        result = analyze_pytorch(program, llm_fallback=fb)
        first, second = s.user_messages(0)[0], s.user_messages(1)[-1]
        assert len(s.requests) == 2
        again = analyze_pytorch(program, llm_fallback=Fallback(endpoint(s), cache=str(tmp_path)))
        assert len(s.requests) == 2  # from the cache
    assert "Schema: aten::hypot(Tensor self, Tensor other) -> Tensor" in first
    assert "- x0: shape [16, 32], dtype fp32" in first
    assert "output 0 differs" in second
    assert result.validation.status == "full"
    assert [(o.op, o.iterations) for o in fb.operators] == [("aten.hypot.default", 2)]
    assert any("aten.hypot.default has no lowering rule" in n for n in result.notes)
    assert any("cached" in n for n in again.notes)
    # The fused bytes: x, y (16 x 32 fp32 each), the linear's 32 x 32 weight and 32 bias,
    # the 16 x 32 output: (512 + 512 + 1024 + 32 + 512) x 4 = 10,368 B.
    assert result.analyses[0].fused.bytes == 10368


def test_prompt_is_generated_from_the_language_reference():
    spec = prompt.ir_spec()
    ir_md = (ROOT / "docs" / "ir.md").read_text()
    assert "## 3. Kernels (`@kernel`) — the restricted part" in spec
    assert "## 7. Counting rules" not in spec and "## 7. Counting rules" in ir_md
    assert "### examples/ir/softmax.py" in spec
    assert len(prompt.ir_spec_version()) == 12
    with pytest.raises(Exception, match="sections"):
        prompt._sections("## 1. A program\n")
    for lang in ("pytorch", "jax", "numpy", "cuda", "triton", "tensorflow"):
        assert "# Source language: " in prompt.system(language(lang))


def test_cli_translate_and_analyze_lang(tmp_path):
    out = tmp_path / "ir.py"
    with ScriptedServer([reply(fenced(RIGHT))]) as s:
        env = dict(
            os.environ,
            SOLAR_LLM_BASE_URL=s.url,
            SOLAR_LLM_MODEL="scripted",
            SOLAR_TRANSLATION_CACHE=str(tmp_path / "cache"),
        )
        r = subprocess.run(
            [*SOLAR, "translate", SOFTMAX_NP, "-o", str(out)],
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        a = subprocess.run(
            [*SOLAR, "analyze", SOFTMAX_NP, "--lang", "numpy", "--arch", "H100_PCIe"],
            env=env,
            capture_output=True,
            text=True,
        )
    assert f"wrote {out}" in r.stdout and "validation: full" in r.stdout
    assert a.returncode == 0, a.stderr
    # 64 x 128 fp32 in and out: 2 x 32,768 B.
    assert "Fused" in a.stdout and "65.5 kB" in a.stdout
    assert "translated from numpy by scripted from the cache" in a.stdout
    no_endpoint = {k: v for k, v in env.items() if not k.startswith("SOLAR_LLM")}
    e = subprocess.run(
        [*SOLAR, "translate", SOFTMAX_NP], env=no_endpoint, capture_output=True, text=True
    )
    assert e.returncode == 1 and "error[endpoint]: no LLM endpoint is configured" in e.stderr


def test_python_api_translate():
    """solar.translate(path, endpoint=URL, model=M) is the loop behind `solar translate`."""
    with ScriptedServer([reply(fenced(RIGHT))]) as s:
        t = solar.translate(SOFTMAX_NP, endpoint=s.url, model="scripted", cache=False)
    assert t.validation == "full" and t.iterations == 1 and "def model(" in t.program


def test_a_program_over_the_budget_validates_at_reduced_sizes(monkeypatch):
    """With the validation time budget at 0.6x the program's estimated run time, the
    translation validates at the size constants halved (ROWS=32, COLS=64: an eighth of the
    work, within the quarter of the budget the search aims at) and says so; the contract
    was still checked at the source's own sizes."""
    import solar.frontend.validation as validation
    from solar.execution import estimate_seconds, native_unavailable

    backend = "interpreter" if native_unavailable() else "native"
    full = estimate_seconds(solar.trace(DATA / "softmax_ir.py"), backend)
    monkeypatch.setattr(validation, "VALIDATION_MAX_SECONDS", 0.6 * full)
    with ScriptedServer([reply(fenced(RIGHT))]) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False, backend=backend)
        first = s.user_messages(0)[0]
    assert t.validation == "scaled"
    assert "at reduced sizes ROWS=32, COLS=64" in t.validation_detail
    assert "- x: shape [64, 128], dtype fp32" in first and "ROWS = 64, COLS = 128" in first


def test_llm_fallback_for_a_jax_primitive():
    """asinh has no JAX lowering rule: the agent's kernel (sign-symmetric
    log(|x| + sqrt(x^2 + 1))) is validated against lax.asinh and the program against the
    jitted function; fused bytes are x in and the result out, 2 x 16 x 32 x 4 = 4,096 B."""
    from solar.agent.fallback import Fallback
    from solar.jax import analyze_jax

    program = str(DATA / "asinh_jax.py")
    with pytest.raises(UserError, match="primitive asinh has no lowering"):
        analyze_jax(program, validate=False)
    with ScriptedServer([reply(fenced((DATA / "asinh_kernel_ir.py").read_text()))]) as s:
        fb = Fallback(endpoint(s), cache=False)
        result = analyze_jax(program, llm_fallback=fb)
        first = s.user_messages(0)[0]
    assert "Write the JAX primitive (jax.lax) asinh as one IR kernel named `op`." in first
    assert result.validation.status == "full"
    assert [o.op for o in fb.operators] == ["asinh"]
    assert any("validated against JAX" in n for n in result.notes)
    assert result.analyses[0].fused.bytes == 4096


def test_llm_fallback_refuses_what_the_ir_cannot_hold():
    """torch.complex returns complex numbers: the fallback says the IR has no dtype for
    them and asks nothing."""
    from solar.agent.fallback import Fallback
    from solar.pytorch import analyze_pytorch

    with ScriptedServer([]) as s:
        with pytest.raises(UserError, match="complex numbers are not IR values"):
            analyze_pytorch(str(DATA / "complex_torch.py"), llm_fallback=Fallback(endpoint(s)))
        assert s.requests == []


def test_wrong_dims_are_a_contract_problem():
    """DIMS R=32 where the source has 64 rows would validate at any size the arrays bind,
    and give a bound for half the program: the contract check refuses it at the source's own
    sizes and says which parameter and which sizes."""
    half = RIGHT.replace('DIMS = {"R": 64', 'DIMS = {"R": 32')
    with ScriptedServer([reply(fenced(half)), reply(fenced(RIGHT))]) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False)
        feedback = s.user_messages(1)[-1]
    assert "parameter 0 (x) has shape [32, 128] at DIMS; the source's x has shape [64, 128]" in (
        feedback
    )
    assert "output 0 has shape [32, 128] at DIMS; the source's has [64, 128]" in feedback
    assert [a.category for a in t.attempts] == ["contract", ""]


def test_an_npz_reference(tmp_path):
    """A CUDA ReLU with an .npz reference (in0 = x, out0 = relu(x), 16 x 16384 fp32) instead
    of a program: validated at the one size the file holds."""
    import numpy as np

    x = np.random.default_rng(0).standard_normal((16, 16384)).astype(np.float32)
    ref = tmp_path / "relu.npz"
    np.savez(ref, in0=x, out0=np.maximum(x, 0))
    ir = (ROOT / "workloads" / "cuda" / "ir" / "relu.py").read_text()
    with ScriptedServer([reply(fenced(ir))]) as s:
        t = translate(
            str(ROOT / "workloads" / "cuda" / "relu.cu"),
            reference=str(ref),
            endpoint=endpoint(s),
            cache=False,
        )
        first = s.user_messages(0)[0]
    assert t.validation == "full" and "- in0: shape [16, 16384], dtype fp32" in first


def test_llm_fallback_is_refused_where_it_means_nothing():
    """On an IR program (nothing to fall back from) and with --lang (the whole program goes
    to the agent): an argument error naming both ways in."""
    for extra in ([], ["--lang", "numpy"]):
        target = ROOT / "examples" / "ir" / "softmax.py" if not extra else Path(SOFTMAX_NP)
        r = subprocess.run(
            [*SOLAR, "analyze", str(target), "--llm-fallback", *extra],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 1 and "--llm-fallback applies to PyTorch and JAX programs" in (
            r.stderr
        )
