"""Prints AccelForge's minimum DRAM traffic in bytes for a workload YAML at each of several
global-buffer capacities in bytes, one line each ("bytes CAPACITY DRAM_BYTES"; AccelForge
prints progress of its own to stdout too):
`python accelforge_bytes.py WORKLOAD.yaml CAPACITY_BYTES [CAPACITY_BYTES ...]`.

Run by tests/python/test_accelforge.py under an interpreter that has `accelforge` (it needs
Python >= 3.12; this project's venv is 3.11). The architecture is AccelForge's Orojenesis
example (`snowcat`: MainMemory + one GlobalBuffer); with energy 1 per bit read or written at
MainMemory, the minimum energy is the minimum DRAM traffic in bits. AccelForge renders the
best mapping with Graphviz (`dot` on PATH) and writes mapping.svg to the working directory.
One process maps every capacity (importing accelforge takes seconds).
"""

import sys

import accelforge as af

path = sys.argv[1]
for capacity in (int(c) for c in sys.argv[2:]):
    spec = af.Spec.from_yaml(af.examples.arches.snowcat, path)
    spec.arch.find("GlobalBuffer").size = capacity * 8  # bits
    spec.mapper.metrics = af.Metrics.ENERGY
    result = spec.map_workload_to_arch()
    print("bytes", capacity, float(result.energy()) / 8.0, flush=True)  # bits -> bytes
