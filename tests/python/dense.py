"""Counts over the dense iteration space, for comparisons with counters that ignore guards."""


def dense_macs(graph) -> int:
    """The MACs with every guarded nest counted at all its points: PyTorch's FlopCounterMode
    formulas count a padded convolution's taps in the padding and a causal attention's
    masked half, which Solar's guarded nests skip (docs/ir.md §7.1)."""
    return sum(e.points if e.guarded and e.macs else e.macs for n in graph.nodes for e in n.einsums)
