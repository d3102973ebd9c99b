"""The error corpus: every bad input in tests/errors/ fails with the right kind and message.

Each IR program in tests/errors/ has one problem (its first line says which; README.md lists
them). For each one the table below gives the stage that must report it (`check`: parsing and
checking, `solar check`; `trace`: tracing model(), `solar analyze`), the error kind of the
first diagnostic (docs/ir.md §8), a substring of its message (or a tuple of alternatives, any
of which will do) and the line it must point at. The same table drives the command line:
exit code 1, the message on stderr, never a Python traceback.

Cases where Solar's current message is wrong (kind, location or text) are marked
`xfail(strict=True)` with the reason: the assertion states what a good message says, and the
mark comes off when the C++ is fixed.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
import solar

ROOT = pathlib.Path(__file__).parents[2]
ERRORS = ROOT / "tests" / "errors"
VALID_PROGRAM = ROOT / "examples" / "ir" / "softmax.py"
CLI_TIMEOUT_S = 30


def xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# (file, stage, kind, substring or tuple of alternatives, line, marks)
IR_CASES = [
    # -- syntax and layout ---------------------------------------------------------------
    ("syntax_unclosed_bracket.py", "check", "syntax", "is never closed", 6, ()),
    (
        "syntax_missing_colon.py",
        "check",
        "syntax",
        ("expected ':'", "missing ':'", "colon"),
        8,
        (),
    ),
    ("syntax_bad_token.py", "check", "syntax", "unexpected character '$'", 9, ()),
    ("syntax_double_equals.py", "check", "syntax", "unexpected '='", 9, ()),
    ("syntax_slice.py", "check", "syntax", "slice syntax", 15, ()),
    (
        "syntax_lambda.py",
        "check",
        "unsupported",
        "lambda",
        15,
        (),
    ),
    (
        "syntax_class.py",
        "check",
        "unsupported",
        "class",
        4,
        (),
    ),
    (
        "try_model.py",
        "check",
        "unsupported",
        "try",
        15,
        (),
    ),
    ("with_context_model.py", "check", "unsupported", "'with open(", 15, ()),
    ("with_kernel.py", "check", "kernel-body", "'with' is not allowed in kernel 'relu'", 7, ()),
    (
        "unit_fp32_math_value.py",
        "check",
        "argument",
        'fp32_math must be "fp32", "tf32", "bf16", "fp16" or "fp8"',
        16,
        (),
    ),
    ("unit_nested.py", "trace", "unsupported", "units do not nest", 17, ()),
    (
        "break_model.py",
        "check",
        "unsupported",
        "break",
        17,
        (),
    ),
    (
        "comprehension_model.py",
        "check",
        "unsupported",
        "comprehension",
        15,
        (),
    ),
    (
        "star_args_helper.py",
        "check",
        "unsupported",
        "*args",
        14,
        (),
    ),
    (
        "non_ascii_identifier.py",
        "check",
        "syntax",
        ("'Ÿ'", "U+0178", "0xc5", "0xC5"),
        9,
        (),
    ),
    ("indent_tab.py", "check", "indentation", "tab in indentation", 9, ()),
    ("indent_bad_dedent.py", "check", "indentation", "does not match any outer", 10, ()),
    # -- names, dims, dtypes -------------------------------------------------------------
    ("unknown_name_kernel.py", "check", "unknown-name", "'alpha'", 9, ()),
    ("unknown_name_model.py", "check", "unknown-name", "'h'", 15, ()),
    ("unknown_dim_kernel_loop.py", "check", "unknown-dim", "unknown dim 'K'", 9, ()),
    ("unknown_dim_model_param.py", "trace", "unknown-dim", "dim 'H'", 14, ()),
    ("unknown_dtype_annotation.py", "check", "unknown-dtype", '"float32"', 5, ()),
    ("unknown_dtype_alloc.py", "check", "unknown-dtype", '"half"', 6, ()),
    ("unknown_builtin_model.py", "check", "unknown-builtin", "'softplus'", 15, ()),
    ("unknown_function_kernel.py", "check", "unknown-builtin", "'gelu'", 9, ()),
    ("missing_model.py", "check", "unknown-name", "no model()", 1, ()),
    ("two_models.py", "check", "unsupported", "defined twice", 17, ()),
    # -- nothing that Python would run (docs/ir.md §1, docs/agent.md "Safety") -----------
    ("import_not_solar_ir.py", "check", "unsupported", "imports nothing but solar.ir", 2, ()),
    ("default_value_call.py", "check", "unsupported", "default value must not call 'len'", 14, ()),
    ("decorator_attribute.py", "check", "unsupported", "unknown decorator 'atexit.kernel'", 4, ()),
    # -- kernel rules --------------------------------------------------------------------
    ("non_affine_product.py", "check", "non-affine", "i * j", 9, ()),
    ("non_affine_floordiv.py", "check", "non-affine", "i // 2", 9, ()),
    ("non_affine_data_index.py", "check", "non-affine", "idx[i]", 9, ()),
    ("data_dependent_if.py", "check", "data-dependent", "X[i, j] > 0", 9, ()),
    ("imperfect_nest.py", "check", "imperfect-nest", "imperfect loop nest", 8, ()),
    ("kernel_writes_param.py", "check", "kernel-body", "writes its parameter 'X'", 8, ()),
    ("return_param.py", "check", "kernel-body", "got 'X'", 10, ()),
    ("return_not_last.py", "check", "kernel-body", "after return", 8, ()),
    ("statement_outside_loop.py", "check", "kernel-body", "outside a loop nest", 7, ()),
    ("scalar_temp_kernel.py", "check", "kernel-body", "scalar variable 't'", 9, ()),
    (
        "kernel_calls_kernel.py",
        "check",
        "kernel-body",
        "relu",
        14,
        (),
    ),
    (
        "kernel_calls_kernel_scalar.py",
        "check",
        "kernel-body",
        "calls kernel 'relu'",
        17,
        (),
    ),
    (
        "range_kernel.py",
        "check",
        "kernel-body",
        "range",
        7,
        (),
    ),
    ("while_kernel.py", "check", "unsupported", "while", 8, ()),
    # -- model() and tracing -------------------------------------------------------------
    ("while_model.py", "check", "unsupported", "while", 16, ()),
    (
        "range_tensor_model.py",
        "trace",
        "type",
        "tensor",
        15,
        (),
    ),
    ("recursion_helpers.py", "check", "recursion", "ping -> pong -> ping", 18, ()),
    ("recursion_self.py", "check", "recursion", "deep -> deep", 15, ()),
    ("arity_too_many.py", "trace", "call-arity", "got 2", 15, ()),
    ("arity_missing_arg.py", "trace", "call-arity", "missing argument 'Z'", 16, ()),
    ("arity_unknown_keyword.py", "trace", "call-arity", "no parameter named 'scale'", 15, ()),
    ("dim_mismatch_call.py", "trace", "dim-mismatch", "mm#0", 16, ()),
    ("shape_rank.py", "trace", "shape", "expects 3", 16, ()),
    ("shape_reshape_count.py", "trace", "shape", "32 elements", 15, ()),
    (
        "shape_unfold_window.py",
        "trace",
        "shape",
        "window size 12 exceeds dim 'N' of size 8",
        16,
        (),
    ),
    ("type_tensor_for_int.py", "trace", "type", "'stride'", 15, ()),
    (
        "dtype_concat_mismatch.py",
        "trace",
        "type",
        "the tensors must have one dtype, but 'x' is fp16 and 'y' is fp32",
        15,
        (),
    ),
    (
        "dtype_stack_mismatch.py",
        "trace",
        "type",
        "the tensors must have one dtype, but 'a' is int32 and 'b' is int64",
        7,
        (),
    ),
    # -- counts and the tracer's caps ----------------------------------------------------
    (
        "overflow_matmul_flops.py",
        "trace",
        "overflow",
        "node 'mm#0': matrix FLOPs (2 x MACs) do not fit in 64 bits",
        16,
        (),
    ),
    (
        "overflow_tensor_bytes.py",
        "trace",
        "overflow",
        "model() parameter 'x': bytes (4611686018427387904 elements of fp32)",
        13,
        (),
    ),
    ("budget_unrolled_loop.py", "trace", "budget", "range() of 2000000 values", 16, ()),
    # -- io ------------------------------------------------------------------------------
    ("empty_file.py", "check", "io", "empty", None, ()),
]


def ir_params():
    return [
        pytest.param(*case[:5], id=case[0].removesuffix(".py"), marks=case[5]) for case in IR_CASES
    ]


def matches(text: str, expected) -> bool:
    alternatives = expected if isinstance(expected, tuple) else (expected,)
    return any(a in text for a in alternatives)


def first_error(path: pathlib.Path, stage: str) -> solar.UserError:
    with pytest.raises(solar.UserError) as info:
        if stage == "check":
            solar.check(path)
        else:
            solar.trace(path)
    return info.value


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        cwd=ROOT,
    )


def assert_cli_error(proc: subprocess.CompletedProcess, kind: str | None, expected) -> None:
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert proc.returncode == 1, f"exit code {proc.returncode}\n{out}"
    if kind is not None:
        assert f"error[{kind}]" in proc.stderr, proc.stderr
    assert matches(proc.stderr, expected), proc.stderr


def test_corpus_is_complete():
    """Every file in tests/errors/ is in a table, has a README line and a leading comment."""
    tabled = {case[0] for case in IR_CASES} | {case[0] for case in ARCH_CASES}
    tabled.add(DIM_OVERRIDES.name)  # a valid program, used with bad --dim overrides
    on_disk = {p.name for p in ERRORS.iterdir() if p.suffix in (".py", ".yaml")}
    assert on_disk == tabled
    readme = (ERRORS / "README.md").read_text(encoding="utf-8")
    for name in sorted(on_disk):
        assert f"`{name}`" in readme, f"{name} has no line in tests/errors/README.md"
        if name != "empty_file.py":
            first = (ERRORS / name).read_text(encoding="utf-8").splitlines()[0]
            assert first.startswith("# "), f"{name} does not start with a comment"
    assert len(on_disk) >= 32


@pytest.mark.parametrize(("file", "stage", "kind", "substring", "line"), ir_params())
def test_ir_error(file, stage, kind, substring, line):
    path = ERRORS / file
    if stage == "trace":
        solar.check(path)  # the problem is found only when model() is traced
    err = first_error(path, stage)
    assert err.diagnostics, str(err)
    diag = err.diagnostics[0]
    assert err.kind == diag.kind == kind, str(err)
    assert matches(diag.message, substring), str(err)
    assert diag.file.endswith(file), str(err)
    if kind == "io":
        assert diag.line == 0, str(err)
    else:
        assert diag.line > 0 and diag.col > 0, str(err)
        assert diag.line == line, str(err)
    assert str(diag) in str(err)


@pytest.mark.parametrize(("file", "stage", "kind", "substring", "line"), ir_params())
def test_ir_error_cli(file, stage, kind, substring, line):
    command = "check" if stage == "check" else "analyze"
    proc = run_cli(command, ERRORS / file)
    assert_cli_error(proc, kind, substring)
    if line is not None:
        assert f"{file}:{line}:" in proc.stderr, proc.stderr


def test_dim_mismatch_names_call_dim_and_sizes():
    err = first_error(ERRORS / "dim_mismatch_call.py", "trace")
    message = err.diagnostics[0].message
    for part in ("mm#0", "'K'", "32", "16", "'A'", "'B'"):
        assert part in message, message


def test_missing_argument_counts_arguments():
    err = first_error(ERRORS / "arity_missing_arg.py", "trace")
    assert "add(X, Z)" in err.diagnostics[0].message, str(err)


# -- io: generated inputs (never committed) ---------------------------------------------


def write_binary(path: pathlib.Path) -> pathlib.Path:
    path.write_bytes(b"# looks like a comment\n" + bytes(range(256)) * 8)
    return path


def write_large(path: pathlib.Path) -> pathlib.Path:
    line = "# " + "x" * 97 + "\n"  # 100 bytes
    path.write_text(line * 100_000, encoding="ascii")  # 10 MB
    assert path.stat().st_size == 10_000_000
    return path


GENERATED_IO = [
    ("binary.py", write_binary, "binary"),
    ("large.py", write_large, "too large"),
]


@pytest.mark.parametrize(("name", "make", "substring"), GENERATED_IO)
def test_generated_io_error(tmp_path, name, make, substring):
    path = make(tmp_path / name)
    err = first_error(path, "check")
    assert err.kind == "io", str(err)
    assert substring in err.diagnostics[0].message, str(err)
    proc = run_cli("check", path)
    assert_cli_error(proc, "io", substring)


def test_missing_file(tmp_path):
    path = tmp_path / "does_not_exist.py"
    err = first_error(path, "check")
    assert err.kind == "io", str(err)
    assert "cannot open" in err.diagnostics[0].message, str(err)
    assert_cli_error(run_cli("check", path), "io", "cannot open")


def test_directory_instead_of_file(tmp_path):
    err = first_error(tmp_path, "check")
    assert err.kind == "io", str(err)
    assert "directory" in err.diagnostics[0].message, str(err)


def test_utf8_bom(tmp_path):
    # Python skips a UTF-8 byte order mark at the start of a file; so does Solar.
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + VALID_PROGRAM.read_bytes())
    assert solar.check(path).kernels == solar.check(VALID_PROGRAM).kernels


# -- deep nesting: the parser must report it, not overflow its stack --------------------


def nested_parentheses(depth: int) -> str:
    return "(" * depth + "X[i, j]" + ")" * depth


def long_sum(terms: int) -> str:
    return "X[i, j]" + " + X[i, j]" * terms


@pytest.mark.parametrize(
    "expression",
    [nested_parentheses(10_000), long_sum(30_000)],
    ids=["parentheses_10000", "sum_30000"],
)
def test_deep_expression_does_not_crash(tmp_path, expression):
    source = (ERRORS / "dim_override_unknown.py").read_text(encoding="utf-8")
    source = source.replace("max(X[i, j], 0.0)", expression)
    path = tmp_path / "deep.py"
    path.write_text(source, encoding="utf-8")
    proc = run_cli("check", path)
    assert proc.returncode in (0, 1), f"crashed with exit code {proc.returncode}"
    assert_cli_error(proc, "syntax", ("nested too deeply", "operands in a row"))


# -- --dim overrides ---------------------------------------------------------------------

DIM_OVERRIDES = ERRORS / "dim_override_unknown.py"


def test_dim_override_unknown_name():
    with pytest.raises(solar.UserError) as info:
        solar.trace(DIM_OVERRIDES, dims={"Q": 3})
    assert info.value.kind == "argument", str(info.value)
    assert "'Q'" in info.value.diagnostics[0].message, str(info.value)
    assert_cli_error(run_cli("analyze", DIM_OVERRIDES, "--dim", "Q=3"), "argument", "'Q'")


@pytest.mark.parametrize("size", [0, -1])
def test_dim_override_not_positive(size):
    with pytest.raises(solar.UserError) as info:
        solar.trace(DIM_OVERRIDES, dims={"M": size})
    assert info.value.kind == "argument", str(info.value)
    assert "positive" in info.value.diagnostics[0].message, str(info.value)
    proc = run_cli("analyze", DIM_OVERRIDES, f"--dim=M={size}")
    assert_cli_error(proc, "argument", "positive")


def test_dim_override_not_an_integer_cli():
    proc = run_cli("analyze", DIM_OVERRIDES, "--dim", "M=abc")
    assert_cli_error(proc, None, "NAME=INTEGER")


def test_dim_override_too_large():
    with pytest.raises(solar.UserError) as info:
        solar.trace(DIM_OVERRIDES, dims={"M": 2**70})
    assert info.value.kind == "argument", str(info.value)
    proc = run_cli("analyze", DIM_OVERRIDES, "--dim", f"M={2**70}")
    assert_cli_error(proc, "argument", "M=")


def test_dim_override_not_an_integer_api():
    with pytest.raises(solar.UserError) as info:
        solar.trace(DIM_OVERRIDES, dims={"M": "abc"})
    assert info.value.kind == "argument", str(info.value)
    assert "M" in str(info.value)


def test_unknown_arch_name():
    with pytest.raises(solar.UserError) as info:
        solar.load_arch("NoSuchArch")
    assert info.value.kind == "argument", str(info.value)
    assert "unknown architecture 'NoSuchArch'" in str(info.value)
    proc = run_cli("analyze", VALID_PROGRAM, "--arch", "NoSuchArch")
    assert_cli_error(proc, "argument", "NoSuchArch")


# -- architecture specs ------------------------------------------------------------------

# (file, substring naming the field, line)
ARCH_CASES = [
    ("arch_unknown_field.yaml", "unknown field 'dram.bandwidth_gbps'", 15),
    ("arch_missing_dram_bandwidth.yaml", "'dram.bytes_per_second' is missing", 13),
    ("arch_negative_rate.yaml", "'vector_flops_per_second.fp32.value' must be positive", 11),
    ("arch_yaml_syntax.yaml", "YAML syntax error", 10),
    ("arch_bare_number.yaml", "'dram.bytes_per_second' must be a mapping", 13),
    ("arch_missing_source.yaml", "'dram.bytes_per_second.source' is missing", 13),
    ("arch_string_rate.yaml", "'dram.bytes_per_second.value' must be a number", 13),
    ("arch_unknown_source_key.yaml", "'whitepaper'", 11),
    ("arch_unknown_cache_level.yaml", "'cache_level' names 'L3'", 17),
    ("arch_duplicate_key.yaml", "'dram' is written twice", 14),
    # What the peaks are: dense, at which clock, for which accumulate type.
    ("arch_missing_sparsity.yaml", "field 'sparsity' is missing", 2),
    ("arch_sparse_rates.yaml", "field 'sparsity' must be 'dense', got 'sparse'", 4),
    ("arch_missing_clock.yaml", "field 'clock' is missing", 2),
    (
        "arch_base_clock.yaml",
        "field 'clock' must be one of boost, measured, assumed, got 'base'",
        5,
    ),
    ("arch_missing_accumulate.yaml", "'matrix_flops_per_second.fp16.accumulate' is missing", 9),
    # Physical values (issue 41): a rate of 1e-320 B/s made every time infinite (SOL inf s);
    # a 0.5-byte L2 and a 1-byte DRAM beside a 52,428,800-byte L2 were accepted.
    ("arch_denormal_bandwidth.yaml", "'dram.bytes_per_second.value' must be at least 1", 13),
    ("arch_half_byte_cache.yaml", "'on_chip[0].capacity_bytes.value' must be a whole number", 16),
    ("arch_tiny_dram.yaml", "'dram.capacity_bytes.value' (1) is below on-chip level 'L2'", 14),
    # Text that reached the terminal raw: ESC [2J and BEL, a NUL, a right-to-left override.
    ("arch_escape_name.yaml", "field 'name' contains U+001B, a control character", 2),
    ("arch_nul_level_name.yaml", "'on_chip[0].name' contains U+0000, a control character", 15),
    ("arch_bidi_source.yaml", "'sources.datasheet' contains U+202E, a bidirectional", 7),
]


@pytest.mark.parametrize(
    ("file", "substring", "line"),
    [pytest.param(*case, id=case[0].removesuffix(".yaml")) for case in ARCH_CASES],
)
def test_arch_spec_error(file, substring, line):
    path = ERRORS / file
    with pytest.raises(solar.UserError) as info:
        solar.load_arch(str(path))
    err = info.value
    diag = err.diagnostics[0]
    assert err.kind == diag.kind == "spec", str(err)
    assert substring in diag.message, str(err)
    assert diag.line == line, str(err)
    proc = run_cli("analyze", VALID_PROGRAM, "--arch", path)
    assert_cli_error(proc, "spec", substring)
    assert f"{file}:{line}:" in proc.stderr, proc.stderr
    assert not any(c in proc.stderr for c in "\x1b\x07\x00\u202e"), repr(proc.stderr)


def test_arch_spec_errors_quote_spec_text_escaped(tmp_path):
    # An unknown key "\e[31mspeed" (ESC, then a colour code) is quoted in the error as
    # <U+001B>[31mspeed: no error message carries a spec's control characters raw. A raw
    # ESC byte in a plain scalar name is refused like the YAML escape.
    base = (ERRORS / "arch_escape_name.yaml").read_text(encoding="utf-8")
    path = tmp_path / "spec.yaml"
    path.write_text(base.replace('name: "\\e[2JH100\\a"', 'name: ok\n"\\e[31mspeed": 1'))
    with pytest.raises(solar.UserError) as info:
        solar.load_arch(str(path))
    assert "unknown field '<U+001B>[31mspeed'" in str(info.value), str(info.value)
    assert "\x1b" not in str(info.value)
    path.write_text(base.replace('name: "\\e[2JH100\\a"', "name: H100\x1b[2J"))
    with pytest.raises(solar.UserError) as info:
        solar.load_arch(str(path))
    assert "field 'name' contains U+001B, a control character" in str(info.value)
    assert info.value.diagnostics[0].line == 2
