"""The shipped architecture specs (configs/arch/*.yaml, format docs/arch-spec.md).

These tests read the YAML files themselves (not only through the loader) and hold every spec
to what a bound needs: dense peaks at a stated clock, the accumulate type of every
low-precision tensor rate, and a vendor citation (with its address) behind every number. The
checks of derivations recompute, from the figure a derivation quotes, the value the spec
stores, so a typo in either fails here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import solar
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARCH_DIR = ROOT / "configs" / "arch"
SPEC_FILES = sorted(ARCH_DIR.glob("*.yaml"))
ACCUMULATE_MODES = {"bf16", "fp16", "fp8", "fp6", "fp4"}
CLI_TIMEOUT_S = 60


def load_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def rates(doc: dict):
    """(dotted field, rate mapping) of every number in a spec."""
    for group in ("matrix_flops_per_second", "vector_flops_per_second"):
        for key, rate in doc[group].items():
            yield f"{group}.{key}", rate
    for key, rate in doc["dram"].items():
        yield f"dram.{key}", rate
    for i, level in enumerate(doc.get("on_chip", [])):
        for key in ("capacity_bytes", "bytes_per_second"):
            if key in level:
                yield f"on_chip[{i}].{key}", level[key]


def value(rate: dict) -> float:
    # PyYAML reads "494.7e12" (no sign in the exponent) as a string; the loader parses it.
    return float(str(rate["value"]))


def spec_id(path: Path) -> str:
    return path.stem


def test_the_specs_users_expect_are_shipped():
    names = {p.stem for p in SPEC_FILES}
    expected = {
        "H100_PCIe", "H100_SXM", "H200_SXM", "B200", "GB200",
        "A100_SXM", "A100_SXM_40GB", "A100_PCIe_40GB", "A100_PCIe_80GB",
        "L40S", "L4", "A10G", "T4", "RTX_4090", "RTX_A6000", "Jetson_Thor",
        "MI250X", "MI300X", "MI325X", "MI350X", "MI355X", "H100_PCIe_paper",
    }  # fmt: skip
    assert expected <= names, expected - names
    assert solar.list_archs() == sorted(names)


@pytest.mark.parametrize("path", SPEC_FILES, ids=spec_id)
def test_spec_states_what_its_peaks_are(path):
    doc = load_yaml(path)
    assert doc["name"] == path.stem
    assert doc["sparsity"] == "dense"
    # Vendor specs are at the boost clock; only a model's spec may assume a clock.
    assert doc["clock"] in ("boost", "assumed")
    if doc["clock"] == "assumed":
        assert "not a datasheet spec" in doc["description"]
    for mode, rate in doc["matrix_flops_per_second"].items():
        if mode in ACCUMULATE_MODES:
            assert rate["accumulate"] in ("fp32", "fp16"), mode
        else:
            assert "accumulate" not in rate, mode


@pytest.mark.parametrize("path", SPEC_FILES, ids=spec_id)
def test_every_number_cites_a_document_with_its_address(path):
    doc = load_yaml(path)
    sources = doc.get("sources", {})
    assert sources, "a spec names its documents under sources:"
    model_spec = doc["clock"] == "assumed"  # the paper's model cites the paper's code
    for key, citation in sources.items():
        if not model_spec:
            assert re.search(r"https?://\S+", citation), f"sources.{key} gives no URL"
    for field, rate in rates(doc):
        assert isinstance(rate, dict) and value(rate) > 0, field
        source = str(rate["source"])
        if re.fullmatch(r"\w+", source):
            assert source in sources, f"{field} cites undefined source {source!r}"
        else:  # a literal citation: a phrase naming the document
            assert len(source.split()) >= 4, f"{field}: {source!r} is not a citation"


# A derivation that quotes a sparse figure and halves it: "<N> <unit>... with sparsity / 2".
SPARSE_HALVED = re.compile(
    r"([\d,]+(?:\.\d+)?)\*? (TFLOPS|PFLOPS|TOPS|POPS)(?: with sparsity)? / 2(?![\d/])"
)
# A derivation that prints dense/sparse pairs and names the dense one: ", dense <N>".
DENSE_NAMED = re.compile(r"\bdense (\d[\d,]*(?:\.\d+)?)")
SCALE = {"TFLOPS": 1e12, "TOPS": 1e12, "PFLOPS": 1e15, "POPS": 1e15}


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.parametrize("path", SPEC_FILES, ids=spec_id)
def test_derivations_reproduce_the_values(path):
    doc = load_yaml(path)
    checked = 0
    for group in ("matrix_flops_per_second", "vector_flops_per_second"):
        for key, rate in doc[group].items():
            derivation = rate.get("derivation", "")
            if "with sparsity / 2" in derivation:
                quoted, unit = SPARSE_HALVED.search(derivation).groups()
                assert value(rate) == pytest.approx(number(quoted) * SCALE[unit] / 2), key
                checked += 1
            elif match := DENSE_NAMED.search(derivation):
                assert value(rate) == pytest.approx(number(match.group(1)) * 1e12), key
                checked += 1
    if path.stem in ("H100_SXM", "H200_SXM", "A100_SXM", "L40S", "L4", "RTX_4090", "GB200"):
        assert checked >= 4, "the dense/sparse derivations of this spec were not recognised"


def test_dense_is_half_of_sparse_by_hand():
    # H200 datasheet: FP8 3,958 TFLOPS with sparsity; dense 3,958 / 2 = 1,979 to within the
    # whitepaper's 1,978.9. L4: FP8 485* -> 242.5. B200 (HGX): FP4 18 PFLOPS* -> 9.
    h200 = solar.load_arch("H200_SXM").matrix_flops_per_second
    assert h200["fp8"][0] == pytest.approx(3958e12 / 2, rel=1e-4)
    assert solar.load_arch("L4").matrix_flops_per_second["fp8"][0] == 242.5e12
    assert solar.load_arch("B200").matrix_flops_per_second["fp4"][0] == 9e15


def test_geforce_fp16_rate_is_the_fp32_accumulate_one():
    # Ada whitepaper, RTX 4090: FP16 with FP16 accumulate 330.3 TFLOPS dense, with FP32
    # accumulate 165.2 (half); PyTorch accumulates fp16 GEMMs in fp32.
    spec = solar.load_arch("RTX_4090")
    assert spec.matrix_accumulate == {"bf16": "fp32", "fp16": "fp32", "fp8": "fp32"}
    assert spec.matrix_flops_per_second["fp16"][0] == 165.2e12
    assert spec.matrix_flops_per_second["fp16"][0] == pytest.approx(330.3e12 / 2, rel=1e-3)


def test_loaded_spec_carries_the_basis():
    spec = solar.load_arch("MI300X")
    assert (spec.sparsity, spec.clock) == ("dense", "boost")
    assert spec.cache_level == "InfinityCache"
    paper = solar.load_arch("H100_PCIe_paper")
    assert paper.clock == "assumed"
    assert paper.matrix_accumulate == {}  # fp32 only


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        cwd=ROOT,
    )


def test_arch_list_names_every_spec():
    r = run_cli("arch", "list")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    assert listed == [p.stem for p in SPEC_FILES]


def test_arch_show_prints_basis_and_accumulate():
    r = run_cli("arch", "show", "rtx_4090")
    assert r.returncode == 0, r.stderr
    assert "peaks: dense (no structured sparsity), at the boost clock" in r.stdout
    # 165.2e12 prints as 165 TFLOP/s, followed by its accumulate type.
    assert re.search(r"fp16 +165 TFLOP/s \(fp32 accumulate\)", r.stdout), r.stdout
    assert "tf32    82.6 TFLOP/s   [" in r.stdout  # tf32 states no accumulate type


def test_arch_all_analyzes_on_every_spec():
    # linear_bias_matmul: 83,886,080 FLOPs, fused 985,088 B (the paper's worked example, Figure 2).
    example = ROOT / "examples" / "ir" / "linear_bias_matmul.py"
    r = run_cli("analyze", example, "--arch", "all")
    assert r.returncode == 0, r.stderr
    table = r.stdout[r.stdout.rindex("Arch ") :]
    rows = [line.split()[0] for line in table.splitlines()[2:] if line.strip()]
    assert rows == [p.stem for p in SPEC_FILES]
    # T4 has no tf32: fp32 MACs run at its CUDA-core rate, 2,560 x 2 x 1.59 GHz = 8.14 TFLOP/s,
    # so the fused bound is compute-bound: 83,886,080 / 8.1408e12 = 10.3 us.
    t4 = next(line for line in table.splitlines() if line.startswith("T4 "))
    assert "8.14 TFLOP/s" in t4 and "10.3 µs" in t4


# --------------------------------------------------------------------- on-chip storage levels
# Every vendor spec lists every on-chip store a schedule can keep data in, as totals over the
# chip (docs/arch-spec.md, "On-chip levels"): the cache-aware schedule uses `cache_level`; the
# sum of all levels is the capacity no schedule can exceed. The paper's model reproduces a
# paper (its L2 only). B200 and GB200 list their L2 from a device query (no vendor document
# gives it) and every other level; no shipped spec is left without levels.
VENDOR_SPECS = [p for p in SPEC_FILES if p.stem != "H100_PCIe_paper"]
REGISTER_FILE_LEVELS = {"RF", "VGPR"}  # NVIDIA register file; AMD VGPR file
L1_SHARED_LEVELS = {"L1_SMEM", "LDS"}  # NVIDIA unified L1 / shared memory; AMD LDS
WITHOUT_LEVELS: set[str] = set()
# "<N> KiB per <unit> (<what>) x <count> <units> = <total> bytes"
PER_UNIT = re.compile(
    r"(\d+(?:\.\d+)?) KiB per (SM|CU|2 CUs) \([^)]*\) x (\d+) (SMs|CUs|CU pairs)"
    r" = ([\d,]+) bytes"
)
UNIT_COUNT = re.compile(r"\b(\d+) (SMs|CUs)\b")


def on_chip_total(doc: dict) -> float:
    return sum(value(level["capacity_bytes"]) for level in doc.get("on_chip", []))


@pytest.mark.parametrize("path", VENDOR_SPECS, ids=spec_id)
def test_vendor_spec_lists_every_on_chip_level(path):
    doc = load_yaml(path)
    levels = {level["name"]: level for level in doc.get("on_chip", [])}
    if not levels:
        assert path.stem in WITHOUT_LEVELS, "every vendor spec lists its on-chip levels"
        assert "no on-chip level" in doc["notes"]
        return
    assert levels.keys() & REGISTER_FILE_LEVELS, f"no register-file level in {sorted(levels)}"
    assert levels.keys() & L1_SHARED_LEVELS, f"no L1/shared (LDS) level in {sorted(levels)}"
    for name in levels.keys() & (REGISTER_FILE_LEVELS | L1_SHARED_LEVELS):
        rate = levels[name]["capacity_bytes"]
        assert rate["source"] and rate["derivation"], name
    cache = value(levels[doc["cache_level"]]["capacity_bytes"])
    total = on_chip_total(doc)
    assert total >= cache
    # The notes quote the sum: "sum of all levels (N bytes)" / "their sum (N bytes)".
    quoted = re.search(r"sum(?: of all levels)? \(([\d,]+) bytes\)", " ".join(doc["notes"].split()))
    assert quoted, "the notes give the sum of the levels"
    assert number(quoted.group(1)) == total


@pytest.mark.parametrize("path", VENDOR_SPECS, ids=spec_id)
def test_per_unit_levels_reproduce_their_totals(path):
    doc = load_yaml(path)
    if not doc.get("on_chip"):
        return  # none shipped (test_vendor_spec_lists_every_on_chip_level)
    (stated,) = {int(n) for n, _ in UNIT_COUNT.findall(doc["description"])}
    checked = 0
    for level in doc.get("on_chip", []):
        rate = level["capacity_bytes"]
        match = PER_UNIT.search(rate.get("derivation", ""))
        if not match:
            continue
        per_kib, unit, count, units, total = match.groups()
        assert float(per_kib) * 1024 * int(count) == number(total) == value(rate), level["name"]
        # The count is the description's SM/CU count, or, marked as an upper bound, above it.
        unit_count = int(count) * (2 if units == "CU pairs" else 1)
        if "upper bound" in rate["derivation"]:
            assert unit_count >= stated, level["name"]
        else:
            assert unit_count == stated, level["name"]
        checked += 1
    assert checked >= 3, "the per-SM / per-CU levels were not recognised"


def test_on_chip_totals_by_hand():
    # H100 SXM, 132 SMs of compute capability 9.0: L2 50 x 2^20 = 52,428,800; L1/shared
    # 256 KiB x 132 = 34,603,008; constant cache 8 KiB x 132 = 1,081,344; registers 64 K x 4 B
    # x 132 = 34,603,008. Sum 122,716,160 B: the register files and L1/shared memory alone
    # (69.2 MB) hold more than the L2.
    h100 = {lv["name"]: lv["capacity_bytes"] for lv in solar.load_arch("H100_SXM").on_chip}
    assert h100 == {
        "L2": 52_428_800,
        "L1_SMEM": 34_603_008,
        "CONST": 1_081_344,
        "RF": 34_603_008,
    }
    assert sum(h100.values()) == 122_716_160
    assert h100["RF"] + h100["L1_SMEM"] > h100["L2"]
    # MI300X, 304 CUs: Infinity Cache 256 MiB + L2 32 MiB + per CU (L1 32 KiB, LDS 64 KiB,
    # VGPR 512 KiB, SGPR 12.5 KiB) x 304 + L1 scalar 16 KiB x 152 = 497,639,424 B.
    mi300x = solar.load_arch("MI300X")
    per_cu = (32 + 64 + 512 + 12.5) * 1024 * 304
    expected = 256 * 2**20 + 32 * 2**20 + per_cu + 16 * 1024 * 152
    assert sum(lv["capacity_bytes"] for lv in mi300x.on_chip) == expected == 497_639_424
    # Blackwell: Jetson Thor adds the tensor memory, 512 columns x 128 lanes x 4 B = 256 KiB
    # per SM, at the 24-SM upper bound: 6,291,456 B.
    thor = {lv["name"]: lv["capacity_bytes"] for lv in solar.load_arch("Jetson_Thor").on_chip}
    assert thor["TMEM"] == 512 * 128 * 4 * 24 == 6_291_456


def test_cache_level_is_unchanged_by_the_new_levels():
    # The cache-aware schedule keeps its level: L2 on every NVIDIA spec with levels, the
    # Infinity Cache on MI300X/MI325X, the L2 on MI250X.
    for path in VENDOR_SPECS:
        doc = load_yaml(path)
        if not doc.get("on_chip"):
            continue
        infinity_cache = ("MI300X", "MI325X", "MI350X", "MI355X")
        expected = "InfinityCache" if path.stem in infinity_cache else "L2"
        assert doc["cache_level"] == expected, path.stem
        assert doc["on_chip"][0]["name"] == expected, path.stem


def test_arch_show_prints_every_level_and_the_total():
    r = run_cli("arch", "show", "h100_sxm")
    assert r.returncode == 0, r.stderr
    # 122,716,160 B (test_on_chip_totals_by_hand) prints as 123 MB.
    assert "on chip: 4 levels, 123 MB in all (122,716,160 B); the cache-aware schedule uses L2" in (
        r.stdout
    )
    assert re.search(
        r"^    L2: 52.4 MB \(cache-aware level\), bandwidth not published", r.stdout, re.M
    )
    assert re.search(r"^    RF: 34.6 MB, bandwidth not published", r.stdout, re.M)


def test_cdna4_rates_by_hand():
    # MI355X: 256 CUs x 4 matrix cores = 1,024 matrix cores, each 512 BF16 FMAs = 1,024 FLOPs
    # per clock, at the 2,400 MHz peak engine clock: 1,024 x 1,024 x 2.4e9 =
    # 2,516,582,400,000,000 FLOP/s (AMD prints 2.5 PFLOPS dense). FP8 and INT8 twice that,
    # FP4 (and FP6) four times: 10,066,329,600,000,000. MI350X the same at 2,200 MHz: BF16
    # 1,024 x 1,024 x 2.2e9 = 2,306,867,200,000,000 (AMD: 2.3 PFLOPS).
    mi355x = solar.load_arch("MI355X").matrix_flops_per_second
    assert mi355x["bf16"][0] == pytest.approx(1024 * 1024 * 2.4e9, rel=1e-12)
    assert mi355x["bf16"][0] == pytest.approx(2_516_582_400_000_000, rel=1e-12)
    assert mi355x["fp8"][0] == pytest.approx(2 * 2_516_582_400_000_000, rel=1e-12)
    assert mi355x["fp4"][0] == pytest.approx(10_066_329_600_000_000, rel=1e-12)
    mi350x = solar.load_arch("MI350X").matrix_flops_per_second
    assert mi350x["bf16"][0] == pytest.approx(2_306_867_200_000_000, rel=1e-12)
    # CDNA 4 has no TF32: the spec has no tf32 rate and runs fp32 contractions at the matrix
    # FP32 rate, 256 FLOPs/clock/CU x 256 CUs x 2.4e9 = 157,286,400,000,000.
    assert "tf32" not in mi355x
    assert mi355x["fp32"][0] == pytest.approx(157_286_400_000_000, rel=1e-12)
    # On chip, 256 CUs: Infinity Cache 256 MiB + L2 32 MiB + per CU (L1 32 KiB, LDS 160 KiB,
    # VGPR 512 KiB, SGPR 12.5 KiB) x 256 + L1 scalar 16 KiB x 128 = 491,913,216 B.
    levels = solar.load_arch("MI355X").on_chip
    per_cu = (32 + 160 + 512 + 12.5) * 1024 * 256
    expected = 256 * 2**20 + 32 * 2**20 + per_cu + 16 * 1024 * 128
    assert sum(lv["capacity_bytes"] for lv in levels) == expected == 491_913_216


def test_blackwell_levels_by_hand():
    # B200: L2 126.5 x 2^20 = 132,644,864 B (device query) + per SM (L1/shared 256 KiB, tensor
    # memory 256 KiB, constant cache 8 KiB, registers 256 KiB = 776 KiB) x 148 SMs
    # (117,604,352 B) = 250,249,216 B. GB200 at the 160-SM upper bound: 132,644,864 + 776 KiB x
    # 160 = 259,784,704 B.
    b200 = {lv["name"]: lv["capacity_bytes"] for lv in solar.load_arch("B200").on_chip}
    assert b200["L2"] == 132_644_864 == 126.5 * 2**20
    assert sum(b200.values()) == 132_644_864 + 776 * 1024 * 148 == 250_249_216
    gb200 = solar.load_arch("GB200").on_chip
    assert sum(lv["capacity_bytes"] for lv in gb200) == 132_644_864 + 776 * 1024 * 160
    assert solar.load_arch("B200").cache_level == "L2"


# The narrow matrix formats each architecture's vendor documents list with a dense rate
# (issue 43): Blackwell's NVFP4 and MXFP4, MXFP6 and FP8 (HGX B200 and GB200 tables: "FP4
# Tensor Core", "FP8/FP6 Tensor Core"), Thor's FP4 and FP8 (its launch blog), Hopper's and
# Ada's FP8, CDNA 3's FP8, CDNA 4's FP8, FP6 and FP4 (AMD's CDNA 4 whitepaper), and INT8
# everywhere these tables print it. Found by the family named in the spec's description.
NARROW_FORMATS = {
    "Blackwell": {"fp4", "fp6", "fp8", "int8"},
    "Hopper": {"fp8", "int8"},
    "Ada Lovelace": {"fp8", "int8"},
    "Ampere": {"int8"},
    "Turing": {"int8"},
    "CDNA 2": {"int8"},
    "CDNA 3": {"fp8", "int8"},
    "CDNA 4": {"fp4", "fp6", "fp8", "int8"},
}
# Jetson Thor is Blackwell, and its blog gives FP4 and FP8 (no FP6 figure).
NARROW_EXCEPTIONS = {"Jetson_Thor": {"fp4", "fp8", "int8"}}


@pytest.mark.parametrize("path", SPEC_FILES, ids=spec_id)
def test_every_spec_lists_the_narrow_formats_of_its_architecture(path):
    doc = load_yaml(path)
    if path.stem == "H100_PCIe_paper":
        pytest.skip("the paper's spec, reproduced as the paper gives it (one fp32 rate)")
    families = [f for f in NARROW_FORMATS if f in doc["description"]]
    assert len(families) == 1, f"{path.stem}: no single family in {doc['description']!r}"
    required = NARROW_EXCEPTIONS.get(path.stem, NARROW_FORMATS[families[0]])
    listed = set(doc["matrix_flops_per_second"])
    assert required <= listed, f"{path.stem} lacks {sorted(required - listed)}"
    # A format the family's documents do not list is not invented either (no fp4 before
    # Blackwell and CDNA 4, no fp8 before Hopper, Ada and CDNA 3).
    narrow = {"fp4", "fp6", "fp8"}
    assert listed & narrow <= required, f"{path.stem} lists {sorted((listed & narrow) - required)}"
