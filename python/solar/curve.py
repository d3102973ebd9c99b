"""The cache-aware traffic-versus-capacity curve as plain data, and its CSV / JSON files.

The numbers come from the C++ core (src/sol/io_bound.cpp: the bound; src/sol/cache_aware.cpp:
the best schedule found); this module only shapes them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from . import _core
from .errors import argument_error
from .session import core_session


def platform_capacity(arch) -> float:
    """Capacity in bytes of the arch's cache level, or 0 when it has none."""
    for level in arch.on_chip:
        if level["name"] == arch.cache_level:
            return float(level["capacity_bytes"])
    return 0.0


def curves(graph, arch, per_node: bool = False) -> tuple[list[dict], list[dict]]:
    """(graph points, per-node curves): points are {"capacity_bytes": float, "dram_bytes":
    int (the proven lower bound), "schedule_bytes": int or None (the best schedule found:
    achievable, not a bound)}, ascending in capacity; per-node curves are {"node": name,
    "points": [...]}."""
    points, nodes = _core.cache_aware_curve(
        graph, platform_capacity(arch), per_node, core_session()
    )
    return list(points), list(nodes)


def write_curve(path: str, graph, arch) -> None:
    """Writes the graph's and every node's curve: .csv (scope,capacity_bytes,dram_bytes,
    schedule_bytes; scope "graph" or a node name; dram_bytes the bound, schedule_bytes the
    best schedule found, empty when none fits) or .json (schema solar.cache_curve/2)."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".json"):
        raise argument_error(
            f"--curve {path}: the file must end in .csv or .json", "for example --curve curve.csv"
        )
    points, nodes = curves(graph, arch, per_node=True)
    if suffix == ".json":
        doc = {
            "schema": "solar.cache_curve/2",
            "source": graph.source,
            "arch": arch.name,
            "cache_level": arch.cache_level or None,
            "platform_capacity_bytes": platform_capacity(arch) or None,
            "graph": points,
            "nodes": nodes,
        }
        Path(path).write_text(json.dumps(doc, indent=2) + "\n")
        return
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["scope", "capacity_bytes", "dram_bytes", "schedule_bytes"])

    def row(scope, p):
        sched = "" if p["schedule_bytes"] is None else p["schedule_bytes"]
        w.writerow([scope, f"{p['capacity_bytes']:.0f}", p["dram_bytes"], sched])

    for p in points:
        row("graph", p)
    for n in nodes:
        for p in n["points"]:
            row(n["node"], p)
    Path(path).write_text(out.getvalue())
