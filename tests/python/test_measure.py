"""Measured headroom (`--measure`, docs/measure.md) and this machine as a platform
(`--arch local`, solar.local_arch)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import solar
from solar import cli, local_arch, measure

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

# A fixed /proc/cpuinfo excerpt: two processors, AVX2 + FMA, no AVX-512, 2,000 MHz.
CPUINFO_AVX2 = textwrap.dedent(
    """\
    processor	: 0
    model name	: Test CPU 9000
    cpu MHz		: 1999.998
    flags		: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2

    processor	: 1
    model name	: Test CPU 9000
    cpu MHz		: 2000.000
    flags		: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2
    """
)

MATMUL = """\
import torch
import torch.nn as nn

N = {n}


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
"""


def spec_file(tmp_path: Path, flops: float, bandwidth: float, name: str = "fake") -> Path:
    """A spec with one fp32 rate and one DRAM rate (docs/arch-spec.md)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        "sparsity: dense\n"
        "clock: boost\n"
        "matrix_flops_per_second:\n"
        f'  fp32: {{value: {flops:e}, source: "a test spec"}}\n'
        "vector_flops_per_second:\n"
        f'  fp32: {{value: {flops:e}, source: "a test spec"}}\n'
        "dram:\n"
        f'  bytes_per_second: {{value: {bandwidth:e}, source: "a test spec"}}\n'
    )
    return path


def problem(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"matmul_{n}.py"
    path.write_text(MATMUL.format(n=n))
    return path


# --- the local spec --------------------------------------------------------------------


def test_cpuinfo_parse_and_peak_formula_avx2():
    cpu = local_arch.parse_cpuinfo(CPUINFO_AVX2)
    assert cpu.model == "Test CPU 9000"
    assert {"avx2", "fma"} <= cpu.flags and "avx512f" not in cpu.flags
    assert cpu.mhz == 2000.0  # the larger of 1999.998 and 2000.000
    peaks = local_arch.derive_peaks(cpu.flags, cores=4, hz=cpu.mhz * 1e6)
    # avx2 -> 8 fp32 lanes; 2 FMA units per core; 2 FLOP per FMA:
    # 4 cores x 2 x 8 x 2 x 2.0e9 Hz = 256e9 FLOP/s; fp64 half: 128e9.
    assert peaks.lanes_fp32 == 8 and peaks.flops_per_cycle_per_core == 32
    assert peaks.fp32 == pytest.approx(256e9, rel=1e-12)
    assert peaks.fp64 == pytest.approx(128e9, rel=1e-12)
    # No bf16/fp16 FMA: converted to fp32, so the fp32 rate; int8 4 x fp32 = 1.024e12.
    assert peaks.bf16 == pytest.approx(256e9) and peaks.fp16 == pytest.approx(256e9)
    assert peaks.int8 == pytest.approx(1.024e12)
    assert "4 cores x 2 FMA units x 8 fp32 lanes" in peaks.derivation


def test_peak_formula_avx512_bf16_and_amx():
    flags = frozenset({"avx512f", "fma", "avx2", "avx512_bf16"})
    p = local_arch.derive_peaks(flags, cores=2, hz=3.0e9)
    # avx512f -> 16 lanes: 2 cores x 2 x 16 x 2 x 3.0e9 = 384e9; avx512_bf16 doubles: 768e9.
    assert p.fp32 == pytest.approx(384e9) and p.bf16 == pytest.approx(768e9)
    amx = local_arch.derive_peaks(flags | {"amx_bf16", "amx_int8"}, cores=2, hz=3.0e9)
    # AMX: 2 cores x 1024 FLOP/cycle x 3.0e9 = 6.144e12 bf16; int8 2048 op/cycle: 12.288e12.
    assert amx.bf16 == pytest.approx(6.144e12) and amx.int8 == pytest.approx(12.288e12)
    # SSE only: 4 lanes: 1 core x 2 x 4 x 2 x 1e9 = 16e9.
    assert local_arch.derive_peaks(frozenset({"sse", "sse2"}), 1, 1e9).fp32 == pytest.approx(16e9)


def test_max_clock_is_the_larger_of_reported_and_measured(monkeypatch):
    cpu = local_arch.parse_cpuinfo(CPUINFO_AVX2)
    reported, _ = local_arch.reported_clock_hz(cpu)
    # A measured clock above the reported one wins (a VM reports its nominal clock) ...
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(reported + 1e9))
    hz, how = local_arch.max_clock_hz(cpu)
    assert hz == reported + 1e9 and how.startswith("measured ")
    # ... and one below it does not lower the reported clock.
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(reported / 2))
    hz, how = local_arch.max_clock_hz(cpu)
    assert hz == reported and "a chain of dependent adds measured" in how


def clock(hz: float) -> local_arch.ClockProbe:
    """A clock probe's result, injected: no test depends on this machine's speed or load."""
    return local_arch.ClockProbe(hz, "injected by the test")


def quiet_meter(other_cores: float):
    """A LoadMeter stand-in reporting `other_cores` busy cores and load average 1.5."""

    class Meter:
        def __enter__(self):
            self.load = local_arch.Load(1.5, other_cores)
            return self

        def __exit__(self, *exc):
            return False

    return Meter


def test_clock_probe_takes_the_fastest_plausible_run_and_refuses_the_rest():
    # Runs interrupted by other processes come out slower: of 0.1, 2.9 and 3.1 GHz the
    # fastest, 3.1 GHz, is the clock (0.1 GHz is below the 0.2 GHz floor and ignored).
    load = local_arch.Load(8.08, 1.7)
    probe = local_arch.plausible_clock([0.1e9, 2.9e9, 3.1e9], load)
    assert probe.hz == 3.1e9
    assert "best of 3 runs" in probe.how and "kept 1.7 cores busy" in probe.how
    # A run at 12.3 GHz (seen on a busy 2-core machine) is no clock: the figure is refused
    # with a message, and the reported clock is used.
    refused = local_arch.plausible_clock([3.0e9, 12.3e9], load)
    assert refused.hz == 0.0
    assert "refused: a run measured 12.3 GHz, above the physical 7 GHz" in refused.how
    slow = local_arch.plausible_clock([0.05e9, 0.1e9])
    assert slow.hz == 0.0 and "every run was below 0.2 GHz" in slow.how


def test_other_cores_subtracts_this_process_from_proc_stat():
    # Between the readings all CPUs were busy 300 jiffies more (user 200 + system 100; idle
    # and iowait do not count) = 3 s at 100 jiffies/s; this process used 1 s of it over 2 s
    # of wall time: others kept (3 - 1) / 2 = 1 core busy.
    import os

    before = "cpu  1000 0 500 9000 10 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"
    after = "cpu  1200 0 600 9100 20 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"
    cores = local_arch.other_cores(before, after, own_seconds=1.0, wall=2.0)
    assert cores == pytest.approx(2.0 / 2.0 * 100 / os.sysconf("SC_CLK_TCK"))


def test_a_busy_bandwidth_measurement_warns_records_the_load_and_is_redone(tmp_path, monkeypatch):
    # A bandwidth measured while others kept 1.8 cores busy warns, carries the load in its
    # derivation and marks the cached spec busy, so the next run measures again (and keeps
    # the larger: 3 GB/s then 20 GB/s gives 20 GB/s); a quiet measurement is cached for good.
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SOLAR_LOCAL_REFRESH", raising=False)
    rates = iter([3e9, 20e9])
    monkeypatch.setattr(
        local_arch, "measure_bandwidth", lambda llc: local_arch.Bandwidth(next(rates), "fake")
    )
    monkeypatch.setattr(local_arch, "measure_gemm_flops", lambda: 0.0)
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(0.0))
    monkeypatch.setattr(local_arch, "LoadMeter", quiet_meter(1.8))
    with pytest.warns(local_arch.BusyMachineWarning, match="kept 1.8 cores busy"):
        spec = solar.load_arch("local")
    assert spec.dram_bytes_per_second[0] == pytest.approx(3e9, rel=1e-6)
    assert "kept 1.8 cores busy meanwhile (load average 1.5)" in spec.dram_bytes_per_second[1]
    assert "# solar-local-busy: " in (tmp_path / "local.yaml").read_text()
    monkeypatch.setattr(local_arch, "LoadMeter", quiet_meter(0.0))
    spec = solar.load_arch("local")  # measured again: the cached figure was busy
    assert spec.dram_bytes_per_second[0] == pytest.approx(20e9, rel=1e-6)
    assert "solar-local-busy" not in (tmp_path / "local.yaml").read_text()


def test_spec_yaml_loads_with_every_number_cited(tmp_path):
    cpu = local_arch.parse_cpuinfo(CPUINFO_AVX2)
    peaks = local_arch.derive_peaks(cpu.flags, 4, 2.0e9)
    bw = local_arch.Bandwidth(20e9, "measured (test)")
    text = local_arch.spec_yaml(
        cpu,
        4,
        2.0e9,
        "test clock",
        peaks,
        bw,
        32 * 2**20,
        3,
        16 * 2**30,
        "k",
        inner=[(2, 4 * 2**20), (1, 4 * 32 * 2**10)],
    )
    path = tmp_path / "local.yaml"
    path.write_text(text)
    spec = solar.load_arch(str(path))
    assert spec.name == "local" and spec.fp32_matrix_mode == "fp32"
    # Dense peaks at the measured clock; AVX2 has no native bf16/fp16 FMA: both are converted
    # to fp32 and accumulate in fp32.
    assert (spec.sparsity, spec.clock) == ("dense", "measured")
    assert spec.matrix_accumulate == {"bf16": "fp32", "fp16": "fp32"}
    # fp32 matrix = fp32 vector = 256e9 (no matrix units); DRAM as measured: 20e9.
    assert spec.matrix_flops_per_second["fp32"][0] == pytest.approx(256e9, rel=1e-6)
    assert spec.vector_flops_per_second["fp32"][0] == pytest.approx(256e9, rel=1e-6)
    assert spec.dram_bytes_per_second[0] == pytest.approx(20e9, rel=1e-6)
    assert "derived on this machine" in spec.dram_bytes_per_second[1]
    # The LLC is the on-chip level: 32 MiB = 33,554,432 bytes, named L3.
    assert spec.on_chip[0]["name"] == "L3"
    assert spec.on_chip[0]["capacity_bytes"] == 33_554_432  # written exactly (10 digits)
    # Then the inner caches (4 MiB of L2, 4 x 32 KiB of L1d) and the registers of 4 AVX2 CPUs:
    # (16 x 8 + 16 x 32) = 640 B each, 2,560 B. The bound's capacity is their sum.
    assert [(lv["name"], lv["capacity_bytes"]) for lv in spec.on_chip[1:]] == [
        ("L2", 4 * 2**20),
        ("L1", 131_072),
        ("RF", 2_560),
    ]
    assert spec.cache_level == "L3"
    # A GEMM measured above the derived peak raises every rate by the same factor:
    # 512e9 / 256e9 = 2 -> fp64 vector 2 x 128e9 = 256e9.
    raised = local_arch.spec_yaml(cpu, 4, 2.0e9, "t", peaks, bw, 0, 0, 0, "k", gemm_flops=512e9)
    path.write_text(raised)
    spec = solar.load_arch(str(path))
    assert spec.vector_flops_per_second["fp64"][0] == pytest.approx(256e9, rel=1e-6)
    assert "raised to the measured fp32 GEMM rate" in spec.vector_flops_per_second["fp32"][1]


def test_load_arch_local_derives_once_and_keeps_the_larger_bandwidth(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SOLAR_LOCAL_REFRESH", raising=False)
    calls = []
    rates = iter([30e9, 10e9])

    def fake_bandwidth(llc):
        calls.append(llc)
        return local_arch.Bandwidth(next(rates), "fake measurement")

    monkeypatch.setattr(local_arch, "measure_bandwidth", fake_bandwidth)
    monkeypatch.setattr(local_arch, "measure_gemm_flops", lambda: 0.0)
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(0.0))
    monkeypatch.setattr(local_arch, "LoadMeter", quiet_meter(0.0))
    spec = solar.load_arch("local")
    assert spec.file == str(tmp_path / "local.yaml")
    assert spec.dram_bytes_per_second[0] == pytest.approx(30e9, rel=1e-6)
    cpu = local_arch.parse_cpuinfo(Path("/proc/cpuinfo").read_text())
    hz, _ = local_arch.reported_clock_hz(cpu)
    # The documented formula on this machine's own features.
    want = local_arch.usable_cores() * 2 * local_arch.fp32_lanes(cpu.flags) * 2 * hz
    assert spec.vector_flops_per_second["fp32"][0] == pytest.approx(want, rel=1e-6)
    solar.load_arch("LOCAL")  # cached: not measured again
    assert len(calls) == 1
    # A refresh measures again (10e9) but keeps the cached 30e9: a busy machine under-measures.
    local_arch.local_spec_path(refresh=True)
    spec = solar.load_arch("local")
    assert len(calls) == 2
    assert spec.dram_bytes_per_second[0] == pytest.approx(30e9, rel=1e-6)
    assert "kept: a re-measurement gave 10 GB/s" in spec.dram_bytes_per_second[1]


def test_probe_raises_the_cached_bandwidth_only_upward(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SOLAR_LOCAL_REFRESH", raising=False)
    rates = iter([20e9, 15e9, 25e9])
    monkeypatch.setattr(
        local_arch,
        "measure_bandwidth",
        lambda llc, trials=30: local_arch.Bandwidth(next(rates), "fake probe"),
    )
    monkeypatch.setattr(local_arch, "measure_gemm_flops", lambda: 0.0)
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(0.0))
    monkeypatch.setattr(local_arch, "LoadMeter", quiet_meter(0.0))
    spec = solar.load_arch("local")  # derived with 20e9
    assert local_arch.is_local(spec) and not local_arch.is_local(solar.load_arch("H100_PCIe"))
    # A probe measuring 15e9 leaves 20e9; one measuring 25e9 raises it.
    assert local_arch.probe_bandwidth() == (20e9, 20e9)
    assert local_arch.probe_bandwidth() == pytest.approx((20e9, 25e9), rel=1e-6)
    spec = solar.load_arch("local")
    assert spec.dram_bytes_per_second[0] == pytest.approx(25e9, rel=1e-6)
    assert "raised from 20 GB/s by a probe of a --measure run" in spec.dram_bytes_per_second[1]


def test_measure_bandwidth_counts_bytes_by_kernel(monkeypatch):
    monkeypatch.setattr(local_arch, "STREAM_MIN_ARRAY_BYTES", 4 * 2**20)
    bw = local_arch.measure_bandwidth(0, trials=2)
    assert bw.bytes_per_second > 0
    # 4 MiB arrays of fp32 (1,048,576 elements); the triad counts 4 arrays, the copy 3.
    assert "arrays of 4 MiB fp32" in bw.derivation
    assert "counting 4 arrays with the write-allocate" in bw.derivation


# --- sizes -----------------------------------------------------------------------------


def test_choose_sizes_divides_constants_by_a_power_of_two(tmp_path):
    path = problem(tmp_path, 256)
    graph, _ = measure._lowered_graph(str(path), {})
    # Estimated run time 2 x 256^3 FLOP / 1e10 (GEMM_RATE) = 3.36 ms > 1 ms: start at 2,
    # since 3.36 ms / 2^3 = 0.42 ms fits; N 256 -> 128.
    overrides, small, detail = measure.choose_sizes(str(path), graph, max_seconds=1e-3)
    assert overrides == {"N": 128}
    assert small.total_macs == 128**3  # 2,097,152
    assert "N 256->128" in detail and "0.0034 s a run (budget 0.001 s)" in detail
    same, g, detail = measure.choose_sizes(str(path), graph)
    assert same == {} and g is graph and detail == "at the program's own sizes"
    # Budget 1 ns: even N = 8 (SCALE_FLOOR) needs 2 x 8^3 / 1e10 = 0.1 us: a `measure` error.
    with pytest.raises(solar.UserError) as e:
        measure.choose_sizes(str(path), graph, max_seconds=1e-9)
    assert "error[measure]: cannot measure" in str(e.value)
    msg = e.value.diagnostics[0].message
    assert "no reduced size fits (an estimated 1e-07 s a run (budget 1e-09 s)" in msg
    # ... after one trial run at the smallest size (N = 8), which also took more than 1 ns.
    assert "; a trial run at the smallest (N 256->8) took " in msg


def test_choose_sizes_trusts_a_trial_run_over_the_estimate(tmp_path, monkeypatch):
    path = problem(tmp_path, 256)
    graph, _ = measure._lowered_graph(str(path), {})
    # Budget 1 ns: no size fits the executor's estimate (N = 8 needs 1e-7 s); a trial run
    # of the smallest size that takes 0.5 ns (monkeypatched) fits, so that size is measured.
    trials = []
    monkeypatch.setattr(measure, "trial_seconds", lambda p, o, mode=None: trials.append(o) or 5e-10)
    overrides, small, detail = measure.choose_sizes(str(path), graph, max_seconds=1e-9)
    assert trials == [{"N": 8}] and overrides == {"N": 8} and small.total_macs == 8**3
    assert detail.endswith("at these sizes the estimate is 1e-07 s a run, a trial run took 5e-10 s")


# --- end to end --------------------------------------------------------------------------


def test_analyze_measure_small_workload(tmp_path, capsys):
    path = problem(tmp_path, 64)
    spec = spec_file(tmp_path, 1e12, 1e12)
    out, html = tmp_path / "out.json", tmp_path / "r.html"
    args = ["analyze", str(path), "--arch", str(spec), "--no-validate", "--measure"]
    rc = cli.main(
        [*args, "--repeats", "3", "--warmup", "1", "--json", str(out), "--html", str(html)]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "Measured on cpu" in text and "headroom" in text and "SOL VIOLATION" not in text
    m = json.loads(out.read_text())["measurement"]
    assert m["device"] == "cpu" and m["full_size"] is True and m["sizes"] == {}
    assert m["repeats"] == 3 and len(m["eager"]["seconds"]) == 3
    assert m["eager"]["min_seconds"] <= m["eager"]["median_seconds"]
    # N=64 matmul: 2 x 64^3 = 524,288 FLOP / 1e12 = 0.524 us; bytes 3 x 64^2 x 4 = 49,152
    # / 1e12 = 0.049 us: fused SOL 0.524288 us, compute-bound.
    assert m["sol"]["flops"] == 524_288 and m["sol"]["fused_bytes"] == 49_152
    assert m["sol"]["fused_seconds"] == pytest.approx(524_288 / 1e12, rel=1e-9)
    h = m["headroom"]["eager_fused"]
    assert h > 1 and h == pytest.approx(m["eager"]["median_seconds"] / 524_288e-12, rel=1e-9)
    assert m["margin"] > 1 and m["violations"] == [] and m["compile"] is None
    # The HTML report carries the headroom bars of this measurement.
    assert 'id="fig-headroom"' in html.read_text()


def test_measure_compile_times_torch_compile(tmp_path, capsys):
    # The problem's forward is inlined by dynamo into Solar's flat wrapper, and dynamo imports
    # the module of an inlined function by its name: the problem file's synthetic module
    # (`solar_problem_<hex>`) used to be gone from sys.modules by then, so the compiled row
    # was "torch.compile failed: InternalTorchDynamoError: ModuleNotFoundError: ...".
    path = problem(tmp_path, 16)
    spec = spec_file(tmp_path, 1e12, 1e12)
    out = tmp_path / "out.json"
    args = ["analyze", str(path), "--arch", str(spec), "--no-validate", "--measure", "--compile"]
    rc = cli.main([*args, "--repeats", "2", "--warmup", "1", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "torch.compile failed" not in text and "torch.compile took" in text
    compiled = json.loads(out.read_text())["measurement"]["compile"]
    # Two timed runs of the compiled model, no error.
    assert "error" not in compiled and len(compiled["seconds"]) == 2
    assert not any(name.startswith("solar_problem_") for name in sys.modules)


def test_dim_overrides_a_pytorch_constant(tmp_path, capsys):
    path = problem(tmp_path, 64)
    spec = spec_file(tmp_path, 1e12, 1e12)
    out = tmp_path / "out.json"
    rc = cli.main(
        ["analyze", str(path), "--arch", str(spec), "--no-validate", "--dim", "N=32"]
        + ["--json", str(out)]
    )
    assert rc == 0
    # N=32: MACs 32^3 = 32,768.
    assert json.loads(out.read_text())["totals"]["macs"] == 32_768
    capsys.readouterr()
    rc = cli.main(["analyze", str(path), "--arch", str(spec), "--dim", "M=32"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "'M' is not a module-level integer constant" in err and "N=64" in err


def test_sol_violation_is_reported_loudly_and_exits_1(tmp_path, capsys):
    path = problem(tmp_path, 64)
    # 1e3 FLOP/s and 1e3 B/s: fused SOL = max(524,288 / 1e3, 49,152 / 1e3) = 524.288 s,
    # far above any measured run.
    spec = spec_file(tmp_path, 1e3, 1e3, name="slow")
    args = ["analyze", str(path), "--arch", str(spec), "--no-validate", "--measure"]
    rc = cli.main([*args, "--repeats", "1", "--warmup", "0"])
    text = capsys.readouterr().out
    assert rc == 1
    assert "SOL VIOLATION: eager ran in" in text
    assert "faster than the fused bound 524.3 s on slow" in text


def measurement(eager, sol, compiled=None) -> measure.Measurement:
    """A CPU measurement at full size with these run times (seconds) against one SOL."""
    return measure.Measurement(
        source="p.py",
        device="cpu",
        device_name="cpu",
        sizes={},
        full_size=True,
        sizes_detail="",
        repeats=len(eager),
        warmup=0,
        flush_bytes=0,
        eager=measure.Timing(eager),
        compiled=measure.Timing(compiled) if compiled else None,
        sols=[sol],
    )


def test_violation_message_and_margin():
    m = measurement(
        [0.003, 0.001, 0.002], measure.ArchSol("fake", 0.002, 0.0015, 1, 1), [0.004, 0.004, 0.005]
    )
    # eager: median 0.002 / fused 0.0015 = 1.333; min 0.001 < 0.0015: a violation at
    # 0.001 / 0.0015 = 0.667x; compile min 0.004 is not.
    assert m.headroom()["eager_fused"] == pytest.approx(4 / 3)
    assert m.headroom()["compile_unfused"] == pytest.approx(2.0)  # 0.004 / 0.002
    assert m.margin() == pytest.approx(2 / 3)
    # eager (one kernel or more per source operator) is also checked against the unfused
    # bound: 0.001 / 0.002 = 0.5x; the fake arch has no cache level, so no cache-aware check.
    assert m.margins() == {
        "fused": pytest.approx(2 / 3),
        "cache_aware": None,
        "unfused": pytest.approx(0.5),
    }
    v, u = m.violations()
    assert v.startswith("SOL VIOLATION: eager ran in 0.001 s, faster than the fused bound")
    assert "0.0015 s on fake (0.667x)" in v
    assert u.startswith("SOL VIOLATION: eager ran in 0.001 s, faster than the unfused bound")
    assert "SOL VIOLATION" in measure.report_text(m)


def test_cache_aware_and_unfused_violations():
    # fused 1 ms, cache-aware 3 ms, unfused 5 ms. eager min 4 ms is above the cache-aware
    # bound (4 / 3 = 1.333x) but below the unfused one: an unfused violation (0.8x).
    # torch.compile min 2 ms beats the cache-aware bound (0.667x), and may beat the unfused
    # one (it fuses).
    m = measurement([0.004], measure.ArchSol("fake", 0.005, 0.001, 1, 1, 0.003), [0.002])
    assert m.margins() == {
        "fused": pytest.approx(2.0),
        "cache_aware": pytest.approx(2 / 3),
        "unfused": pytest.approx(0.8),
    }
    vs = m.violations()
    assert len(vs) == 2
    assert "torch.compile ran in 0.002 s, faster than the cache-aware bound 0.003 s" in vs[0]
    assert "eager ran in 0.004 s, faster than the unfused bound 0.005 s" in vs[1]
    assert m.to_json()["sol"]["cache_aware_seconds"] == 0.003


def test_batch_summary_geomean_margin_and_violations():
    def r(name, eager, compiled, margin, violations=()):
        h = {"eager_fused": eager, "compile_fused": compiled}
        return {
            "source": name,
            "measurement": {
                "device": "cpu",
                "headroom": h,
                "margin": margin,
                "violations": list(violations),
            },
        }

    lines = measure.batch_summary(
        [
            r("w/l1/a.py", 2.0, 1.0, 1.5),
            r("w/l2/b.py", 8.0, 4.0, 0.9, ["SOL VIOLATION: x"]),
            r("w/l2/d.py", 2.0, 4.0, 1.2),
            {"source": "c"},
        ]
    )
    # geomean(2, 8, 2) = 32^(1/3) = 3.17; compile geomean(1, 4, 4) = 16^(1/3) = 2.52;
    # per folder: l1 2.00 (a), l2 geomean(8, 2) = 4.00; smallest margin 0.9 (b.py).
    assert lines[0] == (
        "measured: 3 workloads on cpu; geomean headroom over fused SOL: eager 3.17x, "
        "torch.compile 2.52x (3)"
    )
    assert lines[1] == "  by folder: l1 2.00x (1), l2 4.00x (2)"
    assert lines[2] == "smallest margin (fastest run / fused SOL): 0.900x (b.py)"
    assert lines[3:] == ["SOL VIOLATIONS: 1", "  b.py: SOL VIOLATION: x"]


def test_zero_bound_has_no_headroom_and_is_listed_apart():
    # A program returning only a view of its input: SOL 0 on every mode.
    m = measurement([1e-5], measure.ArchSol("fake", 0.0, 0.0, 0, 0))
    assert m.headroom() == {"eager_fused": None, "eager_unfused": None}
    assert m.margin() is None and m.violations() == []
    assert "no headroom: the bound is 0 (nothing to compute or move)" in measure.report_text(m)
    # In a batch it is left out of the geomean and the smallest margin, and named.
    zero = {"source": "w/v.py", "measurement": m.to_json()}
    other = {
        "source": "w/a.py",
        "measurement": {
            "device": "cpu",
            "headroom": {"eager_fused": 3.0},
            "margin": 2.5,
            "violations": [],
        },
    }
    assert measure.batch_summary([zero, other]) == [
        "measured: 2 workloads on cpu; geomean headroom over fused SOL: eager 3.00x",
        "bound 0 (nothing to compute or move; no headroom): 1 (v.py)",
        "smallest margin (fastest run / fused SOL): 2.500x (a.py)",
        "SOL violations: none",
    ]


# --- user errors -------------------------------------------------------------------------


def solar_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_measure_on_an_ir_program_is_a_user_error():
    r = solar_cli("analyze", str(ROOT / "examples/ir/softmax.py"), "--measure")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "--measure and --compile time a PyTorch program; this is an IR program" in r.stderr


def test_compile_without_measure_and_bad_repeats(tmp_path, capsys):
    path = problem(tmp_path, 64)
    assert cli.main(["analyze", str(path), "--compile"]) == 1
    assert "--compile times torch.compile: it needs --measure" in capsys.readouterr().err
    spec = spec_file(tmp_path, 1e12, 1e12)
    rc = cli.main(
        ["analyze", str(path), "--arch", str(spec), "--no-validate", "--measure", "--repeats", "0"]
    )
    assert rc == 1
    assert "--repeats must be at least 1" in capsys.readouterr().err
    assert cli.main(["arch", "show", "H100_PCIe", "--refresh"]) == 1
    assert "--refresh re-derives the local spec" in capsys.readouterr().err


def test_view_outputs_are_noted():
    import torch

    x = torch.rand(4, 6)
    # x.t() shares x's storage and leaves x unchanged: one note, naming output 0 and input 0.
    (note,) = measure.view_outputs(lambda a: a.t(), [x], "p.py")
    assert note.startswith("output 0 is a view of input 0 that the program leaves unchanged")
    # In place (x *= 2 returns x, changed) and a new tensor (x + 1): no note.
    assert measure.view_outputs(lambda a: a.mul_(2.0), [x], "p.py") == []
    assert measure.view_outputs(lambda a: a + 1, [x], "p.py") == []


PROGRAM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return {expr}

def get_inputs():
    return [torch.rand(2, 3, 10)]

def get_init_inputs():
    return []
"""


@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("x.unfold(-1, 4, 2)", [2, 3, 4, 4]),  # 4 windows of 4 along the last dim: `unfold`
        ("x.transpose(1, 2)", [2, 10, 3]),  # returned as it is: `permute_view`
    ],
)
def test_returned_views_alias_their_input_and_cost_nothing(tmp_path, expr, shape):
    import torch

    path = tmp_path / "view.py"
    path.write_text(PROGRAM.format(expr=expr))
    r = solar.analyze(str(path), arch="H100_PCIe")
    assert r.validation.status == "full"
    graph, a = r.graph, r.analyses[0]
    (out,) = graph.outputs
    assert graph.tensors[out].shape == shape
    assert graph.tensors[graph.tensors[out].storage].producer < 0  # the storage is the input
    assert a.unfused.bytes == 0 and a.fused.bytes == 0 and a.fused.seconds == 0.0
    # The lowered output aliases the input, so the "lowering copies it" note does not apply.
    x = torch.rand(2, 3, 10)
    fn = eval(f"lambda x: {expr}")
    assert measure.view_outputs(fn, [x], "p.py", graph) == []


def test_reports_of_a_program_without_work(tmp_path, capsys):
    # Only a view returned: every bound is 0; the HTML report has the roofline and no cache
    # curve (0 bytes at every capacity: nothing to draw on log axes).
    path = tmp_path / "view.py"
    path.write_text(PROGRAM.format(expr="x.transpose(1, 2)"))
    html = tmp_path / "r.html"
    rc = cli.main(["analyze", str(path), "--no-validate", "--html", str(html)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "fusion benefit (unfused / fused): n/a (no work)" in out
    text = html.read_text()
    assert 'id="fig-roofline"' in text and 'id="fig-cache' not in text


def test_a_permutation_read_by_a_kernel_is_still_a_copy(tmp_path):
    # x.transpose(1, 2) + 1: the add reads the transposed copy. [2, 3, 10] fp32 = 240 B:
    # permute reads 240 + writes 240; the add reads 240 + writes 240: unfused 960 B; fused:
    # x 240 + output 240 = 480 B.
    path = tmp_path / "t.py"
    path.write_text(PROGRAM.format(expr="x.transpose(1, 2) + 1"))
    r = solar.analyze(str(path), arch="H100_PCIe", validate=False)
    assert [n.op for n in r.graph.nodes if n.kind == "data_movement" and n.bytes] == ["permute"]
    assert r.analyses[0].unfused.bytes == 960 and r.analyses[0].fused.bytes == 480


def test_refresh_keeps_the_larger_clock(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(
        local_arch, "measure_bandwidth", lambda llc, trials=30: local_arch.Bandwidth(1e10, "f")
    )
    monkeypatch.setattr(local_arch, "measure_gemm_flops", lambda: 0.0)
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(6.0e9))
    monkeypatch.setattr(local_arch, "LoadMeter", quiet_meter(0.0))
    cpu = local_arch.parse_cpuinfo(Path("/proc/cpuinfo").read_text())
    per_hz = local_arch.derive_peaks(cpu.flags, local_arch.usable_cores(), 1.0).fp32
    first = solar.load_arch("local").vector_flops_per_second["fp32"][0]
    assert first == pytest.approx(6.0e9 * per_hz, rel=1e-9)  # the measured 6 GHz
    # A refresh measuring less (a busy core) keeps the 6 GHz peak.
    monkeypatch.setattr(local_arch, "measure_clock_hz", lambda: clock(1.0e9))
    local_arch.local_spec_path(refresh=True)
    spec = solar.load_arch("local")
    assert spec.vector_flops_per_second["fp32"][0] == pytest.approx(first, rel=1e-9)
    assert "6 GHz kept from an earlier derivation" in spec.notes


def test_batch_summary_names_the_smallest_margin_of_every_mode():
    def r(name, fused, cache, unfused):
        return {
            "source": name,
            "measurement": {
                "device": "cpu",
                "headroom": {"eager_fused": fused},
                "margin": fused,
                "margins": {"fused": fused, "cache_aware": cache, "unfused": unfused},
                "violations": [],
            },
        }

    lines = measure.batch_summary([r("w/a.py", 3.0, 2.0, 1.5), r("w/b.py", 4.0, None, 1.2)])
    # cache-aware: only a.py has one (2.0); unfused: min(1.5, 1.2) = 1.2 (b.py).
    assert lines[-2] == (
        "smallest margins of the other modes: cache-aware 2.000x (a.py; 1 bounded); "
        "unfused, eager 1.200x (b.py; 2 bounded)"
    )
    assert lines[-1] == "SOL violations: none"


def test_a_forward_pass_that_runs_backward_is_timed_with_autograd_on(tmp_path, capsys):
    # y.backward(dy) in forward fails under no_grad, where eager programs are timed; the
    # measurement runs it with autograd on (before, a `capture` error: "element 0 of
    # tensors does not require grad"). On [4, 8] the gradient is 6 x 32 = 192 FLOPs.
    path = tmp_path / "grad_in_forward.py"
    path.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x, w, dy):\n"
        "        xr = x.detach().requires_grad_()\n"
        "        torch.tanh(xr * w).backward(dy)\n"
        "        return xr.grad\n\n\n"
        "def get_inputs():\n    return [torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)]\n"
    )
    spec = spec_file(tmp_path, 1e12, 1e12)
    out = tmp_path / "out.json"
    args = ["analyze", str(path), "--arch", str(spec), "--no-validate", "--measure"]
    rc = cli.main([*args, "--repeats", "3", "--warmup", "1", "--json", str(out)])
    assert rc == 0, capsys.readouterr().out
    m = json.loads(out.read_text())["measurement"]
    assert m["sol"]["flops"] == 192 and len(m["eager"]["seconds"]) == 3
