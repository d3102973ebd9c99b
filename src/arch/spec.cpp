// Loader and validator of architecture specs (format: docs/arch-spec.md).
//
// One pass over the YAML tree collects every problem (unknown, missing, mistyped or
// non-positive field; dangling source key or cache level) into a DiagnosticSink, each with
// the field's dotted path and the line:col of the YAML node, and throws them together.
#include "solar/arch/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/strings.h"
#include "solar/base/error.h"

namespace solar {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kTopKeys = {"name",
                                           "description",
                                           "notes",
                                           "sparsity",
                                           "clock",
                                           "sources",
                                           "fp32_matrix_mode",
                                           "matrix_flops_per_second",
                                           "vector_flops_per_second",
                                           "dram",
                                           "on_chip",
                                           "cache_level"};
const std::vector<std::string> kMatrixKeys = {"fp64", "tf32", "fp32", "bf16", "fp16",
                                              "fp8",  "fp6",  "fp4",  "int8"};
const std::vector<std::string> kVectorKeys = {"fp64", "fp32", "fp16", "bf16"};
const std::vector<std::string> kRateKeys = {"value", "source", "derivation"};
// Matrix modes whose rate depends on the accumulate type (GeForce tensor cores run fp16 and
// bf16 MACs with fp32 accumulate at half the fp16-accumulate rate): their rates must say
// which one they are for.
const std::vector<std::string> kAccumulateModes = {"bf16", "fp16", "fp8", "fp6", "fp4"};
const std::vector<std::string> kAccumulateRateKeys = {"value", "source", "derivation",
                                                      "accumulate"};
const std::vector<std::string> kAccumulateTypes = {"fp32", "fp16"};
const std::vector<std::string> kClockBases = {"boost", "measured", "assumed"};
const std::vector<std::string> kDramKeys = {"bytes_per_second", "capacity_bytes"};
const std::vector<std::string> kLevelKeys = {"name", "capacity_bytes", "bytes_per_second"};

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

Loc loc_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {};
  return {static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1)};
}

Loc loc_of(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1)};
}

// A source is a key of `sources:` when it is one word of letters, digits and '_';
// anything else (a phrase) is a literal citation.
bool is_source_key(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// The code points a spec string may not carry, since names and citations are printed to the
// terminal: C0 controls (ESC starts escape sequences, BEL rings, NUL truncates), DEL, C1
// controls, and the Unicode bidirectional controls that reorder what is shown (U+061C,
// U+200E/F, U+202A-U+202E, U+2066-U+2069). Free text may keep tab and line breaks.
bool is_unsafe_code_point(char32_t cp, bool free_text) {
  if (free_text && (cp == '\t' || cp == '\n')) return false;
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// The code points of UTF-8 `text` (checked UTF-8: parse_arch_spec refuses other bytes, and
// YAML escapes decode to UTF-8), each with its byte offset and length.
template <typename Visit>
void each_code_point(std::string_view text, Visit&& visit) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    char32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n && i + k < text.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    visit(cp, i, std::min(n, text.size() - i));
    i += n;
  }
}

std::string code_point_name(char32_t cp) {
  char out[16];
  std::snprintf(out, sizeof out, "U+%04X", static_cast<unsigned>(cp));
  return out;
}

// The first code point of `text` that may not reach a terminal, named and described
// ("U+001B, a control character"); nullopt when there is none.
std::optional<std::string> unsafe_character(std::string_view text, bool free_text) {
  std::optional<std::string> found;
  each_code_point(text, [&](char32_t cp, size_t, size_t) {
    if (found || !is_unsafe_code_point(cp, free_text)) return;
    found = code_point_name(cp) +
            (cp <= 0x9F ? ", a control character" : ", a bidirectional text control");
  });
  return found;
}

// `text` with every code point that may not reach a terminal written as <U+XXXX> (line
// breaks kept): for messages that quote what a spec says.
std::string shown(std::string_view text) {
  std::string out;
  each_code_point(text, [&](char32_t cp, size_t at, size_t n) {
    if (is_unsafe_code_point(cp, /*free_text=*/cp == '\n')) {
      out += "<" + code_point_name(cp) + ">";
    } else {
      out.append(text.substr(at, n));
    }
  });
  return out;
}

// The physical floors of spec numbers. A rate (FLOP/s or bytes/s) is at least 1 per second:
// every count Solar divides by one is below 2^63, so every time it prints is then finite
// (under 2^63 s), where a denormal rate (1e-320) made it infinite; no processor or memory
// is slower than one operation or byte per second. A capacity is a whole number of bytes, at
// least one: a memory holds bytes, and a fractional or empty level is no memory.
constexpr double kMinRate = 1.0;
constexpr double kMinCapacityBytes = 1.0;

// Parses a whole scalar as a finite double ("2.0e12", "+1e9"); nullopt otherwise.
std::optional<double> parse_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0.0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Walks one spec document; every check reports into `sink_` and parsing goes on.
class SpecParser {
 public:
  explicit SpecParser(const std::string& file) : sink_(file) {}

  ArchSpec parse(const YAML::Node& root) {
    ArchSpec spec;
    if (!root.IsMap()) {
      sink_.error(ErrorKind::kSpec, loc_of(root), "an architecture spec must be a YAML mapping",
                  "start from one of configs/arch/*.yaml (format: docs/arch-spec.md)");
      sink_.throw_if_any();
    }
    check_keys(root, "", kTopKeys);
    parse_sources(root["sources"]);

    if (auto name = string_field(root, "", "name", /*required=*/true)) spec.name = *name;
    if (auto text = string_field(root, "", "description", false)) spec.description = *text;
    if (auto text = string_field(root, "", "notes", false)) spec.notes = *text;
    parse_peak_basis(root, spec);

    spec.matrix_flops_per_second =
        parse_rate_map(root, "matrix_flops_per_second", kMatrixKeys, &spec.matrix_accumulate);
    spec.vector_flops_per_second =
        parse_rate_map(root, "vector_flops_per_second", kVectorKeys, nullptr);
    const YAML::Node matrix = root["matrix_flops_per_second"];
    if (matrix && matrix.IsMap() && matrix.size() == 0) {
      sink_.error(ErrorKind::kSpec, loc_of(matrix),
                  "field 'matrix_flops_per_second' must list at least one math mode",
                  "keys: " + join(kMatrixKeys, ", "));
    }
    const YAML::Node vector = root["vector_flops_per_second"];
    if (vector && vector.IsMap() && !vector["fp32"]) {
      sink_.error(ErrorKind::kSpec, loc_of(vector),
                  "field 'vector_flops_per_second.fp32' is missing",
                  "every spec needs the fp32 vector (CUDA-core / SIMD) peak");
    }
    parse_dram(root, spec);
    parse_on_chip(root, spec);
    check_dram_capacity(root, spec);
    parse_fp32_mode(root, spec);
    parse_cache_level(root, spec);
    sink_.throw_if_any();
    return spec;
  }

 private:
  // Every message and hint quotes spec text through shown(): nothing a spec says reaches
  // the terminal raw.
  void error(const YAML::Node& node, const std::string& message, const std::string& hint = "") {
    sink_.error(ErrorKind::kSpec, loc_of(node), shown(message), shown(hint));
  }

  // False (and an error at the node) when `text`, the value of `field`, carries a code point
  // that may not reach a terminal; `free_text` (descriptions, citations) may keep tab and
  // line breaks.
  bool printable(const YAML::Node& node, const std::string& field, const std::string& text,
                 bool free_text) {
    const auto bad = unsafe_character(text, free_text);
    if (!bad) return true;
    error(node, "field '" + field + "' contains " + *bad,
          "spec text is printed to the terminal: write it without control characters "
          "(escape codes, BEL, NUL) or bidirectional controls (U+202E)");
    return false;
  }

  // Reports keys of `node` not in `allowed`, and keys written twice.
  void check_keys(const YAML::Node& node, const std::string& path,
                  const std::vector<std::string>& allowed, const std::string& note = "") {
    std::set<std::string> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const std::string field = child_path(path, key);
      if (!seen.insert(key).second) {
        error(it->first, "field '" + field + "' is written twice");
      } else if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        error(it->first, "unknown field '" + field + "'",
              "allowed here: " + join(allowed, ", ") + (note.empty() ? "" : " (" + note + ")"));
      }
    }
  }

  bool require_map(const YAML::Node& node, const std::string& path) {
    if (node.IsMap()) return true;
    error(node, "field '" + path + "' must be a mapping");
    return false;
  }

  std::optional<std::string> string_field(const YAML::Node& parent, const std::string& path,
                                          const std::string& key, bool required) {
    const YAML::Node node = parent[key];
    const std::string field = child_path(path, key);
    if (!node) {
      if (required) error(parent, "field '" + field + "' is missing");
      return std::nullopt;
    }
    if (!node.IsScalar() || node.Scalar().empty()) {
      error(node, "field '" + field + "' must be a non-empty string");
      return std::nullopt;
    }
    const bool free_text = key == "description" || key == "notes";
    if (!printable(node, field, node.Scalar(), free_text)) return std::nullopt;
    return node.Scalar();
  }

  void parse_sources(const YAML::Node& node) {
    if (!node || !require_map(node, "sources")) return;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (!is_source_key(key)) {
        error(it->first, "source key 'sources." + key + "' must be one word",
              "use letters, digits and '_', e.g. datasheet or hopper_whitepaper");
      } else if (!it->second.IsScalar() || it->second.Scalar().empty()) {
        error(it->second, "field 'sources." + key + "' must be a citation string");
      } else if (!printable(it->second, "sources." + key, it->second.Scalar(), true)) {
        sources_.emplace(key, "");  // refused, yet defined: its citers get no second error
      } else if (!sources_.emplace(key, it->second.Scalar()).second) {
        error(it->first, "field 'sources." + key + "' is written twice");
      }
    }
  }

  // `sparsity: dense` and `clock: boost|measured|assumed`: what the peaks are. Both are
  // required, so a spec cannot leave open whether its rates are sparse or base-clock
  // figures (either would make the bound beatable).
  void parse_peak_basis(const YAML::Node& root, ArchSpec& spec) {
    if (!root["sparsity"]) {
      error(root, "field 'sparsity' is missing",
            "write 'sparsity: dense' once every rate is a dense peak (halve vendors' 2:4 "
            "structured-sparsity figures)");
    } else if (auto text = string_field(root, "", "sparsity", false)) {
      if (*text == "dense") {
        spec.sparsity = *text;
      } else {
        error(root["sparsity"], "field 'sparsity' must be 'dense', got '" + *text + "'",
              "a bound needs dense peaks: halve the vendor's sparse figures and write "
              "'sparsity: dense'");
      }
    }
    if (!root["clock"]) {
      error(root, "field 'clock' is missing",
            "write 'clock: boost' when the rates are the vendor's boost-clock peaks (" +
                join(kClockBases, ", ") + ")");
    } else if (auto text = string_field(root, "", "clock", false)) {
      if (std::find(kClockBases.begin(), kClockBases.end(), *text) != kClockBases.end()) {
        spec.clock = *text;
      } else {
        error(root["clock"],
              "field 'clock' must be one of " + join(kClockBases, ", ") + ", got '" + *text + "'",
              *text == "base" ? "base-clock rates are below the peak the chip reaches, so a "
                                "bound from them can be beaten; use the boost-clock rates"
                              : "boost: the vendor's boost-clock peaks; measured: read on this "
                                "machine; assumed: a clock a model assumes");
      }
    }
  }

  // A positive number with its citation: {value, source, derivation?}, at least the
  // physical floor of its `quantity` (kMinRate, kMinCapacityBytes); with `accumulate_out`
  // (matrix fp16/bf16/fp8/fp4 rates) also a required accumulate type, stored there.
  enum class Quantity { kRate, kCapacity };
  std::optional<Rate> parse_rate(const YAML::Node& node, const std::string& path, Quantity quantity,
                                 std::string* accumulate_out = nullptr) {
    const bool with_accumulate = accumulate_out != nullptr;
    if (!node.IsMap()) {
      error(node, "field '" + path + "' must be a mapping {value, source}",
            "every number cites its source, e.g. {value: 2.0e12, source: datasheet}");
      return std::nullopt;
    }
    check_keys(node, path, with_accumulate ? kAccumulateRateKeys : kRateKeys,
               with_accumulate ? ""
                               : (path.rfind("matrix_flops_per_second.", 0) == 0
                                      ? "accumulate is stated for the " +
                                            join(kAccumulateModes, ", ") + " matrix rates"
                                      : ""));
    Rate rate;
    bool ok = true;
    const YAML::Node value = node["value"];
    if (!value) {
      error(node, "field '" + path + ".value' is missing");
      ok = false;
    } else if (!value.IsScalar()) {
      error(value, "field '" + path + ".value' must be a number");
      ok = false;
    } else if (auto number = parse_number(value.Scalar()); !number) {
      error(value, "field '" + path + ".value' must be a number, got '" + value.Scalar() + "'",
            "write SI units as a plain number, e.g. 2.0e12 for 2 TB/s");
      ok = false;
    } else if (*number <= 0.0) {
      error(value, "field '" + path + ".value' must be positive, got " + value.Scalar());
      ok = false;
    } else if (quantity == Quantity::kRate && *number < kMinRate) {
      error(value,
            "field '" + path + ".value' must be at least 1 per second, got " + value.Scalar(),
            "rates are FLOP/s or bytes/s in SI units (2.0e12 for 2 TB/s); no hardware is slower "
            "than 1/s, and a smaller rate makes the times Solar prints infinite");
      ok = false;
    } else if (quantity == Quantity::kCapacity &&
               (*number < kMinCapacityBytes || *number != std::floor(*number))) {
      error(value,
            "field '" + path + ".value' must be a whole number of bytes, at least 1, got " +
                value.Scalar(),
            "capacities are bytes in SI units, e.g. 52.4288e6 for 50 MiB");
      ok = false;
    } else {
      rate.value = *number;
    }
    const YAML::Node source = node["source"];
    if (!source) {
      error(node, "field '" + path + ".source' is missing",
            "cite the document, table or section, e.g. source: datasheet");
      ok = false;
    } else if (!source.IsScalar() || source.Scalar().empty()) {
      error(source, "field '" + path + ".source' must be a string");
      ok = false;
    } else if (!printable(source, path + ".source", source.Scalar(), true)) {
      ok = false;
    } else if (is_source_key(source.Scalar())) {
      auto found = sources_.find(source.Scalar());
      if (found == sources_.end()) {
        std::vector<std::string> keys;
        for (const auto& [key, text] : sources_) keys.push_back(key);
        error(source,
              "field '" + path + ".source' names source '" + source.Scalar() +
                  "', which is not in 'sources'",
              keys.empty() ? "add it under 'sources:', or write the citation itself"
                           : "defined sources: " + join(keys, ", ") +
                                 "; or write the citation itself (a phrase)");
        ok = false;
      } else {
        rate.source = found->second;
      }
    } else {
      rate.source = source.Scalar();
    }
    const YAML::Node derivation = node["derivation"];
    if (derivation) {
      if (!derivation.IsScalar()) {
        error(derivation, "field '" + path + ".derivation' must be a string");
        ok = false;
      } else if (!printable(derivation, path + ".derivation", derivation.Scalar(), true)) {
        ok = false;
      } else if (!derivation.Scalar().empty()) {
        rate.source += "; " + derivation.Scalar();
      }
    }
    if (with_accumulate) {
      const YAML::Node accumulate = node["accumulate"];
      if (!accumulate) {
        error(node, "field '" + path + ".accumulate' is missing",
              "say which accumulate type the rate is for, e.g. accumulate: fp32 (GeForce cards "
              "run fp16/bf16 MACs with fp32 accumulate at half the fp16-accumulate rate)");
        ok = false;
      } else if (!accumulate.IsScalar() ||
                 std::find(kAccumulateTypes.begin(), kAccumulateTypes.end(), accumulate.Scalar()) ==
                     kAccumulateTypes.end()) {
        error(accumulate, "field '" + path + ".accumulate' must be one of " +
                              join(kAccumulateTypes, ", ") + ", got '" +
                              (accumulate.IsScalar() ? accumulate.Scalar() : "a non-string") + "'");
        ok = false;
      } else {
        *accumulate_out = accumulate.Scalar();
      }
    }
    return ok ? std::optional<Rate>(rate) : std::nullopt;
  }

  // `accumulate` receives the accumulate type of the modes that need one (matrix rates).
  std::map<std::string, Rate> parse_rate_map(const YAML::Node& root, const std::string& key,
                                             const std::vector<std::string>& allowed,
                                             std::map<std::string, std::string>* accumulate) {
    std::map<std::string, Rate> rates;
    const YAML::Node node = root[key];
    if (!node) {
      error(root, "field '" + key + "' is missing", "keys: " + join(allowed, ", "));
      return rates;
    }
    if (!require_map(node, key)) return rates;
    check_keys(node, key, allowed,
               key == "matrix_flops_per_second"
                   ? "fp8 covers fp8_e4m3 and fp8_e5m2, fp4 covers nvfp4, int8 covers int8, "
                     "uint8 and int4"
                   : "");
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string mode = it->first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), mode) == allowed.end()) continue;
      const bool needs_accumulate =
          accumulate != nullptr && std::find(kAccumulateModes.begin(), kAccumulateModes.end(),
                                             mode) != kAccumulateModes.end();
      std::string type;
      if (auto rate = parse_rate(it->second, key + "." + mode, Quantity::kRate,
                                 needs_accumulate ? &type : nullptr)) {
        rates.emplace(mode, *rate);
        if (needs_accumulate) accumulate->emplace(mode, type);
      }
    }
    return rates;
  }

  void parse_dram(const YAML::Node& root, ArchSpec& spec) {
    const YAML::Node node = root["dram"];
    if (!node) {
      error(root, "field 'dram' is missing", "dram: {bytes_per_second: {value, source}}");
      return;
    }
    if (!require_map(node, "dram")) return;
    check_keys(node, "dram", kDramKeys);
    if (!node["bytes_per_second"]) {
      error(node, "field 'dram.bytes_per_second' is missing");
    } else if (auto rate =
                   parse_rate(node["bytes_per_second"], "dram.bytes_per_second", Quantity::kRate)) {
      spec.dram_bytes_per_second = *rate;
    }
    if (node["capacity_bytes"]) {
      if (auto rate =
              parse_rate(node["capacity_bytes"], "dram.capacity_bytes", Quantity::kCapacity)) {
        spec.dram_capacity_bytes = rate->value;
        spec.dram_capacity_source = rate->source;
      }
    }
  }

  void parse_on_chip(const YAML::Node& root, ArchSpec& spec) {
    const YAML::Node node = root["on_chip"];
    if (!node) return;
    if (!node.IsSequence()) {
      error(node, "field 'on_chip' must be a list of levels",
            "on_chip:\n    - {name: L2, capacity_bytes: {value: 50.0e6, source: datasheet}}");
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const YAML::Node level = node[i];
      const std::string path = "on_chip[" + std::to_string(i) + "]";
      if (!require_map(level, path)) continue;
      check_keys(level, path, kLevelKeys);
      MemoryLevel out;
      if (auto name = string_field(level, path, "name", true)) {
        out.name = *name;
        for (const MemoryLevel& other : spec.on_chip) {
          if (other.name == out.name) {
            error(level["name"], "field '" + path + ".name' repeats level '" + out.name + "'");
          }
        }
      }
      if (!level["capacity_bytes"]) {
        error(level, "field '" + path + ".capacity_bytes' is missing");
      } else if (auto rate = parse_rate(level["capacity_bytes"], path + ".capacity_bytes",
                                        Quantity::kCapacity)) {
        out.capacity_bytes = rate->value;
        out.source = rate->source;
      }
      if (level["bytes_per_second"]) {
        if (auto rate = parse_rate(level["bytes_per_second"], path + ".bytes_per_second",
                                   Quantity::kRate)) {
          out.bytes_per_second = rate->value;
          out.bytes_per_second_source = rate->source;
        }
      }
      spec.on_chip.push_back(std::move(out));
    }
  }

  // DRAM backs every on-chip level (they stage what it holds): a DRAM smaller than one of
  // them (a 1-byte DRAM beside a 50 MB L2) is no memory hierarchy.
  void check_dram_capacity(const YAML::Node& root, const ArchSpec& spec) {
    if (!spec.dram_capacity_bytes) return;
    for (size_t i = 0; i < spec.on_chip.size(); ++i) {
      const MemoryLevel& level = spec.on_chip[i];
      if (*spec.dram_capacity_bytes >= level.capacity_bytes) continue;
      const YAML::Node dram = root["dram"]["capacity_bytes"]["value"];
      const YAML::Node on_chip = root["on_chip"][i]["capacity_bytes"]["value"];
      error(dram,
            "field 'dram.capacity_bytes.value' (" + dram.Scalar() + ") is below on-chip level '" +
                level.name + "' (" + on_chip.Scalar() + " bytes)",
            "DRAM holds everything the on-chip levels stage, so it is at least as large as "
            "each of them; check the units (bytes)");
      return;
    }
  }

  void parse_fp32_mode(const YAML::Node& root, ArchSpec& spec) {
    const YAML::Node node = root["fp32_matrix_mode"];
    if (!node) return;  // default "fp32"
    auto mode = string_field(root, "", "fp32_matrix_mode", false);
    if (!mode) return;
    if (std::find(kMatrixKeys.begin(), kMatrixKeys.end(), *mode) == kMatrixKeys.end()) {
      error(node, "field 'fp32_matrix_mode' must name a math mode, got '" + *mode + "'",
            "usually tf32 (NVIDIA Ampere and later) or fp32");
      return;
    }
    spec.fp32_matrix_mode = *mode;
    // fp32 always has a rate: without a matrix fp32 entry it uses the vector fp32 peak.
    const YAML::Node matrix = root["matrix_flops_per_second"];
    const bool has_rate = *mode == "fp32" || (matrix && matrix.IsMap() && matrix[*mode]);
    if (!has_rate) {
      error(node,
            "field 'fp32_matrix_mode' is '" + *mode + "' but 'matrix_flops_per_second." + *mode +
                "' is missing",
            "add the " + *mode + " rate, or write fp32_matrix_mode: fp32");
    }
  }

  void parse_cache_level(const YAML::Node& root, ArchSpec& spec) {
    if (!root["cache_level"]) {
      if (!spec.on_chip.empty()) spec.cache_level = spec.on_chip.front().name;
      return;
    }
    auto level = string_field(root, "", "cache_level", false);
    if (!level) return;
    std::vector<std::string> names;
    for (const MemoryLevel& l : spec.on_chip) names.push_back(l.name);
    if (std::find(names.begin(), names.end(), *level) == names.end()) {
      error(root["cache_level"],
            "field 'cache_level' names '" + *level + "', which is not an on_chip level",
            names.empty() ? "list the level under 'on_chip:' first"
                          : "on_chip levels: " + join(names, ", "));
      return;
    }
    spec.cache_level = *level;
  }

  DiagnosticSink sink_;
  std::map<std::string, std::string> sources_;
};

bool is_spec_file(const fs::path& path) {
  const std::string ext = lower(path.extension().string());
  return ext == ".yaml" || ext == ".yml";
}

}  // namespace

namespace {

// Where `text` first stops being UTF-8 text (a NUL, or a byte sequence that is not UTF-8),
// as a 1-based line and column; nullopt when all of it is.
std::optional<std::pair<Loc, unsigned char>> first_non_utf8(const std::string& text) {
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = c != 0 && n != 0 && i + n <= text.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (!ok) return std::make_pair(Loc{line, col}, c);
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    i += n;
  }
  return std::nullopt;
}

}  // namespace

ArchSpec parse_arch_spec(const std::string& yaml_text, const std::string& file) {
  if (const auto bad = first_non_utf8(yaml_text)) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", bad->second);
    throw UserError(ErrorKind::kSpec, file, bad->first,
                    std::string("the spec is not UTF-8 text (byte ") + byte + ")",
                    "save the file as UTF-8 (a spec is YAML text, docs/arch-spec.md)");
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw UserError(ErrorKind::kSpec, file, loc_of(e.mark), "YAML syntax error: " + e.msg,
                    "check indentation and that every '{' and '[' is closed");
  }
  if (!root || root.IsNull()) {
    throw UserError(ErrorKind::kIo, file, Loc{}, "architecture spec is empty",
                    "start from one of configs/arch/*.yaml (format: docs/arch-spec.md)");
  }
  ArchSpec spec = SpecParser(file).parse(root);
  spec.file = file;
  return spec;
}

ArchSpec load_arch_spec(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw UserError(
        ErrorKind::kIo, path, Loc{}, "cannot read architecture spec '" + path + "'",
        "no such file; pass the name of a spec in configs/arch or a path to a .yaml file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError(ErrorKind::kIo, path, Loc{}, "cannot open architecture spec '" + path + "'");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_arch_spec(text.str(), path);
}

std::vector<std::string> list_arch_names(const std::string& search_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(search_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && is_spec_file(it->path())) {
      names.push_back(it->path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

ArchSpec resolve_arch(const std::string& name_or_path, const std::string& search_dir) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || is_spec_file(fs::path(name_or_path));
  if (is_path) return load_arch_spec(name_or_path);
  const std::vector<std::string> names = list_arch_names(search_dir);
  for (const std::string& name : names) {
    if (lower(name) == lower(name_or_path)) {
      for (const char* ext : {".yaml", ".yml"}) {
        const fs::path path = fs::path(search_dir) / (name + ext);
        std::error_code ec;
        if (fs::is_regular_file(path, ec)) return load_arch_spec(path.string());
      }
    }
  }
  throw UserError(ErrorKind::kArgument, "", Loc{}, "unknown architecture '" + name_or_path + "'",
                  names.empty()
                      ? "no specs found in '" + search_dir + "'; pass a path to a .yaml spec"
                      : "available: " + join(names, ", ") + "; or pass a path to a .yaml spec");
}

}  // namespace solar
