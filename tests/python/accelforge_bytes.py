"""Prints AccelForge's minimum DRAM traffic in bytes for a workload YAML and a global-buffer
capacity in bytes: `python accelforge_bytes.py WORKLOAD.yaml CAPACITY_BYTES`.

Run by tests/python/test_accelforge.py under an interpreter that has `accelforge` (it needs
Python >= 3.12; this project's venv is 3.11). The architecture is AccelForge's Orojenesis
example (`snowcat`: MainMemory + one GlobalBuffer); with energy 1 per bit read or written at
MainMemory, the minimum energy is the minimum DRAM traffic in bits. AccelForge renders the
best mapping with Graphviz (`dot` on PATH) and writes mapping.svg to the working directory.
"""

import sys

import accelforge as af

path, capacity = sys.argv[1], int(sys.argv[2])
spec = af.Spec.from_yaml(af.examples.arches.snowcat, path)
spec.arch.find("GlobalBuffer").size = capacity * 8  # bits
spec.mapper.metrics = af.Metrics.ENERGY
result = spec.map_workload_to_arch()
print(float(result.energy()) / 8.0)  # bits -> bytes
