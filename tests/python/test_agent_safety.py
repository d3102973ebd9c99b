"""Nothing from a reply, a cached translation or an IR file runs as Python (docs/agent.md,
"Safety"; issue 41). Each exploit form is a reply or a file that today's Solar refuses and
that the previous Solar accepted or imported; a canary file that the hostile code would write
shows that it never ran. The replies come from the scripted server (scripted_llm.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from scripted_llm import ScriptedServer, fenced, reply
from solar import _core, cli
from solar.agent import Endpoint, prompt, translate
from solar.agent import reply as reply_screen
from solar.agent.cache import MAX_ENTRY_BYTES, Cache, default_dir
from solar.agent.translate import _header
from solar.errors import UserError
from solar.frontend.kind import program_kind
from solar.frontend.problem import import_program

DATA = Path(__file__).parent / "agent_data"
SOFTMAX_NP = str(DATA / "softmax_np.py")
RIGHT = (DATA / "softmax_ir.py").read_text()


def endpoint(server) -> Endpoint:
    return Endpoint(server.url, "scripted", backoff=0.01)


def spaced(program: str) -> str:
    """`@ kernel` and `def model (`: the spacing that made the old substring test miss IR."""
    return program.replace("@kernel", "@ kernel").replace("def model(", "def model (")


def exploit(canary: Path) -> str:
    """Every form of issue 41 around the right softmax: an import split by a line
    continuation, `atexit.register` imported as `kernel`, a call in an unused default."""
    return (
        "from \\\n    os import system\n"
        "from \\\n    atexit import register as kernel\n"
        + spaced(RIGHT)
        + f'\n\ndef helper(t, s=system("touch {canary}")):\n    return t\n'
    )


# ---------------------------------------------------------------------------- the screen


def test_the_screen_sees_an_import_split_by_a_line_continuation():
    """`from \\` + newline + `    os import system` is one statement at line 1, column 1; the
    old line-by-line screen saw neither line as an import and returned nothing."""
    problems = reply_screen.screen("from \\\n    os import system\n" + RIGHT)
    assert problems == [
        "line 1:1: `from os import system`: the IR imports nothing but solar.ir "
        "(`from solar.ir import kernel, Tensor, Dim`, no other module, no `as` alias)"
    ]


def test_the_screen_sees_an_atexit_alias_and_an_import_inside_a_function():
    """Line 1 aliases atexit.register to kernel (continued onto line 2); line 5 imports os
    in a helper's body at column 5. Both are named; solar.ir's own import (line 3) is not."""
    program = (
        "from \\\n  atexit import register as kernel\n"
        "from solar.ir import kernel, Tensor, Dim\n"
        "def helper(t):\n    import os\n    return t\n"
    )
    problems = reply_screen.screen(program)
    assert [p.split(": `")[0] for p in problems] == ["line 1:1", "line 5:5"]
    assert "`from atexit import register as kernel`" in problems[0]
    assert "`import os`" in problems[1]


# ------------------------------------------------------------------- the agent's output


def test_a_reply_with_every_exploit_form_is_refused_and_never_written(tmp_path):
    """Attempt 1 is the right softmax wrapped in the exploit forms: refused by the screen
    (category "unsafe"), fed back naming both imports; attempt 2, the plain program, is the
    one accepted. The previous Solar accepted attempt 1 and wrote it out as it was."""
    canary = tmp_path / "canary"
    out = tmp_path / "out.py"
    with ScriptedServer([reply(fenced(exploit(canary))), reply(fenced(RIGHT))]) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False, out=str(out))
        feedback = s.user_messages(1)[-1]
    assert [a.category for a in t.attempts] == ["unsafe", ""]
    assert "`from os import system`" in feedback
    assert "`from atexit import register as kernel`" in feedback
    written = out.read_text()
    assert "system" not in written and "atexit" not in written
    assert not canary.exists()


def test_the_written_program_is_solar_printing_of_the_checked_ast(tmp_path):
    """A reply with its own comment and layout is accepted; what is written is Solar's
    header followed by the printer's text of the checked program (the comment, which the
    AST does not hold, is gone), not the reply's text."""
    odd = spaced(RIGHT).replace("def softmax(", "# the reply's own words\ndef softmax(", 1)
    out = tmp_path / "out.py"
    with ScriptedServer([reply(fenced(odd))]) as s:
        t = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=False, out=str(out))
    body = _core.canonical_program(RIGHT, "softmax_ir.py")
    assert t.program == _header(t, prompt.ir_spec_version()) + body
    assert out.read_text() == t.program
    assert "the reply's own words" not in t.program and "@kernel\ndef softmax(" in t.program


def test_canonical_program_refuses_what_the_checker_refuses():
    """The binding is the checker's gate: the default-argument call at line 1, column 17."""
    with pytest.raises(UserError, match=r"t\.py:1:17: .*a default value must not call 'system'"):
        _core.canonical_program('def helper(t, s=system("id")):\n    return t\n' + RIGHT, "t.py")


# ------------------------------------------------------------------- IR is never imported


def hostile_file(tmp_path: Path) -> tuple[Path, Path]:
    """A file that imports torch (the old dispatch's only test for PyTorch), writes a canary
    at import, and holds IR spelt `@ kernel` / `def model (`."""
    canary = tmp_path / "canary"
    path = tmp_path / "hostile.py"
    path.write_text(
        "import torch\nfrom pathlib import Path\n\n"
        f"Path({str(canary)!r}).write_text('ran')\n\n"
        + spaced(RIGHT).replace("from solar.ir import kernel, Tensor, Dim\n", "")
    )
    return path, canary


@pytest.mark.parametrize(
    "text",
    [
        "import torch\n@ kernel\ndef f(X):\n    return X\n",
        "import torch\n@\\\nkernel\ndef f(X):\n    return X\n",
        "import torch\ndef model (x):\n    return x\n",
        "import torch\ndef  model\t(x):\n    return x\n",
    ],
)
def test_spacing_does_not_hide_ir_from_the_dispatch(tmp_path, text):
    """Tokens, not substrings: each spelling is IR (the old test called all four PyTorch)."""
    path = tmp_path / "p.py"
    path.write_text(text)
    assert program_kind(path) == "ir"


def test_a_plain_pytorch_problem_is_still_pytorch(tmp_path):
    path = tmp_path / "p.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n# @kernel? no\n")
    assert program_kind(path) == "pytorch"


def test_import_program_refuses_an_ir_file(tmp_path):
    """The last guard: the one place Solar imports a user's file refuses IR by its tokens."""
    path, canary = hostile_file(tmp_path)
    with pytest.raises(UserError, match="is an IR program .* never imports it as Python"):
        import_program(str(path))
    assert not canary.exists()


def _commands(path: Path, tmp_path: Path) -> list[list[str]]:
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.zeros((64, 128), np.float32))
    f = str(path)
    return [
        ["check", f],
        ["analyze", f, "--arch", "H100_PCIe"],
        ["analyze", f, "--arch", "H100_PCIe", "--measure"],
        ["batch", f, "--out", str(tmp_path / "b.jsonl"), "--jobs", "1"],
        ["sweep", f, "--dim", "R=64,128"],
        ["graph", f],
        ["inputs", f, "--out", str(tmp_path / "i.npz")],
        ["run", f, "--inputs", str(inputs)],
        ["validate", f, "--inputs", str(inputs), "--expected", str(inputs)],
        ["inverse", f, "--latency", "1ms"],
        ["chains", f],
        [
            "translate",
            SOFTMAX_NP,
            "--reference",
            f,
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "none",
            "--no-cache",
        ],
    ]


def test_no_command_imports_a_file_the_ir_reader_takes(tmp_path, capsys):
    """Each command that takes a program, given the hostile file: an error (exit 1: the IR
    reader refuses `import torch`), and the canary that its import would write never
    appears. The previous Solar's analyze ran it as a PyTorch problem."""
    path, canary = hostile_file(tmp_path)
    refusals = (
        "1:1: error[unsupported]: 'import torch': an IR program imports nothing but solar.ir",
        "error[capture]: the file is an IR program",
        "--measure and --compile time a PyTorch program; this is an IR program",
    )
    for argv in _commands(path, tmp_path):
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert not canary.exists(), argv
        if argv[0] == "batch":  # a batch records the file's error and goes on
            assert code == 0 and " error " in err, err
        else:  # the IR reader's refusal, the import guard's, or --measure's (IR is not timed)
            assert code == 1 and "Traceback" not in err, (argv, err)
            assert any(m in err for m in refusals), (argv, err)


# --------------------------------------------------------------------------- the cache


def test_the_cache_honours_solar_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("SOLAR_TRANSLATION_CACHE", raising=False)
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path / "k"))
    assert default_dir() == str(tmp_path / "k" / "translations")
    monkeypatch.setenv("SOLAR_TRANSLATION_CACHE", str(tmp_path / "t"))
    assert default_dir() == str(tmp_path / "t")


def test_the_cache_is_created_private_under_umask_000(tmp_path):
    """Under umask 000 a plain mkdir makes 0777; the directory, its new parent and the entry
    are 0700, 0700 and 0600."""
    directory = tmp_path / "parent" / "translations"
    old = os.umask(0)
    try:
        Cache(str(directory)).put("k", {"program": "x"})
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(directory.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "k.json").stat().st_mode) == 0o600


def test_a_cache_others_can_write_is_refused(tmp_path):
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(0o777)
    cache = Cache(str(directory))
    message = r"translation cache .*shared is writable by its group or others \(mode 0777\)"
    with pytest.raises(UserError, match=message):
        cache.get("k")
    with pytest.raises(UserError, match=message):
        cache.put("k", {"program": "x"})


def test_only_regular_small_entries_are_read(tmp_path):
    """A symlink to a good entry, a FIFO (which would block a plain open) and an entry one
    byte over MAX_ENTRY_BYTES are misses; the good entry itself is a hit."""
    directory = tmp_path / "c"
    cache = Cache(str(directory))
    cache.put("good", {"program": "p"})
    assert cache.get("good") == {"program": "p"}
    (directory / "link.json").symlink_to(directory / "good.json")
    os.mkfifo(directory / "fifo.json", 0o600)
    big = json.dumps({"program": "x" * MAX_ENTRY_BYTES})  # 4 MiB + 15 B of JSON
    (directory / "big.json").write_text(big)
    assert len(big) > MAX_ENTRY_BYTES
    assert cache.get("link") is None
    assert cache.get("fifo") is None
    assert cache.get("big") is None


def test_a_cached_hostile_program_is_refused_and_translated_again(tmp_path):
    """The cached entry is replaced by the exploit program (which the old checker accepted
    and the old cache wrote out): the entry is a miss with a note, the server is asked
    again, and what is written is the printer's text of the fresh reply."""
    canary = tmp_path / "canary"
    cache = tmp_path / "cache"
    notes = []
    with ScriptedServer([reply(fenced(RIGHT)), reply(fenced(RIGHT))]) as s:
        translate(SOFTMAX_NP, endpoint=endpoint(s), cache=str(cache))
        (entry,) = cache.glob("*.json")
        record = json.loads(entry.read_text())
        record["program"] = exploit(canary)
        entry.write_text(json.dumps(record))
        again = translate(SOFTMAX_NP, endpoint=endpoint(s), cache=str(cache), progress=notes.append)
        assert len(s.requests) == 2
    assert not again.cached and "system" not in again.program
    assert any("cached translation of softmax_np.py is refused by the checker" in n for n in notes)
    assert not canary.exists()
