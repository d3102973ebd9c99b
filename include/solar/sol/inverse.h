// Inverse roofline (docs/sol-modes.md, "Inverse roofline"): for a target time per run T
// (a latency, or 1 / a rate), the minimum platform that meets it in each SOL mode.
//
//   Pi_min        = FLOPs / T            (and its matrix and vector parts, separately)
//   beta_min      = bytes / T            (the mode's DRAM traffic)
//   improvement   = Pi_min / Pi, beta_min / beta   (> 1: the platform falls short)
//   speedup       = SOL / T              (<= 1: the target is already met)
//   attainable Hz = 1 / SOL
#pragma once

#include <string>
#include <vector>

#include "solar/sol/analysis.h"

namespace solar {

// A target: seconds per run, with the text it was given as ("2ms", "500Hz").
struct Target {
  double seconds = 0.0;
  double hertz = 0.0;  // 1 / seconds
  std::string text;
};

// "2ms", "500us", "500µs", "1.5s", "250ns", "2 ms" -> seconds. Anything else is a UserError
// (kArgument) naming the accepted forms.
Target parse_latency(const std::string& text);
// "500Hz", "1kHz", "2.5 MHz" -> seconds = 1 / rate. Anything else is a UserError (kArgument).
Target parse_rate(const std::string& text);

// The inverse roofline of one SOL mode.
struct InverseMode {
  std::string mode;  // "unfused" | "fused" | a further mode of GraphSol::mode
  int64_t flops = 0;
  int64_t matrix_flops = 0;
  int64_t vector_flops = 0;
  int64_t bytes = 0;
  double seconds = 0.0;                      // the mode's SOL
  double attainable_hertz = 0.0;             // 1 / seconds (0 if seconds is 0)
  double speedup_required = 0.0;             // seconds / T
  bool met = false;                          // seconds <= T
  double flops_per_second_min = 0.0;         // Pi_min = FLOPs / T
  double matrix_flops_per_second_min = 0.0;  // matrix FLOPs / T
  double vector_flops_per_second_min = 0.0;  // vector FLOPs / T
  double bytes_per_second_min = 0.0;         // beta_min = bytes / T
  // Improvement factors against the platform. compute: Pi_min over the headline matrix
  // peak (Analysis::matrix_flops_per_second), as the paper's Table 4. matrix, vector, dram:
  // the mode's matrix, vector and memory seconds over T, i.e. matrix FLOPs / T over the
  // matrix peak of each MAC's math mode, vector FLOPs / T over the vector peak, beta_min /
  // beta. The platform meets T in a mode when all three are <= 1 (fused) or, for the
  // unfused mode, when speedup_required <= 1 (its bound is a sum of per-node maxima).
  double compute_improvement = 0.0;
  double matrix_improvement = 0.0;
  double vector_improvement = 0.0;
  double dram_improvement = 0.0;
  Bottleneck bottleneck;  // the mode's bottleneck on the platform
};

struct Inverse {
  std::string arch;
  Target target;
  double matrix_flops_per_second = 0.0;  // the platform's peaks the factors compare with
  double vector_flops_per_second = 0.0;
  double dram_bytes_per_second = 0.0;
  std::string math_mode;
  std::vector<InverseMode> modes;  // unfused, fused, then any further mode, in that order
};

// One mode against the platform of `analysis`.
InverseMode inverse_mode(const GraphSol& sol, const Analysis& analysis, const Target& target);
// Every mode of `analysis` (unfused, fused).
Inverse inverse_roofline(const Analysis& analysis, const Target& target);

}  // namespace solar
