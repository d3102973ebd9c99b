// Analysis JSON (schema "solar.analysis/1", docs/json-schema.md). Integers stay integers.
#pragma once

#include <string>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/einsum/graph.h"
#include "solar/sol/analysis.h"

namespace solar {

struct ValidationInfo {
  std::string status = "none";  // full | scaled | per-kernel | none | failed
  std::string detail;
};

// One analysis as a JSON document (pretty-printed with `indent` spaces, -1 for compact).
std::string analysis_json(const Graph& graph, const ArchSpec& arch, const Analysis& analysis,
                          const ValidationInfo& validation, int indent = 2);
// Several architectures: {"schema": "solar.analyses/1", "analyses": [...]}.
std::string analyses_json(const Graph& graph, const std::vector<ArchSpec>& archs,
                          const std::vector<Analysis>& analyses, const ValidationInfo& validation,
                          int indent = 2);

}  // namespace solar
