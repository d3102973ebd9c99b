"""Every reader gives a one-line user error, never a traceback, in linear time (issue 41):
timings (solar/timings.py, `solar score`/`solar headroom`), definitions and workloads
(solar/definitions.py), .npz references and inputs, and the import scan of
agent/languages.py. Each input here is the smallest that failed before: a traceback, a
silently kept duplicate, or quadratic time."""

from __future__ import annotations

import io
import json
import re
import signal
import zipfile

import numpy as np
import pytest
from solar import cli
from solar.agent import languages
from solar.definitions import load_definition, load_workloads, resolve_axes
from solar.errors import UserError
from solar.json_input import MAX_DEPTH, depth
from solar.score import load_timings

DEEP = "[" * 100_000 + "]" * 100_000  # json.loads raised RecursionError on this


def _one_line_error(argv, capsys) -> str:
    """Runs `solar argv` in this process: exit status 1 and one `error[...]` line."""
    assert cli.main([str(a) for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error[") and "Traceback" not in err, err
    return err


# --- the import scan (agent/languages.py) -------------------------------------------------


def test_the_import_scan_is_linear_on_blank_lines():
    """`^\\s*` under MULTILINE let every line start of a run of blank lines rescan the whole
    run: 20,000 blank lines took 25 s. Structurally, no quantifier of the pattern can match a
    line end; and 200,000 blank lines before an import (minutes before, milliseconds now)
    finish under a generous 60 s alarm and find the one import."""
    leading = languages.IMPORT_LINE.pattern.split("(?:import|from)")[0]
    assert leading == "^[ \\t\\f]*" and "\\s" not in languages.IMPORT_LINE.pattern

    def too_slow(*_):
        raise TimeoutError("the import scan is not linear")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        found = languages._imports("\n" * 200_000 + "import torch\n")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert found == {"torch"}
    assert languages.detect("big.py", "\n" * 200_000 + "  from jax import numpy\n") == "jax"


# --- JSON nesting (solar/json_input.py) -----------------------------------------------------


def test_json_depth_is_measured_outside_strings():
    """'[{"a": "[[[["}]' nests 2 deep: the brackets in the string do not count, nor does an
    escaped quote end it ("\\"[" is a string)."""
    assert depth('[{"a": "[[[["}]') == 2
    assert depth('["\\"[[", {}]') == 2
    assert depth(DEEP) == 100_000


# --- timings (solar score, solar headroom) --------------------------------------------------


def _results(path):
    path.write_text(
        json.dumps({"source": "a.py", "status": "ok", "totals": {"seconds": {"fused": 1e-3}}})
        + "\n"
    )


@pytest.mark.parametrize("command", ["score", "headroom"])
def test_timings_nested_100k_deep_are_one_error(tmp_path, capsys, command):
    results, timings = tmp_path / "r.jsonl", tmp_path / "t.json"
    _results(results)
    timings.write_text(DEEP)
    err = _one_line_error([command, results, "--timings", timings], capsys)
    assert f"{timings}: the JSON is nested deeper than {MAX_DEPTH} levels" in err


@pytest.mark.parametrize("command", ["score", "headroom"])
def test_a_csv_field_over_128_kib_is_one_error(tmp_path, capsys, command):
    """csv's field limit is 131,072 characters: a name of 200,000 on line 2 is refused with
    that line, and the process-wide limit is left as it was."""
    import csv

    results, timings = tmp_path / "r.jsonl", tmp_path / "t.csv"
    _results(results)
    timings.write_text("name,kernel_ms,baseline_ms\n" + "a" * 200_000 + ",1,2\n")
    limit = csv.field_size_limit()
    err = _one_line_error([command, results, "--timings", timings], capsys)
    assert f"{timings}:2: field larger than field limit (131072)" in err
    assert csv.field_size_limit() == limit


def test_duplicate_timings_name_both_entries_and_lines(tmp_path):
    """'a' on CSV lines 2 and 4 (entries 1 and 3); JSON lines 1 and 3; a JSON object that
    names 'a' twice."""
    csv_file = tmp_path / "t.csv"
    csv_file.write_text("name,kernel_ms,baseline_ms\na,1,2\nb,1,2\na,3,4\n")
    with pytest.raises(
        UserError, match=r"entry 3, line 4 names 'a' again \(first at entry 1, line 2\)"
    ):
        load_timings(str(csv_file))
    lines = tmp_path / "t.jsonl"
    row = '{"name": "a", "kernel_ms": 1, "baseline_ms": 2}\n'
    lines.write_text(row + "\n" + row)
    with pytest.raises(
        UserError, match=r"entry 2, line 3 names 'a' again \(first at entry 1, line 1\)"
    ):
        load_timings(str(lines))
    obj = tmp_path / "t.json"
    obj.write_text('{"a": {"kernel_ms": 1, "baseline_ms": 2}, "a": {"kernel_ms": 3}}')
    with pytest.raises(UserError, match=r"key 'a' appears twice in one object"):
        load_timings(str(obj))


def test_a_time_too_large_for_a_float_is_one_error(tmp_path):
    """A 400-digit integer is valid JSON; float() of it raised OverflowError."""
    t = tmp_path / "t.jsonl"
    t.write_text('{"name": "a", "kernel_ms": 1' + "0" * 400 + ', "baseline_ms": 2}\n')
    with pytest.raises(
        UserError,
        match=r"kernel_ms = 1000000000000000000000000000000000000000\.\.\. is not a number",
    ):
        load_timings(str(t))


# --- definitions and workloads --------------------------------------------------------------

REFERENCE = "import torch\n\ndef run(A):\n    return A * 2\n"


def _definition(tmp_path, axes=None, expression=None, **extra):
    axes = axes or {"M": {"type": "var"}, "N": {"type": "const", "value": 4}}
    if expression is not None:
        axes["E"] = {"type": "expr", "expression": expression}
    doc = {
        "name": "double",
        "axes": axes,
        "inputs": {"A": {"shape": ["M", "N"], "dtype": "float32"}},
        "outputs": {"B": {"shape": ["M", "N"], "dtype": "float32"}},
        "reference": REFERENCE,
        **extra,
    }
    path = tmp_path / "double.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_definition_nested_100k_deep_is_one_error(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"axes": ' + DEEP + "}")
    err = _one_line_error(["analyze", path], capsys)
    assert f"{path}: the JSON is nested deeper than {MAX_DEPTH} levels" in err


def test_a_definition_that_is_not_an_object_names_what_it_is(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('["axes", "inputs"]')
    with pytest.raises(UserError, match="the definition is a list, not an object"):
        load_definition(str(path))
    path.write_text('{"axes": {}, "inputs": {"A": 3}, "outputs": {}, "reference": ""}')
    with pytest.raises(UserError, match="input 'A' is a number, not an object"):
        load_definition(str(path))
    path.write_text('{"axes": {},\n "inputs": }')  # line 2, column 12: the '}'
    with pytest.raises(UserError, match=r"d.json:2:12: the definition is not JSON"):
        load_definition(str(path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"uuid": "w", "axes": {"M": "four"}}', "w.jsonl:1: axis 'M' = 'four'"),
        ('"a workload"', "w.jsonl:1: the line is a string, not an object"),
        ('{"uuid": "w", "axes": {"M": -3}}', "w.jsonl:1: axis 'M' = -3"),
        ('{"uuid": "w", "axes": {"M": true}}', "w.jsonl:1: axis 'M' = True"),
        ('{"workload": [1]}', "w.jsonl:1: 'workload' is a list, not an object"),
        ('{"uuid": "w", "inputs": {"A": "random"}}', "input 'A' is a string, not an object"),
        ('{"inputs": {"A": {"type": "safetensors"}}}', "it needs a path and a tensor_key"),
        ("[" * 300 + "]" * 300, f"w.jsonl:1: the JSON is nested deeper than {MAX_DEPTH}"),
    ],
)
def test_bad_workload_lines_are_refused_with_their_line(tmp_path, line, message):
    """Each raised AttributeError/ValueError/RecursionError, or (a negative size) reached
    get_inputs()."""
    d = load_definition(str(_definition(tmp_path)))
    w = tmp_path / "w.jsonl"
    w.write_text(line + "\n")
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_workloads(str(w), d)


def test_a_negative_size_from_an_expression_or_dim_is_refused(tmp_path):
    """E = N - 10 with N = 4 is -6; --dim M=-2 is -2: neither reaches get_inputs()."""
    d = load_definition(str(_definition(tmp_path, expression="N - 10")))
    with pytest.raises(UserError, match="axis 'E' = -6: a size is an integer, 0 or more"):
        resolve_axes(d, {"M": 2})
    d = load_definition(str(_definition(tmp_path)))
    with pytest.raises(UserError, match="axis 'M' = -2: a size is an integer, 0 or more"):
        resolve_axes(d, {"M": -2})


def test_an_expression_of_200000_terms_is_one_error(tmp_path):
    """'N + N + ...' (200,000 terms, 200,000 + 3 * 199,999 = 799,997 characters) made the
    parser or the evaluator recurse past the limit; it is refused by its length. 4,000
    terms (under the length cap) nest past the recursion limit: refused as too deep. A
    product of 40 N's (4^40 = 2^80 > 2^63 - 1) stops at the int64 limit."""
    d = load_definition(str(_definition(tmp_path, expression=" + ".join(["N"] * 200_000))))
    with pytest.raises(UserError, match="expr axis 'E' is 799997 characters long"):
        resolve_axes(d, {"M": 1})
    d = load_definition(str(_definition(tmp_path, expression="+".join(["N"] * 4_000))))
    with pytest.raises(UserError, match="expr axis 'E' is nested too deeply to compute"):
        resolve_axes(d, {"M": 1})
    d = load_definition(str(_definition(tmp_path, expression="*".join(["N"] * 40))))
    with pytest.raises(UserError, match="a value exceeds 9223372036854775807"):
        resolve_axes(d, {"M": 1})
    # The cap leaves ordinary expressions alone: 4 * 4 // 2 = 8.
    d = load_definition(str(_definition(tmp_path, expression="N * N // 2")))
    assert resolve_axes(d, {"M": 1})["E"] == 8


# --- .npz ---------------------------------------------------------------------------------


def _npz(path, patch) -> None:
    """An .npz of in0 = [0..5] and out0 = [1, 1, 1], its bytes changed by `patch`."""
    buf = io.BytesIO()
    np.savez(buf, in0=np.arange(6.0), out0=np.ones(3))
    path.write_bytes(patch(bytearray(buf.getvalue())))


def _bad_magic(b):
    i = b.index(b"\x93NUMPY")
    b[i + 5] = ord("X")
    return bytes(b)


def _zip_version_18_8(b):
    # "version needed to extract" (offset 6 of the central directory entry), 188: 18.8.
    i = b.index(b"PK\x01\x02")
    b[i + 6] = 188
    return bytes(b)


def _encrypted(b):
    # Bit 0 of the central directory entry's flags (offset 8): "encrypted".
    i = b.index(b"PK\x01\x02")
    b[i + 8] |= 1
    return bytes(b)


def _patched_data(b):
    b[b.rindex(b"\x93NUMPY") + 130] ^= 0xFF  # a byte of out0's data: the CRC fails
    return bytes(b)


@pytest.mark.parametrize(
    ("patch", "why"),
    [
        (_bad_magic, "Bad CRC-32"),
        (_zip_version_18_8, "zip file version 18.8"),
        (_patched_data, "Bad CRC-32 for file 'out0.npy'"),
        (_encrypted, "encrypted, password required"),
    ],
)
def test_damaged_npz_members_are_one_error(tmp_path, patch, why):
    """zipfile.BadZipFile and RuntimeError (NotImplementedError for the version) escaped
    both readers."""
    path = tmp_path / "ref.npz"
    _npz(path, patch)
    with pytest.raises(UserError, match=f"cannot read the reference .*damaged .*{why}"):
        languages.golden_npz(str(path))
    with pytest.raises(UserError, match=f"it is damaged .*{why}"):
        cli._loadz(str(path))


def test_an_intact_npz_still_reads(tmp_path):
    path = tmp_path / "ref.npz"
    _npz(path, bytes)
    golden = languages.golden_npz(str(path))
    assert golden.outputs[0].tolist() == [1.0, 1.0, 1.0]
    assert list(cli._loadz(str(path))) == ["in0", "out0"]
    assert zipfile.is_zipfile(path)


# --- declared outputs against the reference's -----------------------------------------------


def test_declared_outputs_are_compared_with_the_reference(tmp_path):
    """double.json declares B: [M, N] float32. At M = 3, N = 4 a reference returning
    A * 2 gives [3, 4] float32 (accepted); A.sum(1) gives [3] (the shape differs);
    A.half() gives [3, 4] float16 (the dtype differs). The shapes and dtypes come from a
    run on fake tensors of the generated problem file."""
    from solar.definitions import (
        Workload,
        check_outputs,
        problem_text,
        reference_outputs,
    )

    cases = {
        "A * 2": None,
        "A.sum(1)": "output 'B' is declared [3, 4] float32; the reference returns [3] float32",
        "A.half()": "output 'B' is declared [3, 4] float32; the reference returns [3, 4] float16",
        "(A, A)": "the reference returns 2 output(s); the definition declares 1 (B)",
    }
    for body, message in cases.items():
        path = _definition(tmp_path, reference=f"def run(A):\n    return {body}\n")
        d = load_definition(str(path))
        w = Workload("w3")
        axes = resolve_axes(d, {"M": 3})
        problem = tmp_path / "problem.py"
        problem.write_text(problem_text(d, w, axes))
        returned = reference_outputs(str(problem))
        if message is None:
            assert returned == [((3, 4), "float32")]
            check_outputs(d, w, axes, returned)
        else:
            with pytest.raises(UserError, match=re.escape(f"(workload w3): {message}")):
                check_outputs(d, w, axes, returned)
