// Inverse roofline: the minimum compute and bandwidth a platform needs to meet a target
// time per run, in each SOL mode (include/solar/sol/inverse.h, docs/sol-modes.md).
#include "solar/sol/inverse.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "solar/base/error.h"

namespace solar {
namespace {

const char* kLatencyForms = "a positive number and a unit: 2ms, 500us, 1.5s, 250ns";
const char* kRateForms = "a positive number and a unit: 500Hz, 1kHz, 2.5MHz";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Splits "2.5 ms" into 2.5 and "ms" (unit lower-cased, spaces dropped); false when the text
// does not start with a positive finite number.
bool split_quantity(const std::string& text, double* value, std::string* unit) {
  const char* begin = text.c_str();
  while (*begin == ' ') ++begin;
  char* end = nullptr;
  *value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(*value) || *value <= 0.0) return false;
  std::string rest;
  for (const char* p = end; *p; ++p) {
    if (*p != ' ') rest += *p;
  }
  *unit = lower(rest);
  return true;
}

UserError bad_target(const std::string& option, const std::string& text, const char* forms) {
  return UserError(ErrorKind::kArgument, "", Loc{}, option + " '" + text + "': expected " + forms,
                   "for example " + option + (option == "--rate" ? " 500Hz" : " 2ms"));
}

double ratio(double numerator, double denominator) {
  return denominator > 0.0 ? numerator / denominator : 0.0;
}

}  // namespace

Target parse_latency(const std::string& text) {
  double value = 0.0;
  std::string unit;
  if (!split_quantity(text, &value, &unit)) throw bad_target("--latency", text, kLatencyForms);
  double scale = 0.0;
  if (unit == "s") {
    scale = 1.0;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") {  // us, µs (micro, mu)
    scale = 1e-6;
  } else if (unit == "ns") {
    scale = 1e-9;
  } else {
    throw bad_target("--latency", text, kLatencyForms);
  }
  const double seconds = value * scale;
  return Target{seconds, 1.0 / seconds, text};
}

Target parse_rate(const std::string& text) {
  double value = 0.0;
  std::string unit;
  if (!split_quantity(text, &value, &unit)) throw bad_target("--rate", text, kRateForms);
  double scale = 0.0;
  if (unit == "hz") {
    scale = 1.0;
  } else if (unit == "khz") {
    scale = 1e3;
  } else if (unit == "mhz") {
    scale = 1e6;
  } else {
    throw bad_target("--rate", text, kRateForms);
  }
  const double hertz = value * scale;
  return Target{1.0 / hertz, hertz, text};
}

InverseMode inverse_mode(const GraphSol& sol, const Analysis& analysis, const Target& target) {
  SOLAR_INTERNAL_CHECK(target.seconds > 0.0, "inverse roofline needs a positive target time");
  const double t = target.seconds;
  InverseMode m;
  m.mode = sol.mode;
  m.flops = sol.flops;
  m.matrix_flops = sol.matrix_flops;
  m.vector_flops = sol.vector_flops;
  m.bytes = sol.bytes;
  m.seconds = sol.seconds;
  m.attainable_hertz = sol.seconds > 0.0 ? 1.0 / sol.seconds : 0.0;
  m.speedup_required = sol.seconds / t;
  m.met = sol.seconds <= t;
  m.flops_per_second_min = static_cast<double>(sol.flops) / t;
  m.matrix_flops_per_second_min = static_cast<double>(sol.matrix_flops) / t;
  m.vector_flops_per_second_min = static_cast<double>(sol.vector_flops) / t;
  m.bytes_per_second_min = static_cast<double>(sol.bytes) / t;
  m.compute_improvement = ratio(m.flops_per_second_min, analysis.matrix_flops_per_second);
  m.matrix_improvement = sol.matrix_seconds / t;
  m.vector_improvement = sol.vector_seconds / t;
  m.dram_improvement = sol.memory_seconds / t;
  m.bottleneck = sol.bottleneck;
  return m;
}

Inverse inverse_roofline(const Analysis& analysis, const Target& target) {
  Inverse out;
  out.arch = analysis.arch;
  out.target = target;
  out.matrix_flops_per_second = analysis.matrix_flops_per_second;
  out.vector_flops_per_second = analysis.vector_flops_per_second;
  out.dram_bytes_per_second = analysis.dram_bytes_per_second;
  out.math_mode = analysis.math_mode;
  for (const GraphSol* sol : {&analysis.unfused, &analysis.fused}) {
    out.modes.push_back(inverse_mode(*sol, analysis, target));
  }
  // Cache-aware only where the spec has an on-chip level (Analysis::cache says why not).
  if (analysis.cache.available)
    out.modes.push_back(inverse_mode(analysis.cache_aware, analysis, target));
  return out;
}

}  // namespace solar
