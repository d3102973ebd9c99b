"""SOL-ExecBench / FlashInfer-Trace definitions (solar/definitions.py, docs/definitions.md):
the format read, each workload's problem file, its bound derived by hand, and the errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from solar.definitions import (
    Workload,
    load_definition,
    load_workloads,
    problem_text,
    resolve_axes,
    workloads_file,
)
from solar.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
DEFS = ROOT / "workloads" / "definitions"
GEMM = DEFS / "gemm" / "gemm_n256_k512.json"
NVFP4 = DEFS / "gemm" / "gemm_nvfp4_n256_k512.json"


def solar(*args):
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)], capture_output=True, text=True
    )


def test_workloads_are_read_and_axes_resolved():
    d = load_definition(str(GEMM))
    assert workloads_file(str(GEMM)) == str(GEMM.with_suffix(".jsonl"))
    ws = load_workloads(str(GEMM.with_suffix(".jsonl")), d)
    assert [w.uuid for w in ws] == ["m1", "m64", "m1024"]
    assert resolve_axes(d, ws[1].axes) == {"M": 64, "N": 256, "K": 512}
    # expr axes: K_packed = K // 2, K_blocks = K // 16.
    n = load_definition(str(NVFP4))
    assert resolve_axes(n, {"M": 16}) == {
        "M": 16,
        "N": 256,
        "K": 512,
        "K_packed": 256,
        "K_blocks": 32,
    }


def test_the_problem_file_of_a_workload():
    d = load_definition(str(NVFP4))
    w = load_workloads(str(NVFP4.with_suffix(".jsonl")), d)[0]
    text = problem_text(d, w, resolve_axes(d, w.axes))
    assert "M = 16\nN = 256\nK = 512\nK_packed = 256\nK_blocks = 32" in text
    assert "    def forward(self, A, B, a_scale, b_scale):" in text
    assert "        return _reference_run(A, B, a_scale, b_scale, 0.25)" in text  # scalar in place
    assert "_reference_inputs = make_inputs" in text
    assert "made = custom_inputs(_reference_inputs, {'M': M, 'N': N, 'K': K" in text


def test_each_workload_gets_its_bound():
    """GEMM C = A @ B.T in fp16 with N = 256, K = 512, memory-bound at these M: fused bytes
    2 (M K + N K + M N): M = 1: 263,680 B, 132 ns at 2 TB/s; M = 64: 360,448 B, 180 ns."""
    r = solar("analyze", GEMM, "--arch", "H100_PCIe", "--json", "/dev/stdout", "--no-validate")
    assert r.returncode == 0, r.stderr
    assert "gemm_n256_k512: 3 workloads on H100_PCIe" in r.stdout
    assert "m1                                           132 ns" in r.stdout
    # stderr (a pipe): a line per workload with the pace and the time left, as solar batch.
    progress = [ln for ln in r.stderr.splitlines() if ": workload " in ln]
    assert [ln.split(": workload ")[1].split(" ")[0] for ln in progress] == ["1/3", "2/3", "3/3"]
    assert progress[-1].endswith("/min, done)"), progress
    one = solar(
        "analyze",
        GEMM,
        "--workload",
        "m64",
        "--arch",
        "H100_PCIe",
        "--json",
        Path("/tmp") / "solar_def_m64.json",
    )
    assert one.returncode == 0, one.stderr
    doc = json.loads(Path("/tmp/solar_def_m64.json").read_text())
    assert doc["totals"]["bytes"]["fused"] == 2 * (64 * 512 + 256 * 512 + 64 * 256)
    assert doc["validation"]["status"] == "full"
    assert "definition gemm_n256_k512, workload m64 (M=64, N=256, K=512)" in one.stdout


def test_nvfp4_gemm_reads_packed_codes_and_says_what_the_bound_means(tmp_path):
    """At M = 256: A and B as packed codes 256 x 256 B each, block scales 2 x 256 x 32 B, C
    256 x 256 bf16, and the 16-entry fp32 lookup table twice (the reference builds it in each
    _dequantize call: two constants of 64 B): 278,656 fused bytes; validated against the
    reference; the note gives the memory term (278,656 B / 2 TB/s = 139 ns)."""
    out = tmp_path / "a.json"
    r = solar("analyze", NVFP4, "--workload", "m256", "--arch", "H100_PCIe", "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["totals"]["bytes"]["fused"] == 2 * 256 * 256 + 2 * 256 * 32 + 256 * 256 * 2 + 2 * 64
    assert doc["validation"]["status"] == "full"
    assert "the inputs are uint8" in r.stdout and "memory term alone: 139 ns" in r.stdout
    # Its scales are fp8: the reference's fp32 products are priced at the fp8 rate
    # (docs/definitions.md, "Math mode").
    assert doc["math_mode"].startswith("fp8 (--fp32-math fp8)")


def test_batch_runs_each_workload_once(tmp_path):
    """A folder of the two GEMM definitions: one entry per workload, 3 + 2, each once."""
    import shutil

    folder = tmp_path / "defs"
    folder.mkdir()
    for f in (GEMM, NVFP4):
        shutil.copy(f, folder)
        shutil.copy(f.with_suffix(".jsonl"), folder)
    out = tmp_path / "r.jsonl"
    r = solar("batch", folder, "--out", out, "--jobs", "2", "--no-validate")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    sources = sorted(Path(x["source"]).name for x in rows)
    assert sources == [
        "gemm_n256_k512.json#m1",
        "gemm_n256_k512.json#m1024",
        "gemm_n256_k512.json#m64",
        "gemm_nvfp4_n256_k512.json#m16",
        "gemm_nvfp4_n256_k512.json#m256",
    ]
    assert all(x["status"] == "ok" for x in rows)
    again = solar("batch", folder, "--out", out, "--no-validate")
    assert "already in" in again.stderr and len(out.read_text().splitlines()) == len(rows)


def test_definition_errors_name_the_problem(tmp_path):
    d = json.loads(GEMM.read_text())
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({**d, "inputs": {**d["inputs"], "A": {"shape": ["M", "Q"], "dtype": "float16"}}})
    )
    with pytest.raises(UserError, match="input 'A': axis 'Q' is not in axes"):
        load_definition(str(bad))
    bad.write_text(json.dumps({**d, "outputs": {"C": {"shape": ["M"], "dtype": "float33"}}}))
    with pytest.raises(UserError, match="output 'C' has dtype 'float33'"):
        load_definition(str(bad))
    good = load_definition(str(GEMM))
    with pytest.raises(UserError, match="axis 'M' is var: the workload gives no value"):
        resolve_axes(good, {})
    with pytest.raises(UserError, match=r"axis 'N' is const in the definition \(256\)"):
        resolve_axes(good, {"M": 4, "N": 128})
    assert resolve_axes(good, {"M": 4, "N": 256})["N"] == 256  # its own value is no change
    custom = Workload("w", {"M": 4}, {"A": {"type": "custom"}})
    with pytest.raises(UserError, match="are custom: no custom_inputs_entrypoint"):
        problem_text(good, custom, resolve_axes(good, {"M": 4}))


def test_every_definition_of_the_suite_validates(tmp_path):
    """Every workload of workloads/definitions/ (20 definitions, 57 workloads): analysed
    and validated against its reference, in one batch with warm workers."""
    out = tmp_path / "all.jsonl"
    r = solar("batch", DEFS, "--out", out, "--jobs", "2", "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    bad = [
        (x["source"], x.get("message") or x["validation"])
        for x in rows
        if x["status"] != "ok" or x["validation"]["status"] not in ("full", "scaled")
    ]
    assert not bad, bad
    assert len({x["source"].partition("#")[0] for x in rows}) == 20 and len(rows) == 57


def test_command_errors_name_the_workload_and_the_file(tmp_path):
    r = solar("analyze", GEMM, "--workload", "nope", "--no-validate")
    assert r.returncode == 1 and "gemm_n256_k512.json: no workload 'nope'" in r.stderr
    other = tmp_path / "config.json"
    other.write_text('{"a": 1}')
    b = solar("batch", other, "--out", tmp_path / "o.jsonl")
    assert b.returncode == 1 and "is not a problem definition (axes, inputs, outputs, run)" in (
        b.stderr
    )


def test_generated_inputs_and_literal_sizes_written_as_strings(tmp_path):
    """The workload.v2 layout of some public forks: `generated` inputs name a generator, and
    a size may be the string "1". A row-sum over x: (N, K) into y: (N, "1")."""
    d = {
        "name": "rowsum",
        "axes": {"N": {"type": "var"}, "K": {"type": "const", "value": 64}},
        "inputs": {
            "x": {"shape": ["N", "K"], "dtype": "float32"},
            "t": {"shape": ["N"], "dtype": "int64"},
        },
        "outputs": {"y": {"shape": ["N", "1"], "dtype": "float32"}},
        "reference": "def run(x, t):\n    return x.sum(1, keepdim=True) + t[:, None]\n",
    }
    path = tmp_path / "definition.json"
    path.write_text(json.dumps(d))
    gen = {
        "x": {"type": "generated", "generator": {"type": "uniform", "low": 2.0, "high": 3.0}},
        "t": {"type": "generated", "generator": {"type": "integer", "low": 0, "high": "K // 2"}},
    }
    (tmp_path / "workload.jsonl").write_text(
        json.dumps({"uuid": "w", "axes": {"N": 8}, "inputs": gen})
    )
    definition = load_definition(str(path))
    assert definition.outputs["y"]["shape"] == ["N", 1]
    w = load_workloads(str(tmp_path / "workload.jsonl"), definition)[0]
    text = problem_text(definition, w, resolve_axes(definition, w.axes))
    assert "(torch.rand((N, K, )) * 1.0 + 2.0).to(torch.float32)" in text
    assert "torch.randint(0, 32, (N, )).to(torch.int64)" in text  # high = K // 2 = 32
    namespace = {}
    exec(text, namespace)
    x, t = namespace["get_inputs"]()
    assert x.min() >= 2.0 and x.max() < 3.0 and 0 <= int(t.min()) and int(t.max()) < 32
    # 8 rows of 64 fp32 in (2048 B), an int64 index row (64 B), 8 fp32 out (32 B).
    r = solar("analyze", path, "--json", tmp_path / "out.json", "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["validation"]["status"] == "full"
    assert out["totals"]["bytes"]["fused"] == 2048 + 64 + 32
    bad = {"x": {"type": "generated", "generator": {"type": "poisson"}}}
    (tmp_path / "bad.jsonl").write_text(json.dumps({"uuid": "b", "axes": {"N": 8}, "inputs": bad}))
    with pytest.raises(UserError, match="input 'x' is generated by 'poisson'"):
        load_workloads(str(tmp_path / "bad.jsonl"), definition)
    w.inputs["t"]["generator"]["high"] = "K * Q"
    with pytest.raises(UserError, match="generator parameter 't.high' = 'K \\* Q' cannot be"):
        problem_text(definition, w, resolve_axes(definition, w.axes))


def test_a_custom_entrypoint_named_get_inputs_is_the_references(tmp_path):
    """NVIDIA's moe_index_add sample names its custom entrypoint `get_inputs`, the name of
    the problem file's own function: the file calls the reference's under another name.
    y = 2x on x [8, 16] fp32: 512 B in, 512 B out."""
    d = {
        "name": "collide",
        "axes": {"N": {"type": "var"}, "D": {"type": "const", "value": 16}},
        "custom_inputs_entrypoint": "get_inputs",
        "inputs": {"x": {"shape": ["N", "D"], "dtype": "float32"}},
        "outputs": {"y": {"shape": ["N", "D"], "dtype": "float32"}},
        "reference": (
            "import torch\n\ndef get_inputs(axes_and_scalars, device):\n"
            "    return {'x': torch.ones(axes_and_scalars['N'], 16, device=device)}\n\n"
            "def run(x):\n    return x * 2\n"
        ),
    }
    path = tmp_path / "definition.json"
    path.write_text(json.dumps(d))
    line = {"uuid": "w", "axes": {"N": 8}, "inputs": {"x": {"type": "custom"}}}
    (tmp_path / "workload.jsonl").write_text(json.dumps(line))
    r = solar("analyze", path, "--json", tmp_path / "out.json", "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["validation"]["status"] == "full"
    assert out["totals"]["bytes"]["fused"] == 512 + 512


def test_a_failing_workload_leaves_the_others_analysed(tmp_path):
    """The second of three workloads reads a safetensors file that is not there: its row
    says error, the first and third are analysed and written, and the command exits 1."""
    d = json.loads(GEMM.read_text())
    path = tmp_path / "gemm.json"
    path.write_text(json.dumps(d))
    missing = {"type": "safetensors", "path": "missing.safetensors", "tensor_key": "A"}
    lines = [
        {"uuid": "ok-1", "axes": {"M": 4}, "inputs": {}},
        {"uuid": "bad-2", "axes": {"M": 4}, "inputs": {"A": missing}},
        {"uuid": "ok-3", "axes": {"M": 8}, "inputs": {}},
    ]
    (tmp_path / "gemm.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    out = tmp_path / "out.json"
    r = solar("analyze", path, "--no-validate", "--json", out)
    assert r.returncode == 1
    assert "missing.safetensors" in r.stderr
    rows = json.loads(out.read_text())["workloads"]
    assert [(x["workload"], "error" in x) for x in rows] == [
        ("ok-1", False),
        ("bad-2", True),
        ("ok-3", False),
    ]


def test_value_asserts_of_the_reference_are_dropped_and_size_asserts_kept(tmp_path):
    """NVIDIA's moe_index_add sample checks `token_indices.min() >= 0` in run(): a read of
    values that capture on fake tensors cannot make. It becomes a pass on the same line; the
    size check stays. index_add_ of t [8] rows of e [8, 16] into h [4, 16] fp32: reads
    h 256 B, e 512 B, t 64 B; writes h 256 B."""
    from solar.definitions import _without_value_asserts

    ref = (
        "import torch\n\ndef run(h, e, t):\n"
        "    assert h.shape[1] == 16\n"
        "    assert t.min() >= 0 and (\n        t.max() < h.shape[0])\n"
        "    return h.index_add(0, t, e)\n"
    )
    text = _without_value_asserts(ref)
    assert text.splitlines()[3] == "    assert h.shape[1] == 16"
    assert text.splitlines()[4].startswith("    pass  # value check: assert t.min() >= 0")
    assert len(text.splitlines()) == len(ref.splitlines())  # the same line numbers
    d = {
        "name": "index_add",
        "axes": {"T": {"type": "var"}, "H": {"type": "const", "value": 16}},
        "inputs": {
            "h": {"shape": [4, "H"], "dtype": "float32"},
            "e": {"shape": ["T", "H"], "dtype": "float32"},
            "t": {"shape": ["T"], "dtype": "int64"},
        },
        "outputs": {"out": {"shape": [4, "H"], "dtype": "float32"}},
        "reference": ref,
    }
    path = tmp_path / "definition.json"
    path.write_text(json.dumps(d))
    idx = {"type": "generated", "generator": {"type": "integer", "low": 0, "high": 4}}
    line = {"uuid": "w", "axes": {"T": 8}, "inputs": {"t": idx}}
    (tmp_path / "workload.jsonl").write_text(json.dumps(line))
    r = solar("analyze", path, "--json", tmp_path / "out.json", "--arch", "H100_PCIe")
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["validation"]["status"] == "full"
    assert out["totals"]["bytes"]["fused"] == 256 + 512 + 64 + 256


def test_a_causal_prefill_is_priced_in_bf16_inside_its_mask(tmp_path):
    """workloads/definitions/attention/gqa_prefill_causal_h8_kv2_d64 at seq_len = 256: the
    mask keeps n <= m, 256 x 257 / 2 = 32,896 (query, key) pairs per head; both products
    multiply them by head_dim = 64 over 8 query heads: 2 x 8 x 32,896 x 64 = 33,685,504 MACs
    (dense: 67,108,864). Its data is bf16, so the reference's fp32 products are priced at
    the bf16 rate; validated against the reference."""
    out = tmp_path / "a.json"
    causal = ROOT / "workloads" / "definitions" / "attention" / "gqa_prefill_causal_h8_kv2_d64.json"
    r = solar("analyze", causal, "--workload", "s256", "--arch", "H100_SXM", "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["totals"]["macs"] == 33685504
    assert doc["math_mode"].startswith("bf16 (--fp32-math bf16)")
    assert "note: the definition's data is bf16, so its reference's fp32 products" in r.stdout
    assert doc["validation"]["status"] == "full"
    # --fp32-math fp32 prices the reference's arithmetic as written.
    r = solar(
        "analyze",
        causal,
        "--workload",
        "s256",
        "--arch",
        "H100_SXM",
        "--json",
        out,
        "--fp32-math",
        "fp32",
        "--no-validate",
    )
    # (The score product still multiplies bf16 values cast up: bf16 by their own right.)
    assert "also fp32 (--fp32-math fp32" in json.loads(out.read_text())["math_mode"]


RAGGED = DEFS / "gqa_paged" / "gqa_paged_decode_h8_kv2_d64_ps1_ragged.json"


def test_a_loop_over_requests_is_captured_for_their_lengths(tmp_path):
    """FlashInfer-Trace's paged-decode references loop over the requests in Python and read
    each one's token range with `int(kv_indptr[b].item())`, which torch.export cannot
    capture. Solar captures the loop for the lengths get_inputs() gives (seed 0). Workload
    b4_t100: 100 tokens split over 4 requests; each token meets 8 query heads in two
    products of head_dim 64 (scores and values): 100 x 8 x 64 x 2 = 102,400 MACs, whatever
    the split. Validated against the reference on the same values."""
    out = tmp_path / "a.json"
    r = solar("analyze", RAGGED, "--workload", "b4_t100", "--arch", "H100_SXM", "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["totals"]["macs"] == 102400
    assert doc["validation"]["status"] == "full"
    assert "control flow or result sizes read the values of its inputs (kv_indptr)" in r.stdout
    # Fused bytes: q 4 x 8 x 64 bf16 (4,096 B), 100 K rows and 100 V rows of 2 x 64 bf16
    # (51,200 B: the requests' gathers of one cache are one gather, frontend/specialise.py),
    # kv_indices (400 B; kv_indptr's values are in the graph, it is not read), output
    # (4,096 B) and lse (128 B) = 59,920 B.
    assert doc["totals"]["bytes"]["fused"] == 59920


def _problem(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\n" + body)
    return str(path)


def _captured_for(path: str, read: str, shapes: list):
    """The value-specialised capture of problem `path`: its first note names the inputs
    `read` as those whose values decided, and its outputs have `shapes`."""
    from solar.frontend.capture import capture_problem

    capture = capture_problem(path)
    assert f"read the values of its inputs ({read})" in capture.notes[0]
    output = next(n for n in capture.exported.graph.nodes if n.op == "output")
    assert [list(v.meta["val"].shape) for v in output.args[0]] == shapes
    return capture


def _validated(tmp_path, name: str, body: str, flops: int, note: str):
    """The analysis of problem `body` on H100 PCIe: `flops` FLOPs, validated in full, and a
    note that says `note`."""
    import solar

    r = solar.analyze(_problem(tmp_path, name, body), arch="H100_PCIe")
    assert r.graph.total_flops == flops
    assert r.validation.status == "full"
    assert any(note in n for n in r.notes), r.notes
    return r


def test_value_specialisation_says_why_it_does_not_apply(tmp_path, monkeypatch):
    """Where the specialised capture cannot be made the data-dependent error stays, with
    the reason: control flow on a float (`x.sum() > 0`) with inputs above the budget of a
    real trace, a model with parameters, inputs above the budget."""
    from solar.frontend import specialise
    from solar.frontend.capture import capture_problem

    on_float = _problem(
        tmp_path,
        "on_float",
        "class Model(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2 if x.sum() > 0 else x\n\n\n"
        "def get_inputs():\n    return [torch.randn(4, 4)]\n",
    )
    # It fails on its real inputs too: the error's first line, after the reason.
    raises = _problem(
        tmp_path,
        "raises",
        "class Model(nn.Module):\n    def forward(self, x):\n"
        "        if x.sum() > -1e30:\n            raise ValueError('boom')\n"
        "        return x\n\n\n"
        "def get_inputs():\n    return [torch.randn(4, 4)]\n",
    )
    with pytest.raises(UserError, match="capturing it for its inputs' values failed too: boom"):
        capture_problem(raises)
    # It reads a floating value: traced on all its inputs, for real (x [4, 4] fp32, 64 B).
    assert "read the values of its inputs (x)" in capture_problem(on_float).notes[0]
    monkeypatch.setattr(specialise, "SPECIALISE_REAL_BYTES", 32)
    with pytest.raises(UserError, match=r"its inputs \(64 bytes\) are above the 32 within"):
        capture_problem(on_float)
    with_weights = _problem(
        tmp_path,
        "with_weights",
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = nn.Linear(4, 4)\n\n    def forward(self, x, n):\n"
        "        return self.w(x[: int(n[0].item())])\n\n\n"
        "def get_inputs():\n    return [torch.randn(8, 4), torch.tensor([3])]\n",
    )
    with pytest.raises(UserError, match="a program with parameters or buffers is not special"):
        capture_problem(with_weights)
    sliced = _problem(
        tmp_path,
        "sliced",
        "class Model(nn.Module):\n    def forward(self, x, n):\n"
        "        return x[: int(n[0].item())] * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(8, 4), torch.tensor([3])]\n",
    )
    # Within the budget it is captured for n = [3]: the output is x[:3] * 2, [3, 4].
    _captured_for(sliced, "n", [[3, 4]])
    # Its traced graph (a slice, a multiply, the placeholders and the output) has more than
    # 2 operators.
    monkeypatch.setattr(specialise, "SPECIALISE_MAX_NODES", 2)
    with pytest.raises(UserError, match=r"it unrolls to \d+ operators, above the 2 allowed"):
        capture_problem(sliced)
    # x [8, 4] fp32 (128 B) and n int64 (8 B): 136 B, above a budget of 4, so only n and
    # the floating inputs within SPECIALISE_REAL_BYTES (32 above: x's 128 B are not) are
    # built for real (the next test), and n's 8 B are above the budget too.
    monkeypatch.setattr(specialise, "SPECIALISE_MAX_NODES", 20_000)
    monkeypatch.setattr(specialise, "SPECIALISE_MAX_BYTES", 4)
    with pytest.raises(UserError, match="floating inputs for real: 8 bytes, above the 4 allowed"):
        capture_problem(sliced)


def test_a_numpy_read_is_captured_for_its_values(tmp_path):
    """`n.cpu().numpy()` reads values outside the dispatcher (SOL-ExecBench task 142 loops
    over its experts by counts read so): torch.export's fake tensors refuse it ("not
    supported for tensor subclasses"), which is a value read, so the program is captured for
    n = [3] as for `.item()`: x[:3] * 2 is [3, 4]. Before, the export error ended the
    capture."""

    numpy_read = _problem(
        tmp_path,
        "numpy_read",
        "class Model(nn.Module):\n    def forward(self, x, n):\n"
        "        return x[: int(n.cpu().numpy()[0])] * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(8, 4), torch.tensor([3])]\n",
    )
    _captured_for(numpy_read, "n", [[3, 4]])


def test_a_floating_input_selected_by_an_integer_mask_is_traced_without_its_values(
    tmp_path, monkeypatch
):
    """`x[n > 1]` with x floating (fake in the specialised trace) and n an integer input
    (real): x is indexed by the mask's true positions, computed for real (SOL-ExecBench task
    106 selects its routing weights by a capacity mask so). n = [0, 2, 3, 1] selects rows 1
    and 2 of x [4, 3]: the output is [2, 3]. Before, the fake mode turned the mask fake and
    failed on its unknown size, and only a trace on all the inputs for real (refused here:
    SPECIALISE_REAL_BYTES = 0, as for inputs above it) could capture it."""
    from solar.frontend import specialise

    monkeypatch.setattr(specialise, "SPECIALISE_REAL_BYTES", 0)
    masked = _problem(
        tmp_path,
        "masked",
        "class Model(nn.Module):\n    def forward(self, x, n):\n"
        "        return x[n > 1] * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(4, 3), torch.tensor([0, 2, 3, 1])]\n",
    )
    _captured_for(masked, "n", [[2, 3]])


def test_an_operator_without_a_cpu_kernel_is_traced_fake(tmp_path):
    """SOL-ExecBench's NVFP4 references quantise a real input after reading a value of it
    and multiply the fp4 codes with `torch._scaled_mm`, which has no CPU kernel for them
    ("Invalid scaling configuration"): the specialised trace, which computes on x for real
    (its value decides), runs the product in the fake mode, whose result has a shape and no
    values. x [8, 8] (its codes packed: 16 fp4 values a row) and b [4, 8] packed; one fp8
    scale per 16 elements of K in the blocked layout (128 x 4, padded: 512 each); the output
    is [8, 4]. Before, the trace failed on the product."""
    codes = "torch.randint(0, 256, (4, 8), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)"
    scales = "torch.ones(512).to(torch.float8_e4m3fn)"
    fp4 = _problem(
        tmp_path,
        "fp4",
        "class Model(nn.Module):\n    def forward(self, x, b, sa, sb):\n"
        "        k = 2 if x.max() > 0 else 1\n"
        "        a = (x.abs() * k).to(torch.uint8).view(torch.float4_e2m1fn_x2)\n"
        "        return torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.float32)\n\n\n"
        f"def get_inputs():\n    return [torch.randn(8, 8), {codes}, {scales}, {scales}]\n",
    )
    _captured_for(fp4, "x", [[8, 4]])


def test_inputs_above_the_budget_are_built_with_their_floating_ones_fake(tmp_path, monkeypatch):
    """A MoE's expert weights (22.6 GB in SOL-ExecBench task 44) are never built: above the
    budget only the integer and boolean inputs, and the floating ones of at most
    SPECIALISE_REAL_TENSOR_BYTES each (0 here), are built for real, the others fake
    (specialise.floating_fake). x [8, 4] fp32 (128 B) and n = [3] int64 (8 B): 136 B, above
    a budget of 100; captured for n = [3], the output x[:3] * 2 is [3, 4]. An integer input
    computed from a floating one has no value then, and a generator that writes such a value
    into a real tensor is refused: each says why."""
    from solar.frontend import specialise
    from solar.frontend.capture import capture_problem

    monkeypatch.setattr(specialise, "SPECIALISE_MAX_BYTES", 100)
    monkeypatch.setattr(specialise, "SPECIALISE_REAL_TENSOR_BYTES", 0)
    model = (
        "class Model(nn.Module):\n    def forward(self, x, n):\n"
        "        return x[: int(n[0].item())] * 2\n\n\n"
    )
    sliced = _problem(
        tmp_path,
        "sliced",
        model + "def get_inputs():\n    return [torch.randn(8, 4), torch.tensor([3])]\n",
    )
    capture = _captured_for(sliced, "n", [[3, 4]])
    assert "its inputs (136 bytes) are above the 100 bytes built for real" in capture.notes[1]
    refused = {
        # n = |randn(1)| + 3, computed from a fake tensor: no value to read.
        "from_float": (
            "    return [torch.randn(8, 4), torch.randn(1).abs().long() + 3]\n",
            "a trace on its floating inputs of at most 0 bytes each",
        ),
        # The same value written into a real n.
        "written": (
            "    n = torch.zeros(1, dtype=torch.long)\n"
            "    n[0] = torch.randn(()).abs().long() + 3\n    return [torch.randn(8, 4), n]\n",
            "writes values computed from a floating tensor into",
        ),
    }
    for name, (body, message) in refused.items():
        path = _problem(tmp_path, name, model + "def get_inputs():\n" + body)
        with pytest.raises(UserError, match=message):
            capture_problem(path)


def test_small_floating_inputs_decide_while_large_ones_stay_fake(tmp_path, monkeypatch):
    """A router's logits decide a MoE's routing, its expert weights only its arithmetic
    (SOL-ExecBench task 123): above the budgets, a floating input of at most
    SPECIALISE_REAL_TENSOR_BYTES (64 here) is built and traced for real, a larger one fake.
    w [8, 4] fp32 (128 B, fake) and s = [1, -1] fp32 (8 B, real): 136 B, above a budget of
    100 and a real-trace budget of 100; one element of s is positive, so the output
    w[: 1 + 1] * 2 is [2, 4]."""
    from solar.frontend import specialise

    monkeypatch.setattr(specialise, "SPECIALISE_MAX_BYTES", 100)
    monkeypatch.setattr(specialise, "SPECIALISE_REAL_BYTES", 100)
    monkeypatch.setattr(specialise, "SPECIALISE_REAL_TENSOR_BYTES", 64)
    routed = _problem(
        tmp_path,
        "routed",
        "class Model(nn.Module):\n    def forward(self, w, s):\n"
        "        return w[: int((s > 0).sum().item()) + 1] * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(8, 4), torch.tensor([1.0, -1.0])]\n",
    )
    _captured_for(routed, "s", [[2, 4]])


def test_safetensors_inputs_give_their_values_to_the_capture(tmp_path):
    """A workload that gives kv_indptr and kv_indices in a safetensors file, as
    FlashInfer-Trace's workloads do (safetensors builds its tensors over an untyped storage,
    which the capture's fake mode cannot make: this failed in get_inputs() before). The
    ragged decode over requests of 2, 5 and 5 tokens: 12 tokens x 8 query heads x 64 x 2
    products = 12,288 MACs; validated on the file's values."""
    import torch
    from safetensors.torch import save_file

    blob = tmp_path / "blob.safetensors"
    indptr = torch.tensor([0, 2, 7, 12], dtype=torch.int32)
    save_file({"kv_indptr": indptr, "kv_indices": torch.arange(12, dtype=torch.int32)}, blob)
    given = {"type": "safetensors", "path": blob.name}
    line = {
        "uuid": "blob",
        "axes": {"batch_size": 3, "num_pages": 16, "num_kv_indices": 12},
        "inputs": {
            "kv_indptr": {**given, "tensor_key": "kv_indptr"},
            "kv_indices": {**given, "tensor_key": "kv_indices"},
            "sm_scale": {"type": "scalar", "value": 0.125},
        },
    }
    (tmp_path / "w.jsonl").write_text(json.dumps(line))
    out = tmp_path / "a.json"
    r = solar("analyze", RAGGED, "--workloads", tmp_path / "w.jsonl", "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["totals"]["macs"] == 12288
    assert doc["validation"]["status"] == "full"


def test_a_value_read_torch_export_keeps_is_specialised_too(tmp_path):
    """`torch.split(x, lengths.tolist())`: torch.export captures it with the sizes as
    unknowns read back from `lengths`, which no IR operator computes; the capture is then
    made for the values of get_inputs(): pieces of 3 and 7 rows of x [10, 4], scaled by 1
    and 2, are 40 multiplies. Validated."""
    _validated(
        tmp_path,
        "split",
        "class Model(nn.Module):\n    def forward(self, x, lengths):\n"
        "        pieces = torch.split(x, lengths.tolist())\n"
        "        return torch.cat([p * (i + 1) for i, p in enumerate(pieces)])\n\n\n"
        "def get_inputs():\n    return [torch.randn(10, 4), torch.tensor([3, 7])]\n",
        40,
        "read the values of its inputs (lengths)",
    )


def test_gathers_by_consecutive_slices_become_one_where_they_leave_no_gap():
    """Rows idx[0:3] and idx[3:5] of one table are rows 0..5 of one gather, cut in two;
    idx[0:3] and idx[4:6] leave row 3 out, and with a repeated index (a page two requests
    share) the one gather would count a row twice: they stay two gathers. The values are
    the program's either way."""
    import functools

    import torch
    from solar.frontend.specialise import _merge_gathers
    from torch.fx.experimental.proxy_tensor import make_fx

    def gathers(table, idx, cuts):
        return [table[idx[a:b].long()] * 2 for a, b in cuts]

    table, idx = torch.randn(10, 2), torch.tensor([4, 1, 7, 0, 9, 2], dtype=torch.int32)
    shared = torch.tensor([4, 1, 7, 4, 9, 2], dtype=torch.int32)
    for cuts, ids, merged in (
        ([(0, 3), (3, 5)], idx, 1),
        ([(0, 3), (4, 6)], idx, 2),
        ([(0, 3), (3, 5)], shared, 2),
        ([(0, 3), (3, -1)], idx, 2),  # an end counted from the end is not followed
    ):

        def program(t, i, cuts=cuts):
            return gathers(t, i, cuts)

        gm = make_fx(functools.partial(program, cuts=cuts))(table, ids)
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        _merge_gathers(gm, {placeholders[1]: ids})
        index = [n for n in gm.graph.nodes if n.target is torch.ops.aten.index.Tensor]
        assert len(index) == merged
        for got, want in zip(gm(table, ids), gathers(table, ids, cuts), strict=True):
            assert torch.equal(got, want)


def test_what_a_boolean_mask_selects_is_captured_for_its_values(tmp_path):
    """`idx[t][idx[t] != -1]` (a sparse attention's valid indices) and `x[x > 0]` have sizes
    their values decide; for the values of get_inputs() the masks select positions, which
    become constants of role generated (no traffic), and what follows is a gather of that
    many rows. Row 0 of idx keeps 4 indices, row 1 none (zeros), row 2 all 5: sums of 4 and
    5 rows of 8 are 32 + 40 = 72 adds, and the index wraps (a compare and an add per index,
    for the positions and the indices they select: 2 x (4 + 4 + 5 + 5) = 36) make 108 FLOPs.
    x holds 4 positive values: 4 multiplies and 2 x 4 for the wrap, 12 FLOPs. Validated."""
    r = _validated(
        tmp_path,
        "gathers",
        "class Model(nn.Module):\n    def forward(self, table, idx):\n"
        "        rows = []\n"
        "        for t in range(idx.shape[0]):\n"
        "            valid = idx[t][idx[t] != -1]\n"
        "            if valid.numel() == 0:\n"
        "                rows.append(torch.zeros(table.shape[1]))\n"
        "                continue\n"
        "            rows.append(table[valid].sum(0))\n"
        "        return torch.stack(rows)\n\n\n"
        "def get_inputs():\n"
        "    idx = torch.tensor([[3, -1, 5, 6, 0], [-1, -1, -1, -1, -1], [1, 2, 7, 4, 9]])\n"
        "    return [torch.randn(16, 8), idx]\n",
        108,
        "result sizes read the values of its inputs (idx)",
    )
    assert 'c__solar_selected0: Tensor("d4", role="generated", dtype="int64")' in r.ir_text
    # torch.export captures x[x > 0] with an unknown size: specialised too.
    _validated(
        tmp_path,
        "positive",
        "class Model(nn.Module):\n    def forward(self, x):\n        return x[x > 0] * 3\n\n\n"
        "def get_inputs():\n    return [torch.tensor([1.0, -2.0, 3.0, -4.0, 5.0, 0.5])]\n",
        12,
        "result sizes read the values of its inputs (x)",
    )


def test_a_forward_pass_that_runs_backward_is_traced_with_autograd(tmp_path):
    """A backward kernel's reference computes its gradient with autograd in the forward pass
    (`y.backward(dy)`; torch.export runs it under no_grad, where it fails). Traced with
    autograd on, the graph holds what the backward pass ran, on x, w, dy of [4, 8]: the
    forward x * w and tanh (32 + 32), then tanh's derivative 1 - y^2 (32 + 32), times dy
    (32) and times w (32): 192 FLOPs. Validated against PyTorch run with autograd on."""
    _validated(
        tmp_path,
        "grad_in_forward",
        "class Model(nn.Module):\n    def forward(self, x, w, dy):\n"
        "        xr = x.detach().requires_grad_()\n"
        "        y = torch.tanh(xr * w)\n"
        "        y.backward(dy)\n"
        "        return xr.grad\n\n\n"
        "def get_inputs():\n"
        "    return [torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)]\n",
        192,
        "runs autograd in its forward pass",
    )


def test_workloads_take_a_size_template_and_a_branch_on_a_size_is_captured(tmp_path):
    """y = x @ w.T + x over [batch, seq, 64], doubled when seq > 10. Without validation, the
    workloads with batch >= 2 form one group: (3, 5) and (4, 7) are captured and fitted
    (batch and seq both differ), (5, 6) is captured and checks the template, (6, 9) and (7, 8)
    take its text; (3, 11) runs the branch (another path through the reference) and batch 1
    is a group of one: both are captured. Every result equals the run that captures each
    workload (--capture-each), node by node."""
    d = {
        "name": "proj",
        "axes": {
            "batch": {"type": "var"},
            "seq": {"type": "var"},
            "hidden": {"type": "const", "value": 64},
        },
        "inputs": {
            "x": {"shape": ["batch", "seq", "hidden"], "dtype": "float32"},
            "w": {"shape": ["hidden", "hidden"], "dtype": "float32"},
        },
        "outputs": {"y": {"shape": ["batch", "seq", "hidden"], "dtype": "float32"}},
        "reference": "import torch\n\ndef run(x, w):\n    y = x @ w.T + x\n"
        "    if x.shape[1] > 10:\n        y = y * 2\n    return y\n",
    }
    path = tmp_path / "proj.json"
    path.write_text(json.dumps(d))
    sizes = [(3, 5), (4, 7), (5, 6), (6, 9), (7, 8), (3, 11), (1, 4)]
    lines = [{"uuid": f"w{b}x{s}", "axes": {"batch": b, "seq": s}, "inputs": {}} for b, s in sizes]
    (tmp_path / "proj.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    runs = {}
    for mode in ([], ["--capture-each"]):
        out = tmp_path / f"out{len(mode)}.json"
        r = solar("analyze", path, "--arch", "B200", "--no-validate", "--json", out, *mode)
        assert r.returncode == 0, r.stderr
        runs[len(mode)] = (
            r.stdout,
            {x["workload"]: x for x in json.loads(out.read_text())["workloads"]},
        )
    stdout, rows = runs[0]
    assert {u: x["ir_from"] for u, x in rows.items()} == {
        "w3x5": "capture (fits the template)",
        "w4x7": "capture (fits the template)",
        "w5x6": "capture (checks the template)",
        "w6x9": "template",
        "w7x8": "template",
        "w3x11": "capture (the reference takes another path at these sizes)",
        "w1x4": "capture",
    }
    assert (
        "captures: 5 of 7 workloads; 2 took a size template (fitted from w3x5 and w4x7, "
        "checked against w5x6; docs/definitions.md)" in stdout
    )
    each_out, each = runs[1]
    assert "captures: 7 of 7 workloads (no size template: --capture-each)" in each_out

    def numbers(x):
        return x["totals"], [{k: v for k, v in n.items() if k != "location"} for n in x["nodes"]]

    for u in rows:
        assert numbers(rows[u]) == numbers(each[u]), u
    # The branch doubles y: one more multiply per element of [3, 11, 64] than its template
    # would have had: flops 2·3·11·64·64 (the product) + 3·11·64 (the residual) + 3·11·64.
    assert rows["w3x11"]["totals"]["flops"] == 2 * 3 * 11 * 64 * 64 + 2 * 3 * 11 * 64
