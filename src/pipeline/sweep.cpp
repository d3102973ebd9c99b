// Sweeps: trace and analyse one checked program at many dim configurations.
#include "solar/pipeline/sweep.h"

#include "solar/base/error.h"
#include "solar/trace/tracer.h"

namespace solar {

std::vector<SweepPoint> sweep(const Program& program, const std::vector<DimOverrides>& configs,
                              const std::vector<ArchSpec>& archs, const AnalysisOptions& options) {
  // A point reports the unfused and fused modes only: the cache-aware tiling search would
  // be computed and dropped for every configuration (it made 1,000 points 6x slower).
  AnalysisOptions unfused_and_fused = options;
  unfused_and_fused.cache_aware = false;
  std::vector<SweepPoint> points;
  points.reserve(configs.size() * archs.size());
  for (const DimOverrides& config : configs) {
    Graph graph;
    try {
      TraceOptions trace_options;
      trace_options.dims = config;
      graph = trace_program(program, trace_options);
    } catch (const UserError& e) {
      std::string text;
      for (const auto& [name, size] : config)
        text += (text.empty() ? "" : " ") + name + "=" + std::to_string(size);
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      diagnostics.front().message += " (sweep configuration " + text + ")";
      throw UserError(std::move(diagnostics));
    }
    for (const ArchSpec& arch : archs) {
      const Analysis a = analyze(graph, arch, unfused_and_fused);
      SweepPoint p;
      p.dims = graph.dims;
      p.arch = arch.name;
      p.flops = a.fused.flops;
      p.matrix_flops = a.fused.matrix_flops;
      p.vector_flops = a.fused.vector_flops;
      p.unfused_bytes = a.unfused.bytes;
      p.fused_bytes = a.fused.bytes;
      p.unfused_seconds = a.unfused.seconds;
      p.fused_seconds = a.fused.seconds;
      p.unfused_bottleneck = a.unfused.bottleneck;
      p.fused_bottleneck = a.fused.bottleneck;
      points.push_back(std::move(p));
    }
  }
  return points;
}

}  // namespace solar
