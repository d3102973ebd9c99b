// Times the whole shape-only pipeline on generated programs:
// read -> parse -> check -> trace (+ lift) -> the analysis with every mode (unfused, fused,
// cache-aware bound and schedule), and without the cache-aware mode (pipeline_no_cache).
//
//   bench_pipeline PROGRAM.py [PROGRAM.py ...] [--benchmark_* flags]
//
// Each program is benchmarked whole (its first run in the process, then steady state) and by
// stage (parse and check, trace and lift, the analysis alone); counters report nodes and ns
// per node, and the process's peak resident memory.
// bench/run_bench.py generates the programs, runs this binary once per size (so each peak is its
// own) and prints the comparison table.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/ir/checker.h"
#include "solar/ir/parser.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/cache_aware.h"

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// The whole pipeline; `cache_aware` false skips the cache-aware bound and schedule.
void run_pipeline(benchmark::State& state, const std::string& path, const solar::ArchSpec& arch,
                  bool cache_aware) {
  size_t nodes = 0;
  solar::AnalysisOptions options;
  options.cache_aware = cache_aware;
  // The run's tiling searches, kept between iterations as a session keeps them between the
  // analyses of one process (pipeline/session.h).
  solar::TilingMemo memo;
  options.memo = &memo;
  for (auto _ : state) {
    solar::Graph g = solar::graph_from_file(path, {});
    solar::Analysis a = solar::analyze(g, arch, options);
    benchmark::DoNotOptimize(a.fused.seconds);
    nodes = g.nodes.size();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

// The analysis alone (every mode), on a graph traced once: what of the pipeline's growth is
// the analysis's (bench/README.md, "Where the growth is").
void run_analysis(benchmark::State& state, const std::string& path, const solar::ArchSpec& arch) {
  const solar::Graph g = solar::graph_from_file(path, {});
  solar::AnalysisOptions options;
  solar::TilingMemo memo;
  options.memo = &memo;
  for (auto _ : state) {
    solar::Analysis a = solar::analyze(g, arch, options);
    benchmark::DoNotOptimize(a.fused.seconds);
  }
  state.counters["nodes"] = static_cast<double>(g.nodes.size());
}

void run_front_end(benchmark::State& state, const std::string& path) {
  const std::string text = solar::read_source_file(path);
  for (auto _ : state) {
    solar::Program p = solar::check_program(solar::parse_source(text, path));
    benchmark::DoNotOptimize(p.kernels.size());
  }
}

void run_trace(benchmark::State& state, const std::string& path) {
  const solar::Program p = solar::load_program(path);
  for (auto _ : state) {
    solar::Graph g = solar::trace_program(p, {});
    benchmark::DoNotOptimize(g.nodes.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed memory in the process: without this, glibc returns the large blocks of a big
  // graph to the kernel after each iteration and the next one pays page faults that small
  // graphs (served from free lists) never see, which skews the per-node comparison. The
  // cold, one-process-per-run cost (faults included) is measured by bench/run_bench.py.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> programs;
  for (int i = 1; i < argc; ++i) programs.emplace_back(argv[i]);
  if (programs.empty()) {
    fprintf(stderr, "usage: bench_pipeline PROGRAM.py [...]  (see bench/run_bench.py)\n");
    return 1;
  }
  const solar::ArchSpec arch = solar::resolve_arch("H100_PCIe", SOLAR_ARCH_DIR);
  for (const std::string& path : programs) {
    // A program that cannot be read (a missing file, a mistyped flag such as
    // --benchmark_min_time=2s taken for a program) is said before anything runs. Only read:
    // the first_run benchmark must find the heap as a fresh process does.
    try {
      solar::read_source_file(path);
    } catch (const std::exception& e) {
      fprintf(stderr, "bench_pipeline: %s\n", e.what());
      return 1;
    }
  }
  for (const std::string& path : programs) {
    const std::string label = path.substr(path.find_last_of('/') + 1);
    // The process's first pipeline run (one iteration: caches and heap cold, as for a user's
    // one `solar analyze`); first registered, so first run when the process has one program.
    benchmark::RegisterBenchmark(("first_run/" + label).c_str(), run_pipeline, path, arch, true)
        ->Iterations(1)
        ->Repetitions(1)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("pipeline/" + label).c_str(), run_pipeline, path, arch, true)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("pipeline_no_cache/" + label).c_str(), run_pipeline, path, arch,
                                 false)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("analysis/" + label).c_str(), run_analysis, path, arch)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("parse_check/" + label).c_str(), run_front_end, path)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("trace_lift/" + label).c_str(), run_trace, path)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
