// Sweeps: one checked program traced and analysed at many dim configurations (the paper's
// Figure 5), without parsing or checking it again.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/ir/program.h"
#include "solar/sol/analysis.h"

namespace solar {

using DimOverrides = std::vector<std::pair<std::string, int64_t>>;

// The analysis of one configuration on one architecture, reduced to what a sweep reports.
struct SweepPoint {
  DimOverrides dims;  // every model-level dim and its size at this point (Graph::dims)
  std::string arch;
  int64_t flops = 0;
  int64_t matrix_flops = 0;
  int64_t vector_flops = 0;
  int64_t unfused_bytes = 0;
  int64_t fused_bytes = 0;
  double unfused_seconds = 0.0;
  double fused_seconds = 0.0;
  Bottleneck unfused_bottleneck;
  Bottleneck fused_bottleneck;
};

// Traces `program` once per configuration (each a list of DIMS overrides, applied as
// `--dim`) and analyses the graph on every arch. Points are in configuration order, archs
// innermost. A bad override is the tracer's UserError, naming the configuration.
std::vector<SweepPoint> sweep(const Program& program, const std::vector<DimOverrides>& configs,
                              const std::vector<ArchSpec>& archs, const AnalysisOptions& options);

}  // namespace solar
