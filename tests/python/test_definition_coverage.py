"""SOL-ExecBench's own conventions, as its published problems use them (issue 42, item 4):
`solar batch` takes each problem folder once, as its definition; custom input generators
that read values run for real; a missing safetensors blob is named; a workload may carry
axes and inputs the definition does not name, and a const axis may be 0; the mask finder
skips sizes a data-dependent operator leaves unknown. Every definition here is written in
a tmp dir (tests never read the benchmark)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from solar.definitions import (
    load_definition,
    load_workloads,
    problem_text,
    resolve_axes,
)
from solar.errors import UserError

DOUBLE = {
    "name": "double",
    "axes": {"N": {"type": "var"}, "D": {"type": "const", "value": 16}},
    "inputs": {"x": {"shape": ["N", "D"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["N", "D"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(x):\n    return x * 2\n",
}


def _write(folder: Path, definition: dict, lines: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "definition.json"
    path.write_text(json.dumps(definition))
    (folder / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in lines))
    return path


def _file_of(tmp_path: Path, path: Path, index: int = 0) -> str:
    """The problem file of workload `index` of the definition at `path`, written to tmp."""
    d = load_definition(str(path))
    w = load_workloads(str(path.parent / "workload.jsonl"), d)[index]
    out = tmp_path / f"problem_{w.uuid}.py"
    out.write_text(problem_text(d, w, resolve_axes(d, w.axes)))
    return str(out)


def _analysed(problem: str):
    import solar

    return solar.analyze(problem, arch="H100_PCIe", cache_aware=False)


def test_batch_takes_each_problem_folder_once_as_its_definition(tmp_path):
    """The benchmark's layout: problems/<N>/ with definition.json, workload.jsonl and
    reference.py (the reference again, as a file, which is no problem file: it has no Model).
    Folder 1 is real with 2 workloads; folder 2 is a symbolic link to a folder elsewhere with
    1 workload; folder 3 links back to problems/ (a cycle, entered once). A plain program in
    a folder without a definition is still a program. Entries: 2 + 1 workloads and the one
    program = 4, and no reference.py."""
    from solar.batch import collect

    problems = tmp_path / "problems"
    lines = [{"uuid": "a", "axes": {"N": 2}}, {"uuid": "b", "axes": {"N": 4}}]
    _write(problems / "1", DOUBLE, lines)
    (problems / "1" / "reference.py").write_text(DOUBLE["reference"])
    _write(tmp_path / "elsewhere", DOUBLE, [{"uuid": "c", "axes": {"N": 8}}])
    (tmp_path / "elsewhere" / "reference.py").write_text(DOUBLE["reference"])
    os.symlink(tmp_path / "elsewhere", problems / "2")
    os.symlink(problems, problems / "3")
    (problems / "plain").mkdir()
    (problems / "plain" / "program.py").write_text("# a problem file\n")
    found = [str(p.relative_to(problems)) for p in collect([str(problems)])]
    assert sorted(found) == [
        "1/definition.json#a",
        "1/definition.json#b",
        "2/definition.json#c",
        "plain/program.py",
    ]


def test_a_custom_generator_that_reads_values_runs_for_real(tmp_path, monkeypatch):
    """An NVFP4-style generator scales its draw by a value it reads back (`.item()`), which
    fake tensors cannot give: it runs for real at the workload's size and the capture gets
    its tensors' shapes. x [8, 16] fp32 = 512 B declared; y = 2x: 128 multiplies, 512 B in
    and 512 B out. With CUSTOM_REAL_BYTES at 256 the generator still runs, its floating
    tensors of at most SPECIALISE_REAL_TENSOR_BYTES built for real (x, 512 B); with that at
    256 too, x is fake, and the generator's read of it is refused, naming both."""
    import solar.definitions as definitions
    import solar.frontend.specialise as specialise

    reference = (
        "import torch\n\n"
        "def make(axes_and_scalars, device):\n"
        "    x = torch.randn(axes_and_scalars['N'], 16, device=device)\n"
        "    scale = x.abs().max().item()\n"
        "    return {'x': x / scale}\n\n"
        "def run(x):\n    return x * 2\n"
    )
    d = {**DOUBLE, "reference": reference, "custom_inputs_entrypoint": "make"}
    path = _write(
        tmp_path / "p", d, [{"uuid": "w", "axes": {"N": 8}, "inputs": {"x": {"type": "custom"}}}]
    )
    problem = _file_of(tmp_path, path)
    r = _analysed(problem)
    assert r.graph.total_flops == 128
    assert r.validation.status == "full"
    monkeypatch.setattr(definitions, "CUSTOM_REAL_BYTES", 256)
    assert _analysed(problem).graph.total_flops == 128
    monkeypatch.setattr(specialise, "SPECIALISE_REAL_TENSOR_BYTES", 256)
    with pytest.raises(
        UserError,
        match=r"its inputs take 512 bytes, above the 256 built whole .*, and it reads a value "
        "computed from a large floating tensor, which is built fake",
    ):
        _analysed(problem)


def test_a_custom_generator_with_a_data_dependent_size_runs_for_real(tmp_path):
    """SOL-ExecBench task 21's generator calls `unique` (its size depends on the values):
    torch.unique of [0, 1, 1, 2, 2, 2, 3, 3] has 4 elements, so lengths is [4] int64 and
    y = lengths * 2 is 4 multiplies."""
    reference = (
        "import torch\n\n"
        "def make(axes_and_scalars, device):\n"
        "    ids = torch.tensor([0, 1, 1, 2, 2, 2, 3, 3], device=device)\n"
        "    return {'lengths': torch.unique(ids)}\n\n"
        "def run(lengths):\n    return lengths * 2\n"
    )
    d = {
        "name": "unique",
        "axes": {"B": {"type": "var"}},
        "custom_inputs_entrypoint": "make",
        "inputs": {"lengths": {"shape": ["B"], "dtype": "int64"}},
        "outputs": {"y": {"shape": ["B"], "dtype": "int64"}},
        "reference": reference,
    }
    line = {"uuid": "w", "axes": {"B": 4}, "inputs": {"lengths": {"type": "custom"}}}
    r = _analysed(_file_of(tmp_path, _write(tmp_path / "p", d, [line])))
    assert r.graph.total_flops == 4


GATHER = {
    "name": "gather",
    "axes": {
        "R": {"type": "const", "value": 8},
        "D": {"type": "const", "value": 4},
        "N": {"type": "var"},
    },
    "inputs": {
        "table": {"shape": ["R", "D"], "dtype": "float32"},
        "idx": {"shape": ["N"], "dtype": "int64"},
    },
    "outputs": {"y": {"shape": ["N", "D"], "dtype": "float32"}},
    "reference": "import torch\n\ndef run(table, idx):\n    return table[idx] * 2\n",
}


def test_a_missing_safetensors_blob_is_named_and_a_present_one_is_read(tmp_path):
    """A workload whose idx comes from a safetensors blob that is not there (SOL-ExecBench
    tasks 221-229: the blobs are not published) is one line naming the workload line, the
    input, the blob and its key. With the blob written here (idx = [1, 3, 5]), y =
    table[idx] * 2 is 3 rows x 4 = 12 multiplies, after the gather's wrap of negative
    indices (a compare and an add per index: 2 x 3 = 6): 18 operations; validated against
    PyTorch on the blob's values."""
    import torch
    from safetensors.torch import save_file

    given = {"type": "safetensors", "path": "blobs/idx.safetensors", "tensor_key": "idx"}
    line = {"uuid": "w", "axes": {"N": 3}, "inputs": {"idx": given}}
    path = _write(tmp_path / "p", GATHER, [line])
    blob = tmp_path / "p" / "blobs" / "idx.safetensors"
    with pytest.raises(UserError) as e:
        _analysed(_file_of(tmp_path, path))
    message = str(e.value)
    assert (
        f"workload.jsonl:1: input 'idx' reads the safetensors blob {blob} (key 'idx'), "
        "which is not there" in message
    )
    assert "\n" not in message.strip()
    blob.parent.mkdir()
    save_file({"idx": torch.tensor([1, 3, 5])}, str(blob))
    r = _analysed(_file_of(tmp_path, path))
    assert r.graph.total_flops == 18
    assert r.validation.status == "full"


def test_the_benchmarks_workload_conventions_are_accepted(tmp_path):
    """What SOL-ExecBench's harness does with its workloads: it draws the definition's inputs
    only (task 162's workloads also name bias1 and bias2, which its definition dropped: not
    drawn); a workload axis the definition has not is handed to the custom generator, and a
    scalar input the generator returns is that value (task 126's is_joint_block); a const axis
    may be 0 (task 132's max_forward). Here E = 0 and W = D + E = 16; y = x * flag on x
    [4, 16] with flag 3 (from the workload's axis) is 64 multiplies."""
    reference = (
        "import torch\n\n"
        "def make(axes_and_scalars, device):\n"
        "    return {'x': torch.ones(axes_and_scalars['N'], 16, device=device),\n"
        "            'flag': axes_and_scalars['flag']}\n\n"
        "def run(x, flag):\n    return x * flag\n"
    )
    d = {
        "name": "conventions",
        "axes": {
            "N": {"type": "var"},
            "D": {"type": "const", "value": 16},
            "E": {"type": "const", "value": 0},
            "W": {"type": "expr", "expression": "D + E"},
        },
        "custom_inputs_entrypoint": "make",
        "inputs": {
            "x": {"shape": ["N", "D"], "dtype": "float32"},
            "flag": {"shape": None, "dtype": "int32"},
        },
        "outputs": {"y": {"shape": ["N", "W"], "dtype": "float32"}},
        "reference": reference,
    }
    line = {
        "uuid": "w",
        "axes": {"N": 4, "flag": 3},
        "inputs": {
            "x": {"type": "custom"},
            "flag": {"type": "custom"},
            "bias1": {"type": "random"},
        },
    }
    path = _write(tmp_path / "p", d, [line])
    definition = load_definition(str(path))
    assert definition.axes["E"]["value"] == 0
    w = load_workloads(str(path.parent / "workload.jsonl"), definition)[0]
    assert sorted(w.inputs) == ["flag", "x"]  # bias1 is not the definition's: not drawn
    assert resolve_axes(definition, w.axes) == {"N": 4, "D": 16, "E": 0, "W": 16}
    problem = _file_of(tmp_path, path)
    text = Path(problem).read_text()
    assert "return _reference_run(x, 3)" in text  # flag from the workload's axis
    assert "'flag': 3" in text  # handed to the generator
    r = _analysed(problem)
    assert r.graph.total_flops == 64
    assert r.validation.status == "full"
    # A negative const axis is still refused, by name.
    bad = {**d, "axes": {**d["axes"], "E": {"type": "const", "value": -1}}}
    with pytest.raises(UserError, match="const axis 'E' needs an integer value, 0 or more"):
        load_definition(str(_write(tmp_path / "bad", bad, [line])))


def test_the_mask_finder_skips_sizes_a_data_dependent_operator_leaves_unknown():
    """SOL-ExecBench task 106 (a capacity-limited MoE): the batched experts' bmm output is
    read at the positions a boolean mask keeps (`out[e[keep], p[keep]]`), whose count is an
    unknown u0 of the export. The mask finder followed the bmm into that index and read u0 as
    an int, which raised inside the shape environment (a traceback, not a report). It has no
    attention mask: no band is found."""
    import torch
    from solar.frontend.masks import attention_bands

    class Model(torch.nn.Module):
        def forward(self, x, w, e, p):
            y = torch.bmm(x, w)
            keep = p < 2
            return y[e[keep], p[keep]]

    args = (
        torch.randn(4, 3, 5),
        torch.randn(4, 5, 6),
        torch.tensor([0, 1, 2, 3]),
        torch.tensor([0, 2, 1, 0]),
    )
    exported = torch.export.export(Model(), args)
    shapes = [
        str(n.meta["val"].shape)
        for n in exported.graph.nodes
        if n.op == "call_function" and hasattr(n.meta.get("val"), "shape")
    ]
    assert "torch.Size([u0, 6])" in shapes  # the pattern: an unknown size after the bmm
    assert attention_bands(exported.graph, None) == {}


def _program(tmp_path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\n" + body)
    return str(path)


def test_bincount_counts_by_scatter_add(tmp_path):
    """torch.bincount (SOL-ExecBench tasks 58 and 106 count tokens per expert): x = [0, 2, 2,
    5, 2] int64 has max 5, so 6 bins; scatter_add of five ones into zeros is 5 adds; with
    weights [8, 6] fp32 summed per value, also 5 adds: 10 in all. Validated against PyTorch
    (counts [1, 0, 3, 0, 0, 1])."""
    r = _analysed(
        _program(
            tmp_path,
            "bincount",
            "class Model(nn.Module):\n    def forward(self, x, w):\n"
            "        return torch.bincount(x), torch.bincount(x, weights=w)\n\n\n"
            "def get_inputs():\n"
            "    return [torch.tensor([0, 2, 2, 5, 2]), torch.randn(5)]\n",
        )
    )
    assert r.validation.status == "full"
    assert r.graph.total_flops == 10


def test_a_strided_slice_scatter_is_a_scatter(tmp_path):
    """`torch.slice_scatter(x, v, dim=1, start=1, step=2)` (SOL-ExecBench task 23 writes
    every other position of a grid) on x [4, 8] fp32 and v [4, 4] fp32, with x read again
    after it: not in place, so a scatter of v at columns 1 + 2j. The index is computed: 4
    multiplies by the step and 4 adds of the start = 8; y + x is 4 x 8 = 32 adds; 40 in all.
    Validated against PyTorch."""
    r = _analysed(
        _program(
            tmp_path,
            "strided",
            "class Model(nn.Module):\n    def forward(self, x, v):\n"
            "        y = torch.slice_scatter(x, v, dim=1, start=1, step=2)\n"
            "        return y + x\n\n\n"
            "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(4, 4)]\n",
        )
    )
    assert r.validation.status == "full"
    assert r.graph.total_flops == 40


def test_a_reference_that_names_a_cuda_device_runs_on_the_cpu(tmp_path):
    """SOL-ExecBench task 28 builds its masks on `torch.device('cuda')`, which torch.export
    refused on a machine without CUDA ("PyTorch is not linked with support for cuda
    devices"). The literal becomes "cpu" in the problem file (a comment naming 'cuda' is
    untouched): y = x * ones [8, 16] is 128 multiplies, validated."""
    reference = (
        "import torch\n\n"
        "def run(x):\n"
        "    device = torch.device('cuda')  # not 'cuda' here\n"
        "    return x * torch.ones(x.shape, device=device)\n"
    )
    d = {**DOUBLE, "reference": reference}
    problem = _file_of(tmp_path, _write(tmp_path / "p", d, [{"uuid": "w", "axes": {"N": 8}}]))
    assert "device = torch.device(\"cpu\")  # not 'cuda' here" in Path(problem).read_text()
    r = _analysed(problem)
    assert r.graph.total_flops == 128
    assert r.validation.status == "full"
