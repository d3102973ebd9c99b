// Einsum-graph sidecar (schema "solar.einsum_graph/1", docs/graph-yaml.md): nodes, edges and
// per-einsum ranks, sizes, projections (Timeloop and AccelForge style) and bits per value.
#pragma once

#include <string>

#include "solar/graph/graph.h"

namespace solar {

std::string graph_yaml(const Graph& graph);

}  // namespace solar
