// Architecture specs: every shipped spec loads with the numbers its sources give, and
// every malformed spec is a UserError naming the field (docs/arch-spec.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "solar/arch/spec.h"
#include "solar/base/error.h"

namespace solar {
namespace {

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";

ArchSpec load(const std::string& name) { return load_arch_spec(kArchDir + "/" + name + ".yaml"); }

// Parses `yaml` and returns the UserError it must raise.
UserError parse_error(const std::string& yaml) {
  try {
    parse_arch_spec(yaml, "bad.yaml");
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no UserError for:\n" << yaml;
  return UserError(ErrorKind::kSpec, "", Loc{}, "(none)");
}

// Expects a kSpec error whose message contains `message` (and whose hint contains `hint`).
void expect_spec_error(const std::string& yaml, const std::string& message,
                       const std::string& hint = "") {
  const UserError e = parse_error(yaml);
  EXPECT_EQ(e.kind(), ErrorKind::kSpec) << e.what();
  bool found = false;
  for (const Diagnostic& d : e.diagnostics()) {
    if (d.message.find(message) != std::string::npos && d.hint.find(hint) != std::string::npos) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << "wanted message '" << message << "' hint '" << hint << "', got:\n"
                     << e.what();
}

// A minimal valid spec; the error tests each break one thing of it.
const char* kValid = R"(name: tiny
sparsity: dense
clock: boost
sources:
  sheet: "Tiny datasheet, table 1"
matrix_flops_per_second:
  bf16: {value: 4.0e12, source: sheet, accumulate: fp32}
vector_flops_per_second:
  fp32: {value: 1.0e12, source: sheet}
dram:
  bytes_per_second: {value: 1.0e11, source: sheet}
)";

TEST(ArchSpec, MinimalSpecParses) {
  const ArchSpec spec = parse_arch_spec(kValid, "tiny.yaml");
  EXPECT_EQ(spec.name, "tiny");
  EXPECT_EQ(spec.file, "tiny.yaml");
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_second.at("bf16").value, 4.0e12);
  // A source key resolves to the citation text of `sources:`.
  EXPECT_EQ(spec.matrix_flops_per_second.at("bf16").source, "Tiny datasheet, table 1");
  EXPECT_EQ(spec.fp32_matrix_mode, "fp32");  // default
  EXPECT_EQ(spec.sparsity, "dense");
  EXPECT_EQ(spec.clock, "boost");
  EXPECT_EQ(spec.matrix_accumulate.at("bf16"), "fp32");
  EXPECT_TRUE(spec.on_chip.empty());
  EXPECT_EQ(spec.cache_level, "");
  EXPECT_FALSE(spec.dram_capacity_bytes.has_value());
}

TEST(ArchSpec, LiteralCitationDerivationAndDefaultCacheLevel) {
  const ArchSpec spec = parse_arch_spec(R"(name: t
sparsity: dense
clock: measured
matrix_flops_per_second:
  tf32: {value: 2.0e12, source: "Sheet p.3", derivation: "4.0 sparse / 2"}
vector_flops_per_second:
  fp32: {value: 1.0e12, source: "Sheet p.3"}
dram:
  bytes_per_second: {value: 1.0e11, source: "Sheet p.4"}
  capacity_bytes: {value: 8.0e9, source: "Sheet p.4"}
on_chip:
  - {name: L2, capacity_bytes: {value: 4.0e6, source: "Sheet p.5"}}
  - name: SMEM
    capacity_bytes: {value: 1.0e6, source: "Sheet p.5"}
    bytes_per_second: {value: 1.0e13, source: "Sheet p.6"}
fp32_matrix_mode: tf32
)",
                                        "t.yaml");
  // A phrase is the citation itself; the derivation follows it after "; ".
  EXPECT_EQ(spec.matrix_flops_per_second.at("tf32").source, "Sheet p.3; 4.0 sparse / 2");
  EXPECT_EQ(spec.fp32_matrix_mode, "tf32");
  EXPECT_EQ(spec.clock, "measured");
  EXPECT_TRUE(spec.matrix_accumulate.empty());  // tf32 states none
  ASSERT_EQ(spec.on_chip.size(), 2u);
  EXPECT_EQ(spec.cache_level, "L2");  // default: the first on_chip level
  EXPECT_FALSE(spec.on_chip[0].bytes_per_second.has_value());
  EXPECT_DOUBLE_EQ(*spec.on_chip[1].bytes_per_second, 1.0e13);
  EXPECT_EQ(spec.on_chip[1].bytes_per_second_source, "Sheet p.6");
  EXPECT_DOUBLE_EQ(*spec.dram_capacity_bytes, 8.0e9);
  EXPECT_EQ(spec.dram_capacity_source, "Sheet p.4");
}

// --- every shipped spec ------------------------------------------------------------------

TEST(ArchSpec, ListsShippedSpecsSorted) {
  const std::vector<std::string> names = list_arch_names(kArchDir);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* name : {"A100_PCIe_40GB",
                           "A100_PCIe_80GB",
                           "A100_SXM",
                           "A100_SXM_40GB",
                           "A10G",
                           "B200",
                           "GB200",
                           "H100_PCIe",
                           "H100_PCIe_paper",
                           "H100_SXM",
                           "H200_SXM",
                           "Jetson_Thor",
                           "L4",
                           "L40S",
                           "MI250X",
                           "MI300X",
                           "MI325X",
                           "RTX_4090",
                           "RTX_A6000",
                           "T4"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(ArchSpec, EveryShippedSpecLoadsAndCitesEveryNumber) {
  for (const std::string& name : list_arch_names(kArchDir)) {
    SCOPED_TRACE(name);
    const ArchSpec spec = load(name);
    EXPECT_EQ(spec.name, name);  // the name field matches the file name
    EXPECT_FALSE(spec.description.empty());
    EXPECT_FALSE(spec.matrix_flops_per_second.empty());
    ASSERT_TRUE(spec.vector_flops_per_second.count("fp32"));
    for (const auto& [mode, rate] : spec.matrix_flops_per_second) {
      EXPECT_GT(rate.value, 0.0) << mode;
      EXPECT_FALSE(rate.source.empty()) << mode;
    }
    for (const auto& [dtype, rate] : spec.vector_flops_per_second) {
      EXPECT_FALSE(rate.source.empty()) << dtype;
    }
    EXPECT_GT(spec.dram_bytes_per_second.value, 0.0);
    EXPECT_FALSE(spec.dram_bytes_per_second.source.empty());
    for (const MemoryLevel& level : spec.on_chip) EXPECT_FALSE(level.source.empty());
    // The platform's fp32 math mode has a rate (fp32 falls back to the vector rate).
    EXPECT_TRUE(spec.fp32_matrix_mode == "fp32" ||
                spec.matrix_flops_per_second.count(spec.fp32_matrix_mode));
    // What the peaks are: dense, at a stated clock, and for a stated accumulate type.
    EXPECT_EQ(spec.sparsity, "dense");
    EXPECT_TRUE(spec.clock == "boost" || spec.clock == "assumed") << spec.clock;
    for (const char* mode : {"bf16", "fp16", "fp8", "fp4"}) {
      if (spec.matrix_flops_per_second.count(mode)) {
        EXPECT_TRUE(spec.matrix_accumulate.count(mode)) << mode;
      }
    }
    // Every shipped spec has an on-chip level for the cache-aware mode unless its notes say
    // why not (B200 and GB200: no vendor document states the L2 size).
    if (spec.on_chip.empty()) {
      EXPECT_NE(spec.notes.find("no on-chip level"), std::string::npos);
    } else {
      EXPECT_FALSE(spec.cache_level.empty());
    }
  }
}

TEST(ArchSpec, H100PcieDatasheetNumbers) {
  const ArchSpec spec = load("H100_PCIe");
  // Hopper whitepaper, H100 PCIe: dense TF32 378, BF16/FP16 756, FP8 1513 TFLOPS;
  // FP32 non-tensor 51.2 TFLOPS. Datasheet: 2 TB/s, 80 GB, L2 50 MB (= 50 x 2^20 bytes).
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_second.at("tf32").value, 378.0e12);
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_second.at("bf16").value, 756.0e12);
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_second.at("fp8").value, 1513.0e12);
  EXPECT_DOUBLE_EQ(spec.vector_flops_per_second.at("fp32").value, 51.2e12);
  EXPECT_DOUBLE_EQ(spec.dram_bytes_per_second.value, 2.0e12);
  EXPECT_EQ(spec.fp32_matrix_mode, "tf32");
  // On chip: the L2 first (the cache-aware level), then per SM x 114 SMs (CUDA C++
  // Programming Guide, compute capability 9.0): 256 KiB unified L1/shared memory, an 8 KiB
  // constant-cache working set, 64 K 32-bit registers = 256 KiB.
  ASSERT_EQ(spec.on_chip.size(), 4u);
  EXPECT_DOUBLE_EQ(spec.on_chip[0].capacity_bytes, 50.0 * 1024 * 1024);
  EXPECT_EQ(spec.cache_level, "L2");
  EXPECT_EQ(spec.on_chip[1].name, "L1_SMEM");
  EXPECT_DOUBLE_EQ(spec.on_chip[1].capacity_bytes, 114 * 256.0 * 1024);
  EXPECT_EQ(spec.on_chip[2].name, "CONST");
  EXPECT_DOUBLE_EQ(spec.on_chip[2].capacity_bytes, 114 * 8.0 * 1024);
  EXPECT_EQ(spec.on_chip[3].name, "RF");
  EXPECT_DOUBLE_EQ(spec.on_chip[3].capacity_bytes, 114 * 65536 * 4.0);
  EXPECT_NE(spec.matrix_flops_per_second.at("tf32").source.find("H100 PCIe column"),
            std::string::npos);
}

TEST(ArchSpec, PaperSpecReproducesFigure2Rates) {
  const ArchSpec spec = load("H100_PCIe_paper");
  // fp32: 25,500 "MAC/cycle" x 2 GHz = 51e12 MAC/s, x 2 FLOP/MAC = 102e12 FLOP/s.
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_second.at("fp32").value, 25500.0 * 2e9 * 2);
  EXPECT_DOUBLE_EQ(spec.vector_flops_per_second.at("fp32").value, 102.0e12);
  // DRAM: 1019.4 B/cycle x 2 GHz = 2.0388e12 B/s.
  EXPECT_NEAR(spec.dram_bytes_per_second.value, 1019.4 * 2e9, 1.0);
  EXPECT_EQ(spec.matrix_flops_per_second.count("tf32"), 0u);
  EXPECT_EQ(spec.fp32_matrix_mode, "fp32");
  EXPECT_NE(spec.description.find("Figure 2"), std::string::npos);
  EXPECT_NE(spec.description.find("not a datasheet spec"), std::string::npos);
}

TEST(ArchSpec, DerivedNumbersOfB200AndThor) {
  const ArchSpec b200 = load("B200");
  EXPECT_DOUBLE_EQ(b200.dram_bytes_per_second.value, 64.0e12 / 8);  // DGX B200: 64 TB/s, 8 GPUs
  EXPECT_DOUBLE_EQ(b200.matrix_flops_per_second.at("fp4").value, 18.0e15 / 2);  // sparse / 2
  const ArchSpec thor = load("Jetson_Thor");
  EXPECT_DOUBLE_EQ(thor.matrix_flops_per_second.at("fp4").value, 1035.0e12);  // dense FP4
  EXPECT_DOUBLE_EQ(thor.matrix_flops_per_second.at("fp8").value, 517.0e12);
  EXPECT_DOUBLE_EQ(thor.dram_bytes_per_second.value, 273.0e9);
  // 2,560 CUDA cores x 2 FLOP/FMA x 1.57 GHz.
  EXPECT_DOUBLE_EQ(thor.vector_flops_per_second.at("fp32").value, 2560 * 2 * 1.57e9);
}

// Rate of a matrix math mode / vector dtype of a shipped spec.
double matrix(const ArchSpec& spec, const std::string& mode) {
  return spec.matrix_flops_per_second.at(mode).value;
}
double vector(const ArchSpec& spec, const std::string& dtype) {
  return spec.vector_flops_per_second.at(dtype).value;
}

TEST(ArchSpec, B200AtItsDatasheetPowerAndGB200At1200W) {
  const ArchSpec b200 = load("B200");
  const ArchSpec gb200 = load("GB200");
  // HGX B200 (1,000 W): FP16/BF16 4.5 PFLOPS with sparsity -> 2.25 dense; TF32 is half of
  // that, 1.125 (NVIDIA prints 2.2 sparse, 4.5 / 2 rounded down); FP32 80 TFLOPS (Brief).
  EXPECT_DOUBLE_EQ(matrix(b200, "fp16"), 4.5e15 / 2);
  EXPECT_DOUBLE_EQ(matrix(b200, "tf32"), 4.5e15 / 2 / 2);
  EXPECT_DOUBLE_EQ(vector(b200, "fp32"), 80.0e12);
  // No vendor document states the L2 size: a device query's 126.5 MiB = 132,644,864 B.
  ASSERT_FALSE(b200.on_chip.empty());
  EXPECT_EQ(b200.cache_level, "L2");
  EXPECT_DOUBLE_EQ(b200.on_chip[0].capacity_bytes, 126.5 * 1024 * 1024);
  // GB200 (1,200 W): FP16 5 PFLOPS with sparsity -> 2.5 dense, FP4 20 -> 10, FP32 90.
  EXPECT_DOUBLE_EQ(matrix(gb200, "fp16"), 5.0e15 / 2);
  EXPECT_DOUBLE_EQ(matrix(gb200, "fp4"), 20.0e15 / 2);
  EXPECT_DOUBLE_EQ(vector(gb200, "fp32"), 90.0e12);
  // NVL72: 576 TB/s over 72 GPUs.
  EXPECT_DOUBLE_EQ(gb200.dram_bytes_per_second.value, 576.0e12 / 72);
  // The same chip at more power: every GB200 rate is at least the B200's.
  for (const auto& [mode, rate] : b200.matrix_flops_per_second) {
    EXPECT_GE(matrix(gb200, mode), rate.value) << mode;
  }
}

TEST(ArchSpec, HopperSpecsH100SxmAndH200) {
  const ArchSpec h100 = load("H100_SXM");
  const ArchSpec h200 = load("H200_SXM");
  EXPECT_DOUBLE_EQ(h100.dram_bytes_per_second.value, 3.35e12);  // H100 SXM datasheet
  EXPECT_DOUBLE_EQ(h200.dram_bytes_per_second.value, 4.8e12);   // H200 datasheet
  EXPECT_DOUBLE_EQ(*h200.dram_capacity_bytes, 141.0e9);
  // Same GH100 SXM5 compute: the H200 datasheet prints the H100 SXM's figures; dense FP16 is
  // half of 1,979 to within rounding, 989.4.
  for (const auto& [mode, rate] : h100.matrix_flops_per_second) {
    EXPECT_DOUBLE_EQ(matrix(h200, mode), rate.value) << mode;
  }
  EXPECT_NEAR(matrix(h200, "fp16"), 1979.0e12 / 2, 0.2e12);
  EXPECT_DOUBLE_EQ(h200.on_chip[0].capacity_bytes, 50.0 * 1024 * 1024);
}

TEST(ArchSpec, A100BoardsDifferOnlyInMemory) {
  const ArchSpec sxm80 = load("A100_SXM");
  // A100 datasheet r4: 1,555 GB/s for both 40 GB boards, 1,935 GB/s for the 80 GB PCIe,
  // 2,039 GB/s for the 80 GB SXM; the same peak rates on all four.
  const std::vector<std::pair<std::string, double>> boards = {
      {"A100_SXM_40GB", 1.555e12}, {"A100_PCIe_40GB", 1.555e12}, {"A100_PCIe_80GB", 1.935e12}};
  EXPECT_DOUBLE_EQ(sxm80.dram_bytes_per_second.value, 2.039e12);
  for (const auto& [name, bandwidth] : boards) {
    SCOPED_TRACE(name);
    const ArchSpec board = load(name);
    EXPECT_DOUBLE_EQ(board.dram_bytes_per_second.value, bandwidth);
    EXPECT_EQ(board.matrix_flops_per_second.size(), sxm80.matrix_flops_per_second.size());
    for (const auto& [mode, rate] : sxm80.matrix_flops_per_second) {
      EXPECT_DOUBLE_EQ(matrix(board, mode), rate.value) << mode;
    }
    // 108 SMs x 64 lanes x 2 x 1.41 GHz = 19.49 TFLOPS, printed 19.5.
    EXPECT_NEAR(vector(board, "fp32"), 108 * 64 * 2 * 1.41e9, 0.01e12);
  }
}

TEST(ArchSpec, GeForceTensorRatesAssumeFp32Accumulate) {
  const ArchSpec rtx = load("RTX_4090");
  // Ada whitepaper, RTX 4090: FP16 with FP32 accumulate 165.2 dense, half the FP16-accumulate
  // 330.3; FP8 with FP32 accumulate 330.3, half of 660.6.
  EXPECT_DOUBLE_EQ(matrix(rtx, "fp16"), 165.2e12);
  EXPECT_NEAR(matrix(rtx, "fp16"), 330.3e12 / 2, 0.1e12);
  EXPECT_EQ(rtx.matrix_accumulate.at("fp16"), "fp32");
  EXPECT_EQ(rtx.matrix_accumulate.at("bf16"), "fp32");
  EXPECT_DOUBLE_EQ(matrix(rtx, "fp8"), 330.3e12);
  EXPECT_EQ(rtx.matrix_accumulate.at("fp8"), "fp32");
  // FP32: 16,384 CUDA cores x 2 x 2.52 GHz = 82.58 TFLOPS, printed 82.6.
  EXPECT_NEAR(vector(rtx, "fp32"), 16384 * 2 * 2.52e9, 0.05e12);
  EXPECT_DOUBLE_EQ(rtx.on_chip[0].capacity_bytes, 72.0 * 1024 * 1024);
}

TEST(ArchSpec, AdaDataCenterSpecs) {
  const ArchSpec l40s = load("L40S");
  // FP16 733 TFLOPS with sparsity / 2 = 366.5 (the printed dense 362.05 is inconsistent).
  EXPECT_DOUBLE_EQ(matrix(l40s, "fp16"), 733.0e12 / 2);
  EXPECT_DOUBLE_EQ(l40s.dram_bytes_per_second.value, 384 / 8 * 18.0e9);  // 864 GB/s
  EXPECT_DOUBLE_EQ(l40s.on_chip[0].capacity_bytes, 96.0 * 1024 * 1024);  // AD102 upper bound
  const ArchSpec l4 = load("L4");
  EXPECT_DOUBLE_EQ(matrix(l4, "fp16"), 242.0e12 / 2);
  EXPECT_DOUBLE_EQ(matrix(l4, "fp8"), 485.0e12 / 2);
  EXPECT_DOUBLE_EQ(matrix(l4, "tf32"), 242.0e12 / 4);                  // half the FP16 rate
  EXPECT_DOUBLE_EQ(l4.dram_bytes_per_second.value, 192 / 8 * 12.5e9);  // 300 GB/s
}

TEST(ArchSpec, TuringT4HasNoTf32) {
  const ArchSpec t4 = load("T4");
  EXPECT_EQ(t4.fp32_matrix_mode, "fp32");
  EXPECT_EQ(t4.matrix_flops_per_second.count("tf32"), 0u);
  EXPECT_EQ(t4.matrix_flops_per_second.count("bf16"), 0u);
  // 320 Tensor Cores x 64 FP16 FMA x 2 x 1.59 GHz; 2,560 CUDA cores x 2 x 1.59 GHz.
  EXPECT_DOUBLE_EQ(matrix(t4, "fp16"), 320 * 64 * 2 * 1.59e9);
  EXPECT_DOUBLE_EQ(vector(t4, "fp32"), 2560 * 2 * 1.59e9);
  EXPECT_DOUBLE_EQ(t4.on_chip[0].capacity_bytes, 4.0 * 1024 * 1024);
}

TEST(ArchSpec, AmdSpecsKeepMatrixAndVectorApart) {
  const ArchSpec mi300x = load("MI300X");
  // ROCm MI300X table: 304 CUs x FLOPS/clock/CU x 2.1 GHz; FP16 2048 -> 1307.4 TFLOPS.
  EXPECT_NEAR(matrix(mi300x, "fp16"), 304 * 2048 * 2.1e9, 0.1e12);
  EXPECT_NEAR(matrix(mi300x, "tf32"), 304 * 1024 * 2.1e9, 0.1e12);
  EXPECT_DOUBLE_EQ(matrix(mi300x, "fp32"), 163.4e12);  // matrix FP32
  EXPECT_DOUBLE_EQ(vector(mi300x, "fp64"), 81.7e12);   // vector FP64, half the matrix FP64
  EXPECT_DOUBLE_EQ(matrix(mi300x, "fp64"), 163.4e12);
  // Cache-aware level: the 256 MiB Infinity Cache, not the 32 MiB L2.
  EXPECT_EQ(mi300x.cache_level, "InfinityCache");
  // Then the rest of the chip's storage, per CU x 304 CUs (ROCm's specifications table): L1
  // vector 32 KiB, L1 scalar 16 KiB per 2 CUs, LDS 64 KiB, VGPR 512 KiB, SGPR 12.5 KiB.
  ASSERT_EQ(mi300x.on_chip.size(), 7u);
  EXPECT_DOUBLE_EQ(mi300x.on_chip[0].capacity_bytes, 256.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(mi300x.on_chip[1].capacity_bytes, 32.0 * 1024 * 1024);
  const std::vector<std::pair<std::string, double>> per_cu = {{"L1", 304 * 32.0 * 1024},
                                                              {"L1_SCALAR", 304 / 2 * 16.0 * 1024},
                                                              {"LDS", 304 * 64.0 * 1024},
                                                              {"VGPR", 304 * 512.0 * 1024},
                                                              {"SGPR", 304 * 12.5 * 1024}};
  for (size_t i = 0; i < per_cu.size(); ++i) {
    EXPECT_EQ(mi300x.on_chip[i + 2].name, per_cu[i].first);
    EXPECT_DOUBLE_EQ(mi300x.on_chip[i + 2].capacity_bytes, per_cu[i].second) << per_cu[i].first;
  }
  const ArchSpec mi325x = load("MI325X");
  for (const auto& [mode, rate] : mi300x.matrix_flops_per_second) {
    EXPECT_DOUBLE_EQ(matrix(mi325x, mode), rate.value) << mode;
  }
  EXPECT_DOUBLE_EQ(mi325x.dram_bytes_per_second.value, 6.0e12);
  EXPECT_DOUBLE_EQ(*mi325x.dram_capacity_bytes, 256.0e9);
  const ArchSpec mi250x = load("MI250X");
  // 220 CUs x 256 FLOPS/clock/CU (matrix FP64, packed FP32) x 1.7 GHz = 95.744 TFLOPS.
  EXPECT_DOUBLE_EQ(matrix(mi250x, "fp64"), 220 * 256 * 1.7e9);
  EXPECT_DOUBLE_EQ(vector(mi250x, "fp32"), 220 * 256 * 1.7e9);
  EXPECT_DOUBLE_EQ(matrix(mi250x, "fp16"), 383.0e12);  // printed, above 220 x 1024 x 1.7 GHz
  EXPECT_GE(matrix(mi250x, "fp16"), 220 * 1024 * 1.7e9);
  EXPECT_EQ(mi250x.fp32_matrix_mode, "fp32");  // CDNA 2 has no TF32
  EXPECT_EQ(mi250x.matrix_flops_per_second.count("tf32"), 0u);
}

TEST(ArchSpec, UnverifiedSpecSaysSo) {
  // No vendor document gives the A10G's rates: the description and notes say so.
  const ArchSpec a10g = load("A10G");
  EXPECT_NE(a10g.description.find("unverified"), std::string::npos);
  EXPECT_NE(a10g.notes.find("no number here could be verified"), std::string::npos);
  // 80 SMs x 128 CUDA cores x 2 x 1.71 GHz.
  EXPECT_DOUBLE_EQ(vector(a10g, "fp32"), 80 * 128 * 2 * 1.71e9);
}

// --- resolve_arch ------------------------------------------------------------------------

TEST(ArchSpec, ResolvesNamesCaseInsensitively) {
  EXPECT_EQ(resolve_arch("h100_pcie", kArchDir).name, "H100_PCIe");
  EXPECT_EQ(resolve_arch("JETSON_THOR", kArchDir).name, "Jetson_Thor");
}

TEST(ArchSpec, ResolvesPaths) {
  const ArchSpec spec = resolve_arch(kArchDir + "/B200.yaml", kArchDir);
  EXPECT_EQ(spec.name, "B200");
  EXPECT_EQ(spec.file, kArchDir + "/B200.yaml");
}

TEST(ArchSpec, UnknownNameListsAvailable) {
  try {
    resolve_arch("H200", kArchDir);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kArgument);
    EXPECT_NE(std::string(e.what()).find("unknown architecture 'H200'"), std::string::npos);
    EXPECT_NE(e.diagnostics()[0].hint.find("A100_SXM, A100_SXM_40GB, A10G, B200"),
              std::string::npos);
    EXPECT_NE(e.diagnostics()[0].hint.find("H200_SXM"), std::string::npos);
  }
}

TEST(ArchSpec, MissingFileIsIoError) {
  try {
    resolve_arch("/nonexistent/dir/x.yaml", kArchDir);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot read architecture spec"), std::string::npos);
  }
  // A bare "x.yaml" is a path too (not a name), relative to the working directory.
  try {
    resolve_arch("no_such_spec.yml", kArchDir);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
}

TEST(ArchSpec, EmptyFileIsIoError) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "solar_test_empty_spec.yaml").string();
  std::ofstream(path) << "# nothing\n";
  try {
    load_arch_spec(path);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("is empty"), std::string::npos);
  }
  std::remove(path.c_str());
}

// --- loader errors, one per rule ---------------------------------------------------------

TEST(ArchSpecErrors, MissingRequiredFields) {
  expect_spec_error(
      "matrix_flops_per_second: {bf16: {value: 1.0, source: \"a b\"}}\n"
      "vector_flops_per_second: {fp32: {value: 1.0, source: \"a b\"}}\n"
      "dram: {bytes_per_second: {value: 1.0, source: \"a b\"}}\n",
      "field 'name' is missing");
  expect_spec_error(
      "name: t\n"
      "vector_flops_per_second: {fp32: {value: 1.0, source: \"a b\"}}\n"
      "dram: {bytes_per_second: {value: 1.0, source: \"a b\"}}\n",
      "field 'matrix_flops_per_second' is missing");
  expect_spec_error(
      "name: t\nmatrix_flops_per_second: {}\n"
      "vector_flops_per_second: {fp32: {value: 1.0, source: \"a b\"}}\n"
      "dram: {bytes_per_second: {value: 1.0, source: \"a b\"}}\n",
      "field 'matrix_flops_per_second' must list at least one math mode");
  expect_spec_error(
      "name: t\nmatrix_flops_per_second: {bf16: {value: 1.0, source: \"a b\"}}\n"
      "vector_flops_per_second: {fp16: {value: 1.0, source: \"a b\"}}\n"
      "dram: {bytes_per_second: {value: 1.0, source: \"a b\"}}\n",
      "field 'vector_flops_per_second.fp32' is missing");
  expect_spec_error(
      "name: t\nmatrix_flops_per_second: {bf16: {value: 1.0, source: \"a b\"}}\n"
      "vector_flops_per_second: {fp32: {value: 1.0, source: \"a b\"}}\n",
      "field 'dram' is missing");
  expect_spec_error(
      "name: t\nmatrix_flops_per_second: {bf16: {value: 1.0, source: \"a b\"}}\n"
      "vector_flops_per_second: {fp32: {value: 1.0, source: \"a b\"}}\n"
      "dram: {capacity_bytes: {value: 1.0, source: \"a b\"}}\n",
      "field 'dram.bytes_per_second' is missing");
}

std::string with(const std::string& from, const std::string& to) {
  std::string yaml = kValid;
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return yaml.replace(at, from.size(), to);
}

TEST(ArchSpecErrors, NonPositiveRates) {
  expect_spec_error(with("fp32: {value: 1.0e12", "fp32: {value: -1"),
                    "field 'vector_flops_per_second.fp32.value' must be positive, got -1");
  expect_spec_error(with("bytes_per_second: {value: 1.0e11", "bytes_per_second: {value: 0"),
                    "field 'dram.bytes_per_second.value' must be positive, got 0");
  expect_spec_error(std::string(kValid) +
                        "on_chip:\n  - {name: L2, capacity_bytes: "
                        "{value: -4.0e6, source: sheet}}\n",
                    "field 'on_chip[0].capacity_bytes.value' must be positive, got -4.0e6");
}

TEST(ArchSpecErrors, ValuesThatAreNotNumbers) {
  expect_spec_error(with("{value: 1.0e11", "{value: 2 TB/s"),
                    "field 'dram.bytes_per_second.value' must be a number, got '2 TB/s'", "2.0e12");
  expect_spec_error(with("{value: 4.0e12", "{value: .inf"),
                    "field 'matrix_flops_per_second.bf16.value' must be a number");
  expect_spec_error(with("{value: 4.0e12", "{value: [1, 2]"),
                    "field 'matrix_flops_per_second.bf16.value' must be a number");
  // A bare number has no citation.
  expect_spec_error(with("bf16: {value: 4.0e12, source: sheet, accumulate: fp32}", "bf16: 4.0e12"),
                    "field 'matrix_flops_per_second.bf16' must be a mapping {value, source}");
}

TEST(ArchSpecErrors, UnknownFields) {
  expect_spec_error(std::string(kValid) + "dram_bw: 3\n", "unknown field 'dram_bw'", "cache_level");
  // An unknown dtype key: the hint lists the math modes.
  expect_spec_error(with("bf16: {value", "fp33: {value"),
                    "unknown field 'matrix_flops_per_second.fp33'",
                    "fp64, tf32, fp32, bf16, fp16, fp8, fp6, fp4, int8");
  expect_spec_error(with("fp32: {value: 1.0e12", "fp8: {value: 1.0e12"),
                    "unknown field 'vector_flops_per_second.fp8'", "fp64, fp32, fp16, bf16");
  expect_spec_error(with("source: sheet}\ndram", "source: sheet, unit: TF}\ndram"),
                    "unknown field 'vector_flops_per_second.fp32.unit'");
  expect_spec_error(with("bytes_per_second:", "bandwidth:"), "unknown field 'dram.bandwidth'");
  expect_spec_error(std::string(kValid) +
                        "on_chip:\n  - {name: L2, size: 3, capacity_bytes: "
                        "{value: 4.0e6, source: sheet}}\n",
                    "unknown field 'on_chip[0].size'");
}

TEST(ArchSpecErrors, DuplicateField) {
  expect_spec_error(std::string(kValid) + "name: again\n", "field 'name' is written twice");
}

TEST(ArchSpecErrors, SourceMustBeDefinedOrAPhrase) {
  expect_spec_error(
      with("fp32: {value: 1.0e12, source: sheet}", "fp32: {value: 1.0e12, source: datashet}"),
      "field 'vector_flops_per_second.fp32.source' names source 'datashet', "
      "which is not in 'sources'",
      "defined sources: sheet");
  expect_spec_error(with("fp32: {value: 1.0e12, source: sheet}", "fp32: {value: 1.0e12}"),
                    "field 'vector_flops_per_second.fp32.source' is missing");
}

TEST(ArchSpecErrors, CacheLevelMustNameAnOnChipLevel) {
  expect_spec_error(std::string(kValid) +
                        "on_chip:\n  - {name: L2, capacity_bytes: {value: 4.0e6, source: sheet}}\n"
                        "cache_level: L3\n",
                    "field 'cache_level' names 'L3', which is not an on_chip level",
                    "on_chip levels: L2");
}

TEST(ArchSpecErrors, Fp32MatrixModeMustHaveARate) {
  expect_spec_error(std::string(kValid) + "fp32_matrix_mode: tf32\n",
                    "field 'fp32_matrix_mode' is 'tf32' but 'matrix_flops_per_second.tf32' is "
                    "missing");
  expect_spec_error(std::string(kValid) + "fp32_matrix_mode: tf31\n",
                    "field 'fp32_matrix_mode' must name a math mode, got 'tf31'");
  // fp32 always has a rate: the vector fp32 peak stands in for a missing matrix fp32 rate.
  EXPECT_NO_THROW(parse_arch_spec(std::string(kValid) + "fp32_matrix_mode: fp32\n", "t.yaml"));
}

TEST(ArchSpecErrors, PeaksMustBeDenseAtAStatedClock) {
  expect_spec_error(with("sparsity: dense\n", ""), "field 'sparsity' is missing",
                    "sparsity: dense");
  expect_spec_error(with("sparsity: dense", "sparsity: sparse"),
                    "field 'sparsity' must be 'dense', got 'sparse'", "halve");
  expect_spec_error(with("clock: boost\n", ""), "field 'clock' is missing", "clock: boost");
  expect_spec_error(with("clock: boost", "clock: base"),
                    "field 'clock' must be one of boost, measured, assumed, got 'base'",
                    "base-clock rates are below the peak");
  expect_spec_error(with("clock: boost", "clock: turbo"),
                    "field 'clock' must be one of boost, measured, assumed, got 'turbo'");
}

TEST(ArchSpecErrors, LowPrecisionTensorRatesStateTheirAccumulateType) {
  expect_spec_error(with(", accumulate: fp32}", "}"),
                    "field 'matrix_flops_per_second.bf16.accumulate' is missing",
                    "half the fp16-accumulate rate");
  expect_spec_error(with("accumulate: fp32", "accumulate: bf16"),
                    "field 'matrix_flops_per_second.bf16.accumulate' must be one of fp32, fp16, "
                    "got 'bf16'");
  // tf32 and int8 have one accumulate type: the field is not allowed there.
  expect_spec_error(with("bf16: {value: 4.0e12, source: sheet, accumulate: fp32}",
                         "tf32: {value: 4.0e12, source: sheet, accumulate: fp32}"),
                    "unknown field 'matrix_flops_per_second.tf32.accumulate'",
                    "accumulate is stated for the bf16, fp16, fp8, fp6, fp4 matrix rates");
  // The vector units have no accumulate type either.
  expect_spec_error(with("fp32: {value: 1.0e12, source: sheet}",
                         "fp32: {value: 1.0e12, source: sheet, accumulate: fp32}"),
                    "unknown field 'vector_flops_per_second.fp32.accumulate'");
}

TEST(ArchSpecErrors, WrongShapes) {
  expect_spec_error("- a\n- b\n", "an architecture spec must be a YAML mapping");
  expect_spec_error(
      with("dram:\n  bytes_per_second: {value: 1.0e11, source: sheet}\n", "dram: 2.0e12\n"),
      "field 'dram' must be a mapping");
  expect_spec_error(std::string(kValid) + "on_chip: {name: L2}\n",
                    "field 'on_chip' must be a list of levels");
}

TEST(ArchSpecErrors, YamlSyntaxErrorHasTheLine) {
  const UserError e = parse_error("name: t\nmatrix_flops_per_second: {bf16: {value: 1\n");
  EXPECT_EQ(e.kind(), ErrorKind::kSpec);
  EXPECT_NE(e.diagnostics()[0].message.find("YAML syntax error"), std::string::npos);
  EXPECT_GE(e.diagnostics()[0].loc.line, 2u);
  EXPECT_EQ(e.diagnostics()[0].file, "bad.yaml");
}

TEST(ArchSpecErrors, ReportsEveryProblemWithItsLine) {
  // Two mistakes, on lines 9 and 12: both are reported, each at its own line.
  const UserError e =
      parse_error(with("fp32: {value: 1.0e12", "fp32: {value: -1") + "cache_level: L9\n");
  ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
  EXPECT_NE(e.diagnostics()[0].message.find("must be positive"), std::string::npos);
  EXPECT_EQ(e.diagnostics()[0].loc.line, 9u);
  EXPECT_EQ(e.diagnostics()[1].loc.line, 12u);
  EXPECT_NE(std::string(e.what()).find("bad.yaml:9:"), std::string::npos);
}

}  // namespace
}  // namespace solar
