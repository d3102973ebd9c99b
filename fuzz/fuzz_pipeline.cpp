// Fuzz target: one input is the text of an IR program; it runs through every stage Solar
// runs on a program it is given: parse -> check -> trace -> analyze (unfused, fused,
// cache-aware) -> inverse roofline, chains, JSON and YAML -> run (the interpreter, on
// inputs drawn from the text's hash, when the execution budget allows). See fuzz/README.md.
//
// A user error (a UserError, or Interrupted never raised here) is the expected outcome of a
// bad input. Anything else escaping the library is a finding and aborts, so libFuzzer keeps
// the input: an InternalError (Solar is wrong), any other exception (an .at() out of range,
// bad_alloc), and every crash or sanitizer report. Built as a libFuzzer target with clang
// (fuzz_pipeline) and, with any compiler, as a replay driver that runs files given on the
// command line once each (fuzz_replay: the regression test over fuzz/crashes/ and the seeds).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/base/error.h"
#include "solar/exec/executor.h"
#include "solar/io/json.h"
#include "solar/io/yaml.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/sol/chains.h"
#include "solar/sol/inverse.h"
#include "solar/trace/tracer.h"

namespace {

// Caps far below the defaults keep one input under a few milliseconds: the fuzzer explores
// the program space, not the tracer's cap (tests/cpp/test_tracer.cpp tests the caps).
solar::TraceLimits fuzz_limits() {
  solar::TraceLimits limits;
  limits.max_nodes = 2000;
  limits.max_graph_bytes = int64_t{16} << 20;
  limits.max_steps = 200'000;
  limits.max_values = 20'000;
  limits.max_string = 20'000;
  return limits;
}

// Execution only for small programs: the interpreter runs ~10^7 operations per second.
constexpr int64_t kMaxRunBytes = int64_t{16} << 20;
constexpr int64_t kMaxRunOperations = 200'000;

const solar::ArchSpec& arch() {
  static const solar::ArchSpec spec =
      solar::load_arch_spec(std::string(SOLAR_SOURCE_DIR) + "/configs/arch/H100_PCIe.yaml");
  return spec;
}

uint64_t hash_text(const std::string& text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Deterministic inputs: values in [-4, 4) for every dtype (integer dtypes store them
// truncated, so gather indices are often in range and sometimes not).
std::vector<solar::Array> make_inputs(const solar::Graph& graph, uint64_t seed) {
  std::vector<solar::Array> inputs;
  for (solar::TensorId t : graph.inputs) {
    const solar::TensorInfo& info = graph.tensors[static_cast<size_t>(t)];
    solar::Array a = solar::Array::allocate(info.dtype, {info.shape.begin(), info.shape.end()});
    const int64_t n = a.elements();
    for (int64_t i = 0; i < n; ++i) {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      a.store(i, static_cast<double>(seed % 8000) / 1000.0 - 4.0);
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

void run_one(const std::string& text) {
  solar::Program program;
  solar::Graph graph;
  try {
    program = solar::load_program_source(text, "fuzz.py");
    solar::TraceOptions options;
    options.limits = fuzz_limits();
    graph = solar::trace_program(program, options);
  } catch (const solar::UserError&) {
    return;
  }
  try {
    solar::AnalysisOptions analysis_options;
    const solar::Analysis analysis = solar::analyze(graph, arch(), analysis_options);
    (void)solar::inverse_roofline(analysis, solar::parse_latency("1ms"));
    (void)solar::analysis_json(graph, arch(), analysis, solar::ValidationInfo{});
  } catch (const solar::UserError&) {
    // an overflow refused, a dtype without a matrix rate: the analysis stops, the rest goes on
  }
  try {
    (void)solar::graph_yaml(graph);
  } catch (const solar::UserError&) {
  }
  try {
    (void)solar::find_chains(graph);
  } catch (const solar::UserError&) {
  }
  // Run at the program's sizes when that is cheap, else at reduced sizes (each DIMS entry
  // at most 3, as validation runs a scaled program): the executor sees most programs.
  solar::ExecCost cost = solar::estimate_cost(graph);
  if (cost.peak_bytes > kMaxRunBytes || cost.operations > kMaxRunOperations) {
    solar::TraceOptions small;
    small.limits = fuzz_limits();
    for (const auto& [name, size] : program.dims)
      small.dims.emplace_back(name, std::min<int64_t>(size, 3));
    try {
      graph = solar::trace_program(program, small);
    } catch (const solar::UserError&) {
      return;
    }
    cost = solar::estimate_cost(graph);
    if (cost.peak_bytes > kMaxRunBytes || cost.operations > kMaxRunOperations) return;
  }
  // SOLAR_FUZZ_STATS=1: say which inputs reach execution and how they end (fuzz/README.md).
  static const bool stats = std::getenv("SOLAR_FUZZ_STATS") != nullptr;
  try {
    solar::ExecOptions exec;
    exec.backend = solar::Backend::kInterpreter;
    exec.bounds_check = true;
    (void)solar::execute(program, graph, make_inputs(graph, hash_text(text)), exec);
    if (stats) std::fprintf(stderr, "fuzz_pipeline: ran %zu nodes\n", graph.nodes.size());
  } catch (const solar::UserError& e) {
    if (stats) std::fprintf(stderr, "fuzz_pipeline: run stopped: %s\n", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    run_one(text);
  } catch (const solar::InternalError& e) {
    std::fprintf(stderr, "fuzz_pipeline: internal error: %s\n", e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_pipeline: uncaught exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
