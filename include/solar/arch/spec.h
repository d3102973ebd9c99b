// Architecture specs: peak rates and memory levels of one platform, loaded from
// configs/arch/*.yaml (format: docs/arch-spec.md). All numbers in SI units
// (FLOP/s, bytes/s, bytes); dense rates (no structured sparsity); each cites a source.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "solar/base/dtype.h"

namespace solar {

struct Rate {
  double value = 0.0;  // FLOP/s or bytes/s
  std::string source;  // citation: document, table/section, and how the number was derived
};

struct MemoryLevel {
  std::string name;  // "L2", "SMEM"
  double capacity_bytes = 0.0;
  std::optional<double> bytes_per_second;  // absent when no public source gives it
  std::string source;                      // citation of capacity_bytes
  std::string bytes_per_second_source;     // citation of bytes_per_second ("" if absent)
};

struct ArchSpec {
  std::string name;         // "H100_PCIe"
  std::string description;  // "NVIDIA H100 PCIe 80GB"
  std::string file;         // where it was loaded from ("" if built in code)
  std::string notes;
  // Matrix (tensor-core) peak per math mode: keys fp64 tf32 fp32 bf16 fp16 fp8 fp4 int8.
  std::map<std::string, Rate> matrix_flops_per_second;
  // Accumulate type ("fp32" or "fp16") each fp16, bf16, fp8 and fp4 matrix rate is for (the
  // loader requires it for those modes): GeForce tensor cores run fp16/bf16 MACs with fp32
  // accumulate at half their fp16-accumulate rate, so the rate depends on it.
  std::map<std::string, std::string> matrix_accumulate;
  // Vector (CUDA-core / SIMD) peak per dtype: keys fp64 fp32 fp16 bf16.
  std::map<std::string, Rate> vector_flops_per_second;
  Rate dram_bytes_per_second;
  std::optional<double> dram_capacity_bytes;
  std::string dram_capacity_source;  // citation of dram_capacity_bytes
  std::vector<MemoryLevel> on_chip;  // innermost last; cache_aware uses `cache_level`
  std::string cache_level;           // name of the level the cache-aware mode uses
                                     // (default: the first on_chip level; "" if none)
  // Math mode that mainstream frameworks use by default for fp32 contractions on this
  // platform ("tf32" on NVIDIA Ampere and later, else "fp32").
  std::string fp32_matrix_mode = "fp32";
  // What the peaks are, as the spec file states them (the loader requires both):
  // `sparsity` is "dense" (no 2:4 structured sparsity; the only accepted value) and
  // `clock` the clock the rates are quoted at: "boost" (the vendor's boost/peak clock),
  // "measured" (the clock read on this machine: the local spec) or "assumed" (a clock a
  // model assumes, not a vendor figure). "" for a spec built in code.
  std::string sparsity;
  std::string clock;
};

// Loads and validates a spec file. A missing, negative or unknown field is a UserError
// (kind kSpec) naming the field and the file.
ArchSpec load_arch_spec(const std::string& path);
// Parses a spec from YAML text; `file` is used in messages.
ArchSpec parse_arch_spec(const std::string& yaml_text, const std::string& file);

// Resolves NAME or PATH: a path to a .yaml file, or the name of a spec in `search_dir`
// (case-insensitive, e.g. "h100_pcie"). Unknown names are a UserError (kArgument) that
// lists the available names.
ArchSpec resolve_arch(const std::string& name_or_path, const std::string& search_dir);
// Names of the specs in `search_dir`, sorted.
std::vector<std::string> list_arch_names(const std::string& search_dir);

}  // namespace solar
