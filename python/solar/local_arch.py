"""The machine Solar runs on as a platform (`--arch local`, docs/measure.md).

Its peaks are derived from what the CPU reports (/proc/cpuinfo flags, usable cores, clock),
its DRAM bandwidth is measured with STREAM-style kernels, and the result is written as an
ordinary architecture spec (docs/arch-spec.md) into the cache directory, where
`solar.load_arch("local")` loads it. Every number says how it was derived.

Formula (per dtype, FLOP/s):

    peak = usable cores x FMA units per core x SIMD lanes x 2 FLOP per FMA x max clock

with fp32 lanes = 16 (avx512f), 8 (avx/avx2), 4 (sse), 1 otherwise; fp64 lanes half of
those; FMA units per core = 2 (every x86 server core since Haswell / Zen 2 issues two vector
FMAs a cycle; when a core has only one, the peak is twice too high, which keeps the bound a
bound). Without an fma flag, an add and a multiply pipe still give 2 FLOP per lane and cycle.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

FMA_UNITS_PER_CORE = 2  # see the module docstring; the larger choice when unsure
AMX_BF16_FLOPS_PER_CYCLE = 1024  # per core: one AMX tile unit, 16x32 bf16 dot products
AMX_INT8_OPS_PER_CYCLE = 2048  # per core: twice the bf16 rate
STREAM_TRIALS = 30  # best of N: a shared machine has quiet moments
STREAM_MIN_ARRAY_BYTES = 64 * 2**20  # each array at least this, and at least 4x the LLC
SPEC_VERSION = "4"  # bump when the derivation changes: cached specs are then re-derived


@dataclass(frozen=True)
class CpuInfo:
    """What /proc/cpuinfo says about the first processor."""

    model: str
    flags: frozenset
    mhz: float  # the largest "cpu MHz" over processors (0 when absent)


@dataclass(frozen=True)
class Peaks:
    """Derived peak rates (FLOP/s or int8 op/s) and the text saying how."""

    fp32: float
    fp64: float
    bf16: float
    fp16: float
    int8: float
    flops_per_cycle_per_core: int  # fp32 FLOPs
    lanes_fp32: int
    derivation: str  # the fp32 formula with its numbers
    bf16_derivation: str
    fp16_derivation: str
    int8_derivation: str


def parse_cpuinfo(text: str) -> CpuInfo:
    model = ""
    flags: frozenset = frozenset()
    mhz = 0.0
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "model name" and not model:
            model = value
        elif key in ("flags", "Features") and not flags:  # x86 / Arm
            flags = frozenset(value.split())
        elif key == "cpu MHz":
            try:
                mhz = max(mhz, float(value))
            except ValueError:
                pass
    return CpuInfo(model, flags, mhz)


def fp32_lanes(flags: frozenset) -> int:
    """fp32 SIMD lanes of the widest vector unit the flags announce."""
    if "avx512f" in flags:
        return 16
    if "avx2" in flags or "avx" in flags:
        return 8
    if "sse" in flags or "sse2" in flags or "asimd" in flags or "neon" in flags:
        return 4
    return 1


def derive_peaks(flags: frozenset, cores: int, hz: float) -> Peaks:
    """Peak rates from the CPU's flags, its usable cores and its maximum clock."""
    lanes = fp32_lanes(flags)
    per_cycle = FMA_UNITS_PER_CORE * lanes * 2  # FMA = 2 FLOP (or add + mul pipes)
    fp32 = cores * per_cycle * hz
    isa = {16: "avx512f", 8: "avx2/avx", 4: "sse/neon", 1: "scalar"}[lanes]
    derivation = (
        f"{cores} cores x {FMA_UNITS_PER_CORE} FMA units x {lanes} fp32 lanes ({isa}) x "
        f"2 FLOP/FMA x {hz / 1e9:.4g} GHz = {fp32:.6g}"
    )
    if "amx_bf16" in flags:
        bf16 = cores * AMX_BF16_FLOPS_PER_CYCLE * hz
        bf16_how = (
            f"AMX: {cores} cores x {AMX_BF16_FLOPS_PER_CYCLE} FLOP/cycle x {hz / 1e9:.4g} GHz"
        )
    elif "avx512_bf16" in flags:
        bf16 = 2 * fp32
        bf16_how = "avx512_bf16 (vdpbf16ps: 2 bf16 products per fp32 lane) = 2 x fp32 peak"
    else:
        bf16 = fp32
        bf16_how = "no native bf16 FMA: converted to fp32, at most the fp32 peak"
    if "avx512_fp16" in flags:
        fp16 = 2 * fp32
        fp16_how = "avx512_fp16 (32 fp16 lanes per 512-bit FMA) = 2 x fp32 peak"
    elif "amx_fp16" in flags:
        fp16 = cores * AMX_BF16_FLOPS_PER_CYCLE * hz
        fp16_how = f"AMX-FP16: {cores} cores x {AMX_BF16_FLOPS_PER_CYCLE} FLOP/cycle"
    else:
        fp16 = fp32
        fp16_how = "no native fp16 FMA: converted to fp32, at most the fp32 peak"
    if "amx_int8" in flags:
        int8 = cores * AMX_INT8_OPS_PER_CYCLE * hz
        int8_how = f"AMX: {cores} cores x {AMX_INT8_OPS_PER_CYCLE} op/cycle x {hz / 1e9:.4g} GHz"
    else:
        int8 = 4 * fp32
        int8_how = (
            "4 x fp32 peak: 4 int8 products per 32-bit lane "
            "(vpdpbusd with VNNI, vpmaddubsw + vpmaddwd without)"
        )
    return Peaks(
        fp32=fp32,
        fp64=fp32 / 2,
        bf16=bf16,
        fp16=fp16,
        int8=int8,
        flops_per_cycle_per_core=per_cycle,
        lanes_fp32=lanes,
        derivation=derivation,
        bf16_derivation=bf16_how,
        fp16_derivation=fp16_how,
        int8_derivation=int8_how,
    )


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_clock_hz(cpuinfo: CpuInfo) -> tuple[float, str]:
    """(Hz, how it was found): the larger of the clock the system reports
    (`reported_clock_hz`) and the clock measured on one core (`measure_clock_hz`): a VM
    often reports only its nominal clock, while its cores run at their turbo clock."""
    reported, source = reported_clock_hz(cpuinfo)
    probe = measure_clock_hz()
    if probe.hz > reported:
        return probe.hz, (
            f"measured {probe.hz / 1e9:.4g} GHz on one core ({probe.how}), "
            f"above the {reported / 1e9:.4g} GHz of {source}"
        )
    if probe.hz:
        return reported, f"{source}; a chain of dependent adds measured {probe.hz / 1e9:.4g} GHz"
    return reported, f"{source}; {probe.how}"


# One core's clock: 8 dependent register adds per iteration (`x += x`: 1 cycle each on every
# x86-64 and AArch64 core; an add of an immediate can be folded at rename by recent cores,
# which once read 12.3 GHz), CLOCK_RUNS short runs of 10^7 iterations, each run's rate printed.
CLOCK_RUNS = 9
CLOCK_RANGE_HZ = (0.2e9, 7.0e9)  # every CPU of the last two decades; outside it, refused
BUSY_CORES = 0.5  # other processes keeping this many cores busy make a measurement "busy"

_CLOCK_C = r"""
#include <stdio.h>
#include <time.h>
int main(void) {
  const long n = 10000000;
  for (int r = 0; r < RUNS; ++r) {
    struct timespec a, b;
    long x = 1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; ++i) __asm__ volatile(ADDS : "+r"(x));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("%.9e\n", 8.0 * (double)n / t);
  }
  return 0;
}
"""


@dataclass(frozen=True)
class Load:
    """What else ran while something was measured: the 1-minute load average at the end and
    the cores other processes kept busy on average during the measurement (all CPUs' busy
    time from /proc/stat less this process's and its children's own CPU time)."""

    load_average: float
    other_cores: float

    @property
    def busy(self) -> bool:
        return self.other_cores >= BUSY_CORES

    def text(self) -> str:
        return (
            f"other processes kept {self.other_cores:.2g} cores busy meanwhile "
            f"(load average {self.load_average:.3g})"
        )


def _busy_jiffies(stat_text: str) -> tuple[int, int]:
    """(busy, total) jiffies of the aggregate `cpu` line of /proc/stat (idle and iowait are
    not busy)."""
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            values = [int(v) for v in fields[1:9]]
            idle = values[3] + values[4]
            return sum(values) - idle, sum(values)
    return 0, 0


def other_cores(stat_before: str, stat_after: str, own_seconds: float, wall: float) -> float:
    """Cores other processes kept busy on average over `wall` seconds between two /proc/stat
    readings, `own_seconds` being this process's (and its children's) CPU time meanwhile."""
    busy = _busy_jiffies(stat_after)[0] - _busy_jiffies(stat_before)[0]
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    if wall <= 0:
        return 0.0
    return max(0.0, (busy / hz - own_seconds) / wall)


class LoadMeter:
    """`with LoadMeter() as meter: ...` then `meter.load`: the Load during the block."""

    def __enter__(self):
        self._stat = _read_stat()
        self._own = _own_cpu_seconds()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self._t0
        own = _own_cpu_seconds() - self._own
        try:
            average = os.getloadavg()[0]
        except OSError:
            average = 0.0
        self.load = Load(average, other_cores(self._stat, _read_stat(), own, wall))
        return False


def _read_stat() -> str:
    try:
        return Path("/proc/stat").read_text()
    except OSError:
        return ""


def _own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@dataclass(frozen=True)
class ClockProbe:
    """A measured clock (0 when refused or not measured) and how it came out."""

    hz: float
    how: str


def plausible_clock(rates: list[float], load: Load | None = None) -> ClockProbe:
    """The clock from the add chain's per-run rates: the fastest run (a run another process
    interrupted only comes out slower), refused when any run is above the physical range
    (the chain did not take a cycle per add here) or none lies within it."""
    low, high = CLOCK_RANGE_HZ
    where = f" ({load.text()})" if load is not None else ""
    if not rates:
        return ClockProbe(0.0, "the clock probe printed no rate")
    if max(rates) > high:
        return ClockProbe(
            0.0,
            f"the clock probe was refused: a run measured {max(rates) / 1e9:.3g} GHz, above "
            f"the physical {high / 1e9:.3g} GHz{where}",
        )
    kept = [r for r in rates if r >= low]
    if not kept:
        return ClockProbe(
            0.0,
            f"the clock probe was refused: every run was below {low / 1e9:.3g} GHz{where}",
        )
    return ClockProbe(max(kept), f"best of {len(rates)} runs of a chain of dependent adds{where}")


def measure_clock_hz() -> ClockProbe:
    """The clock one core runs at, measured with the machine's load in view (hz 0 when there
    is no C compiler, the ISA is neither x86-64 nor AArch64, or the figure is refused).
    Compiled with $SOLAR_CC, cc, gcc or c++."""
    import platform
    import shutil
    import tempfile

    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        add = "add %0, %0"
    elif machine in ("aarch64", "arm64"):
        add = "add %0, %0, %0"
    else:
        return ClockProbe(0.0, f"no clock probe for {machine}")
    names = (os.environ.get("SOLAR_CC", ""), "cc", "gcc", "c++")
    compiler = next((shutil.which(c) for c in names if c and shutil.which(c)), None)
    if compiler is None:
        return ClockProbe(0.0, "no C compiler for the clock probe")
    adds = '"' + "\\n\\t".join([add] * 8) + '"'
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = Path(tmp) / "clock.c", Path(tmp) / "clock"
            src.write_text(_CLOCK_C.replace("ADDS", adds).replace("RUNS", str(CLOCK_RUNS)))
            subprocess.run(
                [compiler, "-O2", "-x", "c", str(src), "-o", str(exe)],
                check=True,
                capture_output=True,
                timeout=60,
            )
            with LoadMeter() as meter:
                out = subprocess.run(
                    [str(exe)], check=True, capture_output=True, text=True, timeout=60
                ).stdout
        rates = [float(line) for line in out.split()]
    except (OSError, subprocess.SubprocessError, ValueError):
        return ClockProbe(0.0, "the clock probe failed to build or run")
    return plausible_clock(rates, meter.load)


def reported_clock_hz(cpuinfo: CpuInfo) -> tuple[float, str]:
    """(Hz, where it came from): cpufreq's cpuinfo_max_freq, else lscpu's 'CPU max MHz',
    else the largest 'cpu MHz' of /proc/cpuinfo (a VM often reports only its nominal
    clock there)."""
    best = 0.0
    for path in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq"):
        try:
            best = max(best, float(path.read_text().strip()) * 1e3)  # kHz
        except (OSError, ValueError):
            continue
    if best > 0:
        return best, "cpufreq cpuinfo_max_freq"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        m = re.search(r"^CPU max MHz:\s*([\d.]+)", out, re.MULTILINE)
        if m and float(m.group(1)) > 0:
            return float(m.group(1)) * 1e6, "lscpu 'CPU max MHz'"
    except (OSError, subprocess.SubprocessError):
        pass
    if cpuinfo.mhz > 0:
        return cpuinfo.mhz * 1e6, "/proc/cpuinfo 'cpu MHz' (no cpufreq or lscpu maximum)"
    return 3.0e9, "assumed 3 GHz (no clock reported)"


def _size_text(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)", text.strip())
    if not m:
        return 0
    return int(m.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)]


def last_level_cache() -> tuple[int, int]:
    """(bytes of last-level cache usable by this process, its level): the highest cache
    level of each usable CPU, each distinct instance (shared_cpu_list) counted once."""
    instances: dict[str, int] = {}
    level = 0
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    for cpu in cpus:
        best = (0, 0, "")
        for index in Path(f"/sys/devices/system/cpu/cpu{cpu}/cache").glob("index*"):
            try:
                lvl = int((index / "level").read_text())
                kind = (index / "type").read_text().strip()
                size = _size_text((index / "size").read_text())
                shared = (index / "shared_cpu_list").read_text().strip()
            except (OSError, ValueError):
                continue
            if kind != "Instruction" and lvl > best[0]:
                best = (lvl, size, shared)
        if best[0]:
            instances[f"{best[0]}:{best[2]}"] = best[1]
            level = max(level, best[0])
    return sum(instances.values()), level


def inner_caches() -> list[tuple[int, int]]:
    """[(level, bytes)] of every data or unified cache level below the last one, over the
    usable CPUs, each distinct instance (shared_cpu_list) counted once; outermost first."""
    instances: dict[tuple[int, str], int] = {}
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    for cpu in cpus:
        for index in Path(f"/sys/devices/system/cpu/cpu{cpu}/cache").glob("index*"):
            try:
                lvl = int((index / "level").read_text())
                kind = (index / "type").read_text().strip()
                size = _size_text((index / "size").read_text())
                shared = (index / "shared_cpu_list").read_text().strip()
            except (OSError, ValueError):
                continue
            if kind != "Instruction":
                instances[(lvl, shared)] = size
    if not instances:
        return []
    last = max(lvl for lvl, _ in instances)
    totals: dict[int, int] = {}
    for (lvl, _), size in instances.items():
        if lvl < last:
            totals[lvl] = totals.get(lvl, 0) + size
    return sorted(totals.items(), reverse=True)


def register_bytes(flags) -> tuple[int, str]:
    """Architectural register state of one hardware thread (x86-64: 16 general registers of 8
    bytes, the vector registers of the widest ISA the flags name, AVX-512's 8 mask registers),
    with its derivation. Renamed physical registers are not visible to software, which can keep
    at most this much live data in registers at a time."""
    general = 16 * 8
    if "avx512f" in flags:
        vector, text = 32 * 64, "32 zmm x 64 B"
        mask = 8 * 8
    elif "avx" in flags:
        vector, text, mask = 16 * 32, "16 ymm x 32 B", 0
    else:
        vector, text, mask = 16 * 16, "16 xmm x 16 B", 0
    derivation = f"16 general x 8 B + {text}" + (" + 8 masks x 8 B" if mask else "")
    return general + vector + mask, derivation


def dram_capacity_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


@dataclass(frozen=True)
class Bandwidth:
    bytes_per_second: float
    derivation: str


def measure_bandwidth(llc_bytes: int, trials: int = STREAM_TRIALS) -> Bandwidth:
    """DRAM bandwidth: the best of `trials` runs of a STREAM triad (a = b + s*c), a
    read-only sum and a copy, on arrays of at least 4x the LLC, using every usable core. The
    triad counts 4 arrays (2 read, 1 written, plus the write-allocate read of the written
    line, which the memory bus carries: the sustained DRAM rate), the copy 3, an in-place
    scale 2 (its lines are read before they are written), the sum 1.
    The largest rate is the spec's: a bound must not assume less bandwidth than a program
    can get."""
    n = max(STREAM_MIN_ARRAY_BYTES, 4 * llc_bytes) // 4
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        b = torch.rand(n, dtype=torch.float32)
        c = torch.rand(n, dtype=torch.float32)
        a = torch.empty_like(b)

        def triad():
            torch.add(b, c, alpha=3.0, out=a)

        def read():
            b.sum()

        def copy():
            a.copy_(b)

        def scale():
            b.mul_(1.0)

        how = f"torch ({torch.get_num_threads()} threads)"
    else:
        import numpy as np

        b = np.random.rand(n).astype(np.float32)
        c = np.random.rand(n).astype(np.float32)
        a = np.empty_like(b)

        def triad():
            np.add(b, c, out=a)  # an add, not a triad: NumPy has no fused one (3 arrays)

        def read():
            b.sum()

        def copy():
            np.copyto(a, b)

        def scale():
            np.multiply(b, 1.0, out=b)

        how = "NumPy (one thread: underestimates a multi-core bandwidth)"
    kernels = (triad, read, copy, scale)
    best = [float("inf")] * len(kernels)
    for fn in kernels:
        fn()
    for _ in range(trials):
        for k, fn in enumerate(kernels):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    array_bytes = 4 * n
    triad_rate = 4 * array_bytes / best[0]
    stream_rate = 3 * array_bytes / best[0]
    read_rate = array_bytes / best[1]
    copy_rate = 3 * array_bytes / best[2]
    scale_rate = 2 * array_bytes / best[3]
    rate = max(triad_rate, read_rate, copy_rate, scale_rate)
    derivation = (
        f"measured on this machine with {how}, best of {trials}, arrays of "
        f"{array_bytes / 2**20:.0f} MiB fp32 (LLC {llc_bytes / 2**20:.0f} MiB): triad a=b+s*c "
        f"{triad_rate / 1e9:.3g} GB/s counting 4 arrays with the write-allocate "
        f"({stream_rate / 1e9:.3g} GB/s by the STREAM convention of 3), read-only sum "
        f"{read_rate / 1e9:.3g} GB/s, copy {copy_rate / 1e9:.3g} GB/s (3 arrays with the "
        f"write-allocate), in-place scale {scale_rate / 1e9:.3g} GB/s (2 arrays); the largest "
        "is used"
    )
    return Bandwidth(rate, derivation)


def measure_gemm_flops() -> float:
    """fp32 GEMM throughput PyTorch reaches here (0 without PyTorch): a check of the derived
    peak (a clock above the one reported would show as a GEMM faster than the peak)."""
    try:
        import torch
    except ImportError:
        return 0.0
    n = 1024
    x, y = torch.rand(n, n), torch.rand(n, n)
    x @ y
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        x @ y
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def _larger(bandwidth: Bandwidth, cached: Path) -> Bandwidth:
    """The larger of a new measurement and the one cached for the same machine: a busy
    machine can only measure too little, and a bound must not assume too little."""
    from . import _core

    try:
        old, how = _core.load_arch(str(cached), str(cached.parent)).dram_bytes_per_second
    except Exception:  # an unreadable cache is simply replaced
        return bandwidth
    if old <= bandwidth.bytes_per_second:
        return bandwidth
    how = how.split("; ", 1)[-1].split(" [kept: ")[0]
    return Bandwidth(
        old, f"{how} [kept: a re-measurement gave {bandwidth.bytes_per_second / 1e9:.3g} GB/s]"
    )


def _larger_clock(hz: float, how: str, flags, cores: int, cached: Path) -> tuple[float, str]:
    """The larger of a clock and the one a cached spec of the same machine was derived with
    (recovered from its fp32 peak, which the clock multiplies)."""
    from . import _core

    try:
        old_peak = _core.load_arch(str(cached), str(cached.parent)).vector_flops_per_second
        old_hz = old_peak["fp32"][0] / derive_peaks(flags, cores, 1.0).fp32
    except Exception:  # an unreadable cache is simply replaced
        return hz, how
    if old_hz <= hz * (1 + 1e-9):
        return hz, how
    return old_hz, f"{old_hz / 1e9:.4g} GHz kept from an earlier derivation (now: {how})"


def cache_dir() -> Path:
    base = os.environ.get("SOLAR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "solar"
    )
    return Path(base)


def machine_key(cpu: CpuInfo, cores: int) -> str:
    """Identifies the machine a cached spec was derived on (CPU, flags, cores, version)."""
    text = f"{SPEC_VERSION}|{cpu.model}|{' '.join(sorted(cpu.flags))}|{cores}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def spec_yaml(
    cpu: CpuInfo,
    cores: int,
    hz: float,
    clock_source: str,
    peaks: Peaks,
    bandwidth: Bandwidth,
    llc_bytes: int,
    llc_level: int,
    dram_bytes: int,
    key: str,
    gemm_flops: float = 0.0,
    inner: list[tuple[int, int]] | None = None,
) -> str:
    """The spec text (docs/arch-spec.md) of this machine."""
    src = "derived on this machine"
    rate = peaks.fp32
    gemm_note = ""
    if gemm_flops > rate:  # the clock must be higher than reported: trust the measurement
        rate = gemm_flops
        gemm_note = f"; raised to the measured fp32 GEMM rate {gemm_flops:.6g}"
    scale = rate / peaks.fp32
    # AVX512-FP16 FMAs accumulate in fp16; vdpbf16ps, AMX and the fp32 fallback in fp32.
    fp16_accumulate = "fp16" if "avx512_fp16" in cpu.flags else "fp32"
    model = cpu.model or "unknown CPU"
    lines = [
        f"# solar-local-key: {key}",
        "# Derived by solar.local_arch on this machine (docs/measure.md); delete to re-derive.",
        "name: local",
        f"description: {_q(f'this machine: {model}, {cores} usable cores')}",
        "notes: >-",
        "  Peaks are derived from /proc/cpuinfo flags, usable cores and the maximum clock",
        f"  ({clock_source}), assuming {FMA_UNITS_PER_CORE} FMA units per core; DRAM bandwidth",
        "  is measured (STREAM-style). fp32 contractions run on the vector units (no matrix",
        "  units), so the fp32 matrix rate equals the fp32 vector rate."
        + (f" A fp32 GEMM measured {gemm_flops / 1e9:.3g} GFLOP/s here." if gemm_flops else ""),
        "sources:",
        f"  machine: {_q(f'{src}: /proc/cpuinfo, sched_getaffinity, sysfs caches, a measurement')}",
        "sparsity: dense",
        "clock: measured",
        "fp32_matrix_mode: fp32",
        "matrix_flops_per_second:",
        f"  fp32: {{value: {rate:.10e}, source: machine, "
        f"derivation: {_q(peaks.derivation + gemm_note)}}}",
        f"  fp64: {{value: {peaks.fp64 * scale:.10e}, source: machine, "
        f"derivation: {_q('half the fp32 peak (half the lanes)')}}}",
        f"  bf16: {{value: {peaks.bf16 * scale:.10e}, source: machine, "
        f"derivation: {_q(peaks.bf16_derivation)}, accumulate: fp32}}",
        f"  fp16: {{value: {peaks.fp16 * scale:.10e}, source: machine, "
        f"derivation: {_q(peaks.fp16_derivation)}, accumulate: {fp16_accumulate}}}",
        f"  int8: {{value: {peaks.int8 * scale:.10e}, source: machine, "
        f"derivation: {_q(peaks.int8_derivation)}}}",
        "vector_flops_per_second:",
        f"  fp32: {{value: {rate:.10e}, source: machine, "
        f"derivation: {_q(peaks.derivation + gemm_note)}}}",
        f"  fp64: {{value: {peaks.fp64 * scale:.10e}, source: machine, "
        f"derivation: {_q('half the fp32 peak (half the lanes)')}}}",
        "dram:",
        f"  bytes_per_second: {{value: {bandwidth.bytes_per_second:.10e}, source: machine, "
        f"derivation: {_q(bandwidth.derivation)}}}",
    ]
    if dram_bytes:
        lines.append(
            f"  capacity_bytes: {{value: {float(dram_bytes):.10e}, source: machine, "
            f"derivation: {_q('/proc/meminfo MemTotal')}}}"
        )
    if llc_bytes:
        name = f"L{llc_level}"
        lines += [
            "on_chip:",
            f"  - name: {name}",
            f"    capacity_bytes: {{value: {float(llc_bytes):.10e}, source: machine, "
            f"derivation: {_q('sysfs cpu*/cache: last level, each instance once')}}}",
        ]
        # Every other level that can hold data, for the cache-aware bound's capacity (the sum
        # of all on-chip levels, docs/arch-spec.md): inner caches and the register state.
        for lvl, size in inner or []:
            how = f"sysfs cpu*/cache: level {lvl} data/unified, each instance once"
            lines += [
                f"  - name: L{lvl}",
                f"    capacity_bytes: {{value: {float(size):.10e}, source: machine, "
                f"derivation: {_q(how)}}}",
            ]
        per_thread, how = register_bytes(cpu.flags)
        lines += [
            "  - name: RF",
            f"    capacity_bytes: {{value: {float(per_thread * cores):.10e}, source: machine, "
            f"derivation: {_q(f'architectural registers: ({how}) x {cores} usable CPUs')}}}",
            f"cache_level: {name}",
        ]
    return "\n".join(lines) + "\n"


def cached_key(path: Path) -> str:
    try:
        first = path.read_text().splitlines()[0]
    except (OSError, IndexError):
        return ""
    return first.removeprefix("# solar-local-key: ").strip()


def local_spec_path(refresh: bool | None = None) -> str:
    """Path of this machine's spec, derived (and its bandwidth measured, a few seconds) when
    absent, when the machine differs from the one it was derived on, or on refresh
    (`refresh=True`, or $SOLAR_LOCAL_REFRESH=1)."""
    if refresh is None:
        refresh = os.environ.get("SOLAR_LOCAL_REFRESH", "") not in ("", "0")
    try:
        cpu = parse_cpuinfo(Path("/proc/cpuinfo").read_text())
    except OSError:
        cpu = CpuInfo("", frozenset(), 0.0)
    cores = usable_cores()
    key = machine_key(cpu, cores)
    path = cache_dir() / "local.yaml"
    if not refresh and path.exists() and cached_key(path) == key and not _measured_busy(path):
        return str(path)
    hz, clock_source = max_clock_hz(cpu)
    same_machine = path.exists() and cached_key(path) == key
    if same_machine:  # a measured clock, like a bandwidth, can only come out too low
        hz, clock_source = _larger_clock(hz, clock_source, cpu.flags, cores, path)
    peaks = derive_peaks(cpu.flags, cores, hz)
    llc, level = last_level_cache()
    with LoadMeter() as meter:
        bandwidth = measure_bandwidth(llc)
    bandwidth = Bandwidth(
        bandwidth.bytes_per_second, f"{bandwidth.derivation}; {meter.load.text()}"
    )
    if same_machine:
        bandwidth = _larger(bandwidth, path)
    if meter.load.busy:
        warnings.warn(
            f"--arch local: the DRAM bandwidth ({bandwidth.bytes_per_second / 1e9:.3g} GB/s) "
            f"was measured while {meter.load.text()}; it is likely too low, and it is "
            "measured again at the next run until a quiet machine confirms it "
            "(docs/measure.md)",
            BusyMachineWarning,
            stacklevel=2,
        )
    text = spec_yaml(
        cpu,
        cores,
        hz,
        clock_source,
        peaks,
        bandwidth,
        llc,
        level,
        dram_capacity_bytes(),
        key,
        measure_gemm_flops(),
        inner_caches(),
    )
    if meter.load.busy:  # re-derived at the next run (keeping the larger figures)
        text = text.replace("\n", f"\n{BUSY_MARK}{meter.load.text()}\n", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"local.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # atomic: parallel batch workers never read half a file
    return str(path)


BUSY_MARK = "# solar-local-busy: "  # second line of a spec measured on a busy machine


class BusyMachineWarning(UserWarning):
    """A local measurement ran while other processes used the cores."""


def _measured_busy(path: Path) -> bool:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return False
    return len(lines) > 1 and lines[1].startswith(BUSY_MARK)


PROBE_TRIALS = 3  # per probe: a few runs of each kernel, about half a second


def probe_bandwidth(trials: int = PROBE_TRIALS) -> tuple[float, float]:
    """Measures the DRAM bandwidth again and raises the cached local spec's rate when the
    machine delivers more now than when the spec was derived (a shared machine's bandwidth
    varies with its load). `--measure` probes right before and after timing a program, so the
    bound it compares against uses a bandwidth sampled in the same conditions. Returns (rate
    before, rate after) in bytes/s."""
    from . import _core

    path = Path(local_spec_path())
    old = _core.load_arch(str(path), str(path.parent)).dram_bytes_per_second[0]
    bw = measure_bandwidth(last_level_cache()[0], trials)
    if bw.bytes_per_second <= old:
        return old, old
    how = f"{bw.derivation} [raised from {old / 1e9:.3g} GB/s by a probe of a --measure run]"
    line = (
        f"  bytes_per_second: {{value: {bw.bytes_per_second:.10e}, source: machine, "
        f"derivation: {_q(how)}}}"
    )
    text = re.sub(
        r"^  bytes_per_second: .*$", lambda _: line, path.read_text(), count=1, flags=re.M
    )
    tmp = path.with_name(f"local.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return old, bw.bytes_per_second


def is_local(spec) -> bool:
    """Whether a loaded spec is this machine's cached local spec."""
    try:
        return Path(spec.file).resolve() == (cache_dir() / "local.yaml").resolve()
    except (OSError, AttributeError):
        return False
