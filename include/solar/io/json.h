// Analysis JSON (schema "solar.analysis/1", docs/json-schema.md). Integers stay integers.
#pragma once

#include <string>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/graph/graph.h"
#include "solar/sol/analysis.h"

namespace solar {

struct ValidationInfo {
  std::string status = "none";  // full | scaled | per-kernel | inconclusive | none | failed
  std::string detail;
};

// One analysis as a JSON document (pretty-printed with `indent` spaces, -1 for compact).
// `measurement`: the JSON text of the run times measured for it (the Python layer measures,
// docs/measure.md), written as its `measurement` object after `units`; "" for none.
std::string analysis_json(const Graph& graph, const ArchSpec& arch, const Analysis& analysis,
                          const ValidationInfo& validation, int indent = 2,
                          const std::string& measurement = "");
// Several architectures: {"schema": "solar.analyses/1", "analyses": [...]}; `measurements`
// empty, or one JSON text per analysis as above.
std::string analyses_json(const Graph& graph, const std::vector<ArchSpec>& archs,
                          const std::vector<Analysis>& analyses, const ValidationInfo& validation,
                          int indent = 2, const std::vector<std::string>& measurements = {});

}  // namespace solar
