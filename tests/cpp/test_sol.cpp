// SOL analysis: the paper's worked example (REFERENCE.md section 1) on the paper's spec and on
// the H100 PCIe datasheet spec, math-mode rules, bottleneck rules and fused traffic.
// Every expected number is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include <string>

#include "solar/arch/spec.h"
#include "solar/base/error.h"
#include "solar/graph/graph.h"
#include "solar/pipeline/pipeline.h"
#include "solar/sol/analysis.h"
#include "solar/trace/tracer.h"
#include "test_util.h"

namespace solar {
namespace {

const std::string kArchDir = std::string(SOLAR_SOURCE_DIR) + "/configs/arch";
ArchSpec load(const std::string& name) { return load_arch_spec(kArchDir + "/" + name + ".yaml"); }

// Small graph builder: tensors and nodes with the traffic fields the tracer fills.
struct Builder {
  Graph g;

  TensorId tensor(const std::string& name, Shape shape, Role role, DType dtype = DType::kFp32) {
    TensorInfo t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.role = role;
    t.storage = t.id;
    g.tensors.push_back(t);
    if (role == Role::kInput || role == Role::kWeight) g.inputs.push_back(t.id);
    return t.id;
  }

  // A node reading `inputs` (each at the given bytes) and writing `outputs` at full size.
  NodeId node(const std::string& name, TensorIds inputs, SmallVec<int64_t, 4> input_bytes,
              TensorIds outputs, int64_t macs, DType matrix_dtype = DType::kFp32) {
    Node n;
    n.id = static_cast<NodeId>(g.nodes.size());
    n.name = name;
    n.inputs = std::move(inputs);
    n.input_bytes = std::move(input_bytes);
    n.outputs = std::move(outputs);
    n.macs = macs;
    n.matrix_dtype = matrix_dtype;
    for (int64_t b : n.input_bytes) n.bytes_read += b;
    for (TensorId t : n.outputs) {
      n.bytes_written += g.tensors[t].bytes();
      g.tensors[t].producer = n.id;
    }
    for (TensorId t : n.inputs) g.tensors[t].consumers.push_back(n.id);
    g.nodes.push_back(n);
    return n.id;
  }

  void output(TensorId t) {
    g.tensors[t].is_output = true;
    g.outputs.push_back(t);
  }
};

// The paper's LinearBiasMatmul: y = x W^T + b, z = y D; B=2, M=128, K=256, N=512, P=64, fp32.
Graph linear_bias_matmul() {
  constexpr int64_t B = 2, M = 128, K = 256, N = 512, P = 64;
  Builder b;
  const TensorId x = b.tensor("x", {B, M, K}, Role::kInput);       // 65,536 el = 262,144 B
  const TensorId w = b.tensor("W", {N, K}, Role::kWeight);         // 131,072 el = 524,288 B
  const TensorId bias = b.tensor("b", {N}, Role::kWeight);         // 512 el = 2,048 B
  const TensorId d = b.tensor("D", {N, P}, Role::kWeight);         // 32,768 el = 131,072 B
  const TensorId y = b.tensor("y", {B, M, N}, Role::kActivation);  // 131,072 el = 524,288 B
  const TensorId z = b.tensor("z", {B, M, P}, Role::kActivation);  // 16,384 el = 65,536 B
  // linear#0: MACs = B*M*K*N = 33,554,432; bytes = 4*(BMK + NK + N + BMN) = 1,312,768.
  b.node("linear#0", {x, w, bias}, {262144, 524288, 2048}, {y}, B * M * K * N);
  // matmul#0: MACs = B*M*N*P = 8,388,608; bytes = 4*(BMN + NP + BMP) = 720,896.
  b.node("matmul#0", {y, d}, {524288, 131072}, {z}, B * M * N * P);
  b.output(z);
  return b.g;
}

TEST(SolGraph, WorkedExampleCounts) {
  const Graph g = linear_bias_matmul();
  EXPECT_EQ(g.nodes[0].macs, 33554432);
  EXPECT_EQ(g.nodes[0].bytes(), 1312768);
  EXPECT_EQ(g.nodes[1].macs, 8388608);
  EXPECT_EQ(g.nodes[1].bytes(), 720896);
  // FLOPs = 2 * (33,554,432 + 8,388,608) = 83,886,080.
  EXPECT_EQ(g.total_flops(), 83886080);
  // Fused bytes = 4 * (BMK + NK + N + NP + BMP) = 4 * (65,536 + 131,072 + 512 + 32,768 + 16,384).
  EXPECT_EQ(fused_bytes(g), 985088);
}

// --- the paper's Figure 2 on the paper's spec --------------------------------------------

TEST(SolPaper, Figure2NumbersOnThePaperSpec) {
  const Analysis a = analyze(linear_bias_matmul(), load("H100_PCIe_paper"), {});
  EXPECT_EQ(a.arch, "H100_PCIe_paper");
  EXPECT_EQ(a.fp32_math, "fp32");
  EXPECT_EQ(a.math_mode, "fp32 (platform default for fp32 contractions)");
  EXPECT_DOUBLE_EQ(a.matrix_flops_per_second, 102e12);

  // linear#0: max(67,108,864 / 102e12 = 0.6579 us, 1,312,768 / 2.0388e12 = 0.6439 us): compute.
  const NodeSol& linear = a.nodes[0];
  EXPECT_DOUBLE_EQ(linear.matrix_seconds, 67108864 / 102e12);
  EXPECT_DOUBLE_EQ(linear.memory_seconds, 1312768 / 2.0388e12);
  EXPECT_NEAR(linear.seconds * 1e6, 0.6579, 5e-5);
  EXPECT_EQ(linear.bottleneck.kind, "compute");
  EXPECT_EQ(linear.bottleneck.unit, "matrix");
  EXPECT_EQ(linear.math_mode, "fp32");
  // matmul#0: max(16,777,216 / 102e12 = 0.1645 us, 720,896 / 2.0388e12 = 0.3536 us): memory.
  const NodeSol& matmul = a.nodes[1];
  EXPECT_NEAR(matmul.matrix_seconds * 1e6, 0.1645, 5e-5);
  EXPECT_NEAR(matmul.seconds * 1e6, 0.3536, 5e-5);
  EXPECT_EQ(matmul.bottleneck.kind, "memory");
  EXPECT_EQ(matmul.bottleneck.unit, "dram");
  // Intensity of matmul#0: 16,777,216 FLOPs / 720,896 B = 23.27 FLOP/B.
  EXPECT_NEAR(matmul.intensity, 16777216.0 / 720896.0, 1e-12);

  // Unfused = sum of per-node bounds = 0.6579 + 0.3536 = 1.0115 us (the paper's text: 1.01 us).
  EXPECT_DOUBLE_EQ(a.unfused.seconds, 67108864 / 102e12 + 720896 / 2.0388e12);
  EXPECT_NEAR(a.unfused.seconds * 1e6, 1.0115, 5e-5);
  EXPECT_EQ(a.unfused.bytes, 2033664);  // 1,312,768 + 720,896
  EXPECT_EQ(a.unfused.flops, 83886080);
  // Its dominant term: sum memory 2,033,664 / 2.0388e12 = 0.9975 us > sum matrix 0.8224 us,
  // so it is memory-bound (the figure's label; its 1.00 us is max(0.8224, 0.9975)).
  EXPECT_NEAR(a.unfused.memory_seconds * 1e6, 0.9975, 5e-5);
  EXPECT_EQ(a.unfused.bottleneck.kind, "memory");

  // Fused = max(83,886,080 / 102e12 = 0.8224 us, 985,088 / 2.0388e12 = 0.4832 us): compute.
  EXPECT_EQ(a.fused.bytes, 985088);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 83886080 / 102e12);
  EXPECT_NEAR(a.fused.seconds * 1e6, 0.8224, 5e-5);
  EXPECT_NEAR(a.fused.memory_seconds * 1e6, 0.4832, 5e-5);
  EXPECT_EQ(a.fused.bottleneck.kind, "compute");
  EXPECT_EQ(a.fused.bottleneck.unit, "matrix");
  // Fused intensity = 83,886,080 / 985,088 = 85.16 FLOP/B; ridge = 102e12 / 2.0388e12 = 50.03.
  EXPECT_NEAR(a.fused.intensity, 85.156, 1e-3);
  EXPECT_NEAR(a.ridge_matrix, 50.029, 1e-3);
  EXPECT_NEAR(a.ridge_vector, 50.029, 1e-3);
}

// --- the same program on the H100 PCIe datasheet spec ------------------------------------

TEST(SolDatasheet, Fp32MathRunsAtTheCudaCoreRate) {
  AnalysisOptions options;
  options.fp32_math = Fp32Math::kFp32;
  const Analysis a = analyze(linear_bias_matmul(), load("H100_PCIe"), options);
  // No matrix fp32 rate on H100: fp32 GEMMs run on CUDA cores at 51.2e12 FLOP/s.
  // Fused = max(83,886,080 / 51.2e12 = 1.6384 us, 985,088 / 2.0e12 = 0.4925 us): compute.
  EXPECT_EQ(a.fp32_math, "fp32");
  EXPECT_EQ(a.math_mode, "fp32 (--fp32-math fp32; vector units, no matrix rate)");
  EXPECT_DOUBLE_EQ(a.matrix_flops_per_second, 51.2e12);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 83886080 / 51.2e12);
  EXPECT_NEAR(a.fused.seconds * 1e6, 1.6384, 5e-5);
  EXPECT_EQ(a.fused.bottleneck.kind, "compute");
}

TEST(SolDatasheet, PlatformDefaultIsTf32) {
  const Analysis a = analyze(linear_bias_matmul(), load("H100_PCIe"), {});
  // tf32 at 378e12: matrix 83,886,080 / 378e12 = 0.2219 us < memory 985,088 / 2.0e12 = 0.4925 us.
  EXPECT_EQ(a.fp32_math, "tf32");
  EXPECT_EQ(a.math_mode, "tf32 (platform default for fp32 contractions)");
  EXPECT_EQ(a.nodes[0].math_mode, "tf32");
  EXPECT_DOUBLE_EQ(a.nodes[0].matrix_flops_per_second, 378e12);
  EXPECT_NEAR(a.fused.matrix_seconds * 1e6, 0.2219, 5e-5);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 985088 / 2.0e12);
  EXPECT_NEAR(a.fused.seconds * 1e6, 0.4925, 5e-5);
  EXPECT_EQ(a.fused.bottleneck.kind, "memory");
  EXPECT_EQ(a.fused.bottleneck.unit, "dram");
  // Ridge points: 378e12 / 2e12 = 189 FLOP/B (matrix), 51.2e12 / 2e12 = 25.6 FLOP/B (vector).
  EXPECT_DOUBLE_EQ(a.ridge_matrix, 189.0);
  EXPECT_DOUBLE_EQ(a.ridge_vector, 25.6);
  // Explicit --fp32-math tf32 gives the same rate, with its own reason.
  AnalysisOptions tf32;
  tf32.fp32_math = Fp32Math::kTf32;
  EXPECT_EQ(analyze(linear_bias_matmul(), load("H100_PCIe"), tf32).math_mode,
            "tf32 (--fp32-math tf32)");
}

TEST(SolDatasheet, Tf32OnASpecWithoutTf32IsASpecError) {
  AnalysisOptions options;
  options.fp32_math = Fp32Math::kTf32;
  try {
    analyze(linear_bias_matmul(), load("H100_PCIe_paper"), options);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kSpec);
    const std::string what = e.what();
    EXPECT_NE(what.find("arch 'H100_PCIe_paper' has no matrix rate for tf32 (MACs of fp32)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("needed by node 'linear#0'"), std::string::npos) << what;
    EXPECT_NE(what.find("--fp32-math fp32"), std::string::npos) << what;
  }
}

// --- math-mode rules ---------------------------------------------------------------------

TEST(SolMathMode, DtypeToMathMode) {
  const ArchSpec h100 = load("H100_PCIe");
  const AnalysisOptions def;
  std::string mode;
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kBf16, def, &mode), 756e12);
  EXPECT_EQ(mode, "bf16");
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kFp16, def, &mode), 756e12);
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kFp8E4M3, def, &mode), 1513e12);
  EXPECT_EQ(mode, "fp8");
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kFp8E5M2, def, &mode), 1513e12);
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kTf32, def, &mode), 378e12);
  EXPECT_EQ(mode, "tf32");
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kUint8, def, &mode), 1513e12);
  EXPECT_EQ(mode, "int8");
  // int4 with no int4 rate in the spec: twice int8, 2 x 1513e12 (regression: on 5dd0d0b int4
  // took the int8 rate, which A100/Ada/T4 beat by 2x).
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kInt4, def, &mode), 2 * 1513e12);
  EXPECT_EQ(mode, "int4");
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kFp64, def, &mode), 51.2e12);  // FP64 tensor core
  EXPECT_EQ(mode, "fp64");
  // Wide integers have no matrix unit: the fp32 vector rate, mode "vector".
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kInt32, def, &mode), 51.2e12);
  EXPECT_EQ(mode, "vector");
  EXPECT_DOUBLE_EQ(matrix_peak(load("B200"), DType::kNvfp4, def, &mode), 9.0e15);
  EXPECT_EQ(mode, "fp4");
  // fp4 with no fp4 rate: the fastest of fp8, int8, bf16 and fp16 (their units take the
  // codes unpacked). H100 PCIe: fp8 1513e12 (int8 the same, fp8 named first); A100 SXM, no
  // fp8: int8 624e12, above bf16's 312e12.
  EXPECT_DOUBLE_EQ(matrix_peak(h100, DType::kNvfp4, def, &mode), 1513e12);
  EXPECT_EQ(mode, "fp4 at the fp8 rate");
  EXPECT_DOUBLE_EQ(matrix_peak(load("A100_SXM"), DType::kNvfp4, def, &mode), 624e12);
  EXPECT_EQ(mode, "fp4 at the int8 rate");
  // RTX A6000 has no fp64 matrix or vector rate: that is a spec error, not a silent guess.
  EXPECT_THROW(matrix_peak(load("RTX_A6000"), DType::kFp64, def, &mode), UserError);
}

TEST(SolMathMode, MissingRateNamesArchAndDtype) {
  std::string mode;
  try {
    // RTX A6000's spec has no fp64 rate at all, matrix or vector.
    matrix_peak(load("RTX_A6000"), DType::kFp64, {}, &mode);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kSpec);
    EXPECT_NE(std::string(e.what()).find("arch 'RTX_A6000' has no matrix rate for fp64"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.diagnostics()[0].hint.find("matrix_flops_per_second.fp64"), std::string::npos);
  }
}

TEST(SolMathMode, Fp8AndInt8WithoutTheirRateTakeTheFasterOfFp16AndBf16) {
  std::string mode;
  // A100 SXM has no fp8 rate: fp16 and bf16 are both 312e12 (its spec), fp16 named first.
  EXPECT_DOUBLE_EQ(matrix_peak(load("A100_SXM"), DType::kFp8E4M3, {}, &mode), 312e12);
  EXPECT_EQ(mode, "fp8 at the fp16 rate");
  // A spec with its own int8 rate keeps it (A100 SXM: 624e12); the paper's H100 spec has
  // only an fp32 rate, so int8 MACs there have none to fall back to.
  EXPECT_DOUBLE_EQ(matrix_peak(load("A100_SXM"), DType::kInt8, {}, &mode), 624e12);
  EXPECT_EQ(mode, "int8");
  EXPECT_THROW(matrix_peak(load("H100_PCIe_paper"), DType::kInt8, {}, &mode), UserError);
}

TEST(SolMathMode, VectorPeakPerDtype) {
  const ArchSpec h100 = load("H100_PCIe");
  EXPECT_DOUBLE_EQ(vector_peak(h100, DType::kFp16), 102.4e12);  // packed half2: 2 x 51.2
  EXPECT_DOUBLE_EQ(vector_peak(h100, DType::kFp64), 25.6e12);
  EXPECT_DOUBLE_EQ(vector_peak(h100, DType::kInt8), 51.2e12);               // others: fp32
  EXPECT_DOUBLE_EQ(vector_peak(load("RTX_A6000"), DType::kBf16), 38.7e12);  // no bf16: fp32
}

TEST(SolMathMode, NoMacsNeedNoMatrixRate) {
  // An fp8 node without MACs on A100 (no fp8 rate) must not look a rate up.
  Builder b;
  const TensorId x = b.tensor("x", {1024}, Role::kInput, DType::kFp8E4M3);  // 1,024 B
  const TensorId y = b.tensor("y", {1024}, Role::kActivation, DType::kFp8E4M3);
  b.node("relu#0", {x}, {1024}, {y}, /*macs=*/0, DType::kFp8E4M3);
  b.g.nodes[0].flops.compare = 1024;
  b.output(y);
  const Analysis a = analyze(b.g, load("A100_SXM"), {});
  EXPECT_EQ(a.nodes[0].math_mode, "");
  EXPECT_EQ(a.nodes[0].matrix_seconds, 0.0);
  // No MACs in the graph: the headline mode is that of fp32 (tf32 on A100, 156e12).
  EXPECT_EQ(a.math_mode, "tf32 (platform default for fp32 contractions)");
  EXPECT_DOUBLE_EQ(a.matrix_flops_per_second, 156e12);
}

TEST(SolMathMode, HeadlineModeIsTheDtypeWithMostMacs) {
  Builder b;
  const TensorId x = b.tensor("x", {64, 64}, Role::kInput, DType::kBf16);
  const TensorId y = b.tensor("y", {64, 64}, Role::kActivation, DType::kBf16);
  const TensorId w = b.tensor("w", {64, 64}, Role::kInput);  // fp32 values
  const TensorId z = b.tensor("z", {64, 64}, Role::kActivation);
  b.node("mm#0", {x, x}, {8192, 8192}, {y}, 262144, DType::kBf16);  // 64^3 bf16 MACs
  b.node("mm#1", {w, w}, {16384, 16384}, {z}, 1000, DType::kFp32);  // fewer fp32 MACs
  b.output(y);
  b.output(z);
  const Analysis a = analyze(b.g, load("H100_PCIe"), {});
  EXPECT_EQ(a.math_mode,
            "bf16 (1 of 2 nodes); also tf32 (platform default for fp32 contractions; 1 of 2 "
            "nodes)");
  EXPECT_DOUBLE_EQ(a.matrix_flops_per_second, 756e12);
  EXPECT_EQ(a.nodes[1].math_mode, "tf32");
  ASSERT_EQ(a.math_modes.size(), 2u);
  EXPECT_EQ(a.math_modes[0].macs, 262144);  // 64^3
  EXPECT_EQ(a.math_modes[1].macs, 1000);
}

// A node's own fp32 mode (set by its unit, as the PyTorch lowering does for matmuls under
// torch.get_float32_matmul_precision() == "highest") decides its rate unless --fp32-math
// overrides it.
TEST(SolMathMode, NodeModeFromTheProgramAndTheOverride) {
  Builder b;
  const TensorId x = b.tensor("x", {64, 64}, Role::kInput);
  const TensorId y = b.tensor("y", {64, 64}, Role::kActivation);
  const TensorId z = b.tensor("z", {64, 64}, Role::kActivation);
  b.node("mm#0", {x, x}, {16384, 16384}, {y}, 262144);  // 64^3 MACs, mode set to fp32
  b.node("conv#0", {y, y}, {16384, 16384}, {z}, 1000);  // mode left to the platform
  b.g.nodes[0].fp32_math = Fp32Math::kFp32;
  b.output(z);
  const Analysis a = analyze(b.g, load("H100_PCIe"), {});
  // mm#0 at the fp32 CUDA-core rate (H100 PCIe has no fp32 matrix rate: 51.2e12 vector);
  // conv#0 at the platform default tf32 (378e12).
  EXPECT_EQ(a.nodes[0].math_mode, "fp32");
  EXPECT_DOUBLE_EQ(a.nodes[0].matrix_flops_per_second, 51.2e12);
  EXPECT_DOUBLE_EQ(a.nodes[0].matrix_seconds, 2.0 * 262144 / 51.2e12);
  EXPECT_EQ(a.nodes[1].math_mode, "tf32");
  EXPECT_EQ(a.math_mode,
            "fp32 (set by the program; 1 of 2 nodes; vector units, no matrix rate); also tf32 "
            "(platform default for fp32 contractions; 1 of 2 nodes)");
  EXPECT_DOUBLE_EQ(a.matrix_flops_per_second, 51.2e12);
  AnalysisOptions tf32;
  tf32.fp32_math = Fp32Math::kTf32;
  const Analysis o = analyze(b.g, load("H100_PCIe"), tf32);
  EXPECT_EQ(o.nodes[0].math_mode, "tf32");
  EXPECT_EQ(o.math_mode, "tf32 (--fp32-math tf32)");
}

// A program's tf32 (cuDNN may use TF32) on a platform without TF32 units runs its fp32 path:
// H100_PCIe_paper has one fp32 rate, 102e12, and no tf32 rate. --fp32-math tf32 stays an error.
TEST(SolMathMode, ProgramTf32OnAPlatformWithoutTf32) {
  Builder b;
  const TensorId x = b.tensor("x", {64, 64}, Role::kInput);
  const TensorId y = b.tensor("y", {64, 64}, Role::kActivation);
  b.node("conv#0", {x, x}, {16384, 16384}, {y}, 262144);
  b.g.nodes[0].fp32_math = Fp32Math::kTf32;
  b.output(y);
  const Analysis a = analyze(b.g, load("H100_PCIe_paper"), {});
  EXPECT_EQ(a.nodes[0].math_mode, "fp32");
  EXPECT_DOUBLE_EQ(a.nodes[0].matrix_flops_per_second, 102e12);
  AnalysisOptions tf32;
  tf32.fp32_math = Fp32Math::kTf32;
  testing::expect_user_error([&] { analyze(b.g, load("H100_PCIe_paper"), tf32); }, ErrorKind::kSpec,
                             "no matrix rate for tf32");
}

// A narrower fp32 math mode (PyTorch's "medium" precision; a bf16 benchmark definition) may use
// that format's tensor cores: 64^3 MACs at bf16 on H100 PCIe, 756e12 (its spec's dense bf16),
// from the option or from the program. T4 (Turing) has no bf16 rate: its fp32 path, the
// CUDA cores at 8.1e12, whoever asks; fp16 it has (65.1264e12).
TEST(SolMathMode, NarrowerModesMayUseTheirTensorCores) {
  Builder b;
  const TensorId x = b.tensor("x", {64, 64}, Role::kInput);
  const TensorId y = b.tensor("y", {64, 64}, Role::kActivation);
  b.node("mm#0", {x, x}, {16384, 16384}, {y}, 262144);
  b.output(y);
  AnalysisOptions bf16;
  bf16.fp32_math = Fp32Math::kBf16;
  const Analysis h = analyze(b.g, load("H100_PCIe"), bf16);
  EXPECT_EQ(h.nodes[0].math_mode, "bf16");
  EXPECT_DOUBLE_EQ(h.nodes[0].matrix_seconds,
                   2.0 * 262144 / load("H100_PCIe").matrix_flops_per_second.at("bf16").value);
  EXPECT_EQ(h.math_mode, "bf16 (--fp32-math bf16)");
  const Analysis t = analyze(b.g, load("T4"), bf16);
  EXPECT_EQ(t.nodes[0].math_mode, "fp32");
  b.g.nodes[0].fp32_math = Fp32Math::kFp16;
  const Analysis p = analyze(b.g, load("T4"), {});
  EXPECT_EQ(p.nodes[0].math_mode, "fp16");
  EXPECT_DOUBLE_EQ(p.nodes[0].matrix_flops_per_second, 65.1264e12);
}

// --- units: one source operator per unfused unit ---------------------------------------------

// A source operator lowered to three nodes (PyTorch's hardsigmoid decomposed as add, clamp,
// div) over x of 1,024 fp32 elements (4,096 B): as one unit it reads x once and writes its
// result once, 8,192 B; node by node it would move 3 x 8,192 = 24,576 B.
TEST(SolUnits, AUnitKeepsItsIntermediatesOnChip) {
  Builder b;
  const TensorId x = b.tensor("x", {1024}, Role::kInput);
  const TensorId t1 = b.tensor("t1", {1024}, Role::kActivation);
  const TensorId t2 = b.tensor("t2", {1024}, Role::kActivation);
  const TensorId y = b.tensor("y", {1024}, Role::kActivation);
  b.node("add#0", {x}, {4096}, {t1}, 0);
  b.node("clamp#0", {t1}, {4096}, {t2}, 0);
  b.node("div#0", {t2}, {4096}, {y}, 0);
  for (Node& n : b.g.nodes) n.flops.add = 1024;  // one vector FLOP per element each
  b.output(y);
  const ArchSpec arch = load("H100_PCIe");
  // Without units each node is its own: 3 x (4,096 + 4,096) = 24,576 B.
  EXPECT_EQ(analyze(b.g, arch, {}).unfused.bytes, 24576);
  Unit u;
  u.name = "hardsigmoid#0";
  u.label = "aten.hardsigmoid";
  u.nodes = {0, 1, 2};
  u.declared = true;
  b.g.units = {u};
  for (Node& n : b.g.nodes) n.unit = 0;
  const Analysis a = analyze(b.g, arch, {});
  ASSERT_EQ(a.units.size(), 1u);
  EXPECT_EQ(a.units[0].bytes_read, 4096);
  EXPECT_EQ(a.units[0].bytes_written, 4096);
  EXPECT_EQ(a.unfused.bytes, 8192);
  // memory 8,192 / 2.0e12 = 4.096 ns > vector 3,072 / 51.2e12 = 0.06 ns: memory-bound.
  EXPECT_DOUBLE_EQ(a.unfused.seconds, 8192 / 2.0e12);
  EXPECT_EQ(a.unfused.bottleneck.kind, "memory");
  // The fused bound is no higher: x and y once, 8,192 B.
  EXPECT_EQ(a.fused.bytes, 8192);
}

// What leaves a unit: an inner tensor that a later node reads is written, once, even if two
// later nodes read it; a tensor read by the unit twice is read once.
TEST(SolUnits, UnitBoundaryTraffic) {
  Builder b;
  const TensorId x = b.tensor("x", {256}, Role::kInput);         // 1,024 B
  const TensorId t = b.tensor("t", {256}, Role::kActivation);    // 1,024 B, read after the unit
  const TensorId u1 = b.tensor("u1", {256}, Role::kActivation);  // 1,024 B, internal
  const TensorId z = b.tensor("z", {256}, Role::kActivation);
  const TensorId w = b.tensor("w", {256}, Role::kActivation);
  b.node("a#0", {x}, {1024}, {t}, 0);
  b.node("b#0", {t, x}, {1024, 1024}, {u1}, 0);
  b.node("c#0", {t, u1}, {1024, 1024}, {z}, 0);
  b.node("d#0", {t}, {1024}, {w}, 0);
  b.output(z);
  b.output(w);
  Unit unit;
  unit.name = "op#0";
  unit.nodes = {0, 1};
  unit.declared = true;
  b.g.units = {unit};
  b.g.nodes[0].unit = b.g.nodes[1].unit = 0;  // c#0 and d#0 are units of their own
  // Unit 0 reads x once (1,024 B, capped) and writes t and u1 (both read later): 2,048 B.
  const auto [read, written] = unit_bytes(b.g, b.g.units[0]);
  EXPECT_EQ(read, 1024);
  EXPECT_EQ(written, 2048);
  // c#0: t + u1 + z = 3,072 B; d#0: t + w = 2,048 B. Total 1,024 + 2,048 + 3,072 + 2,048.
  const Analysis a = analyze(b.g, load("H100_PCIe"), {});
  EXPECT_EQ(a.unfused.bytes, 8192);
  EXPECT_EQ(unfused_bytes(b.g), 8192);
  // Three effective units in node order: the block, then c#0 and d#0 alone.
  const std::vector<Unit> units = effective_units(b.g);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[1].name, "c#0");
  ASSERT_EQ(a.units.size(), 3u);
  EXPECT_EQ(a.units[0].declared, 0);
  EXPECT_EQ(a.units[2].declared, -1);
  EXPECT_EQ(a.units[2].first, 3);
}

// --- bottleneck rules --------------------------------------------------------------------

// A spec with round numbers: matrix fp32 2e12, vector fp32 1e12, DRAM 1e12 B/s.
ArchSpec round_spec() {
  ArchSpec spec;
  spec.name = "round";
  spec.matrix_flops_per_second["fp32"] = {2e12, "test"};
  spec.vector_flops_per_second["fp32"] = {1e12, "test"};
  spec.dram_bytes_per_second = {1e12, "test"};
  return spec;
}

TEST(SolBottleneck, TiesGoToComputeAndViewsHaveNone) {
  Builder b;
  const TensorId x = b.tensor("x", {250}, Role::kInput);       // 1,000 B
  const TensorId v = b.tensor("v", {250}, Role::kActivation);  // view of x
  const TensorId y = b.tensor("y", {0}, Role::kActivation);    // 0 B, keeps the tie exact
  b.node("reshape#0", {x}, {0}, {v}, 0);
  b.g.tensors[v].storage = x;
  b.g.nodes[0].bytes_written = 0;  // a view moves nothing
  // 1,000 MACs = 2,000 FLOPs / 2e12 = 1 ns; reads 1,000 B / 1e12 = 1 ns: a tie, so compute.
  b.node("dot#0", {v}, {1000}, {y}, 1000);
  b.output(y);
  const Analysis a = analyze(b.g, round_spec(), {});
  EXPECT_EQ(a.nodes[0].bottleneck.kind, "none");
  EXPECT_EQ(a.nodes[0].seconds, 0.0);
  EXPECT_DOUBLE_EQ(a.nodes[1].matrix_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(a.nodes[1].memory_seconds, 1e-9);
  EXPECT_EQ(a.nodes[1].bottleneck.kind, "compute");
  EXPECT_EQ(a.nodes[1].bottleneck.unit, "matrix");
  // x is read through the view: fused bytes = 1,000 (x) + 0 (y) = 1,000.
  EXPECT_EQ(a.fused.bytes, 1000);
}

TEST(SolBottleneck, VectorTermAndFusedMaxOfSums) {
  Builder b;
  const TensorId x = b.tensor("x", {1000}, Role::kInput);       // 4,000 B
  const TensorId y = b.tensor("y", {1000}, Role::kActivation);  // 4,000 B
  const TensorId z = b.tensor("z", {1000}, Role::kActivation);  // 4,000 B
  // exp#0: 1,000 transcendental FLOPs + 1,000 adds = 2,000 / 1e12 = 2 ns vector;
  //        bytes 8,000 / 1e12 = 8 ns: memory-bound alone.
  b.node("exp#0", {x}, {4000}, {y}, 0);
  b.g.nodes[0].flops.transcendental = 1000;
  b.g.nodes[0].flops.add = 1000;
  // poly#1: 20,000 mul FLOPs / 1e12 = 20 ns vector; 8,000 B = 8 ns: vector-bound.
  b.node("poly#1", {y}, {4000}, {z}, 0);
  b.g.nodes[1].flops.mul = 20000;
  b.output(z);
  const Analysis a = analyze(b.g, round_spec(), {});
  EXPECT_EQ(a.nodes[0].bottleneck.kind, "memory");
  EXPECT_DOUBLE_EQ(a.nodes[0].vector_seconds, 2e-9);
  EXPECT_EQ(a.nodes[1].bottleneck.kind, "compute");
  EXPECT_EQ(a.nodes[1].bottleneck.unit, "vector");
  // Unfused: 8 ns + 20 ns = 28 ns; sums: vector 22 ns > memory 16 ns: compute (vector).
  EXPECT_DOUBLE_EQ(a.unfused.seconds, 28e-9);
  EXPECT_EQ(a.unfused.bottleneck.unit, "vector");
  EXPECT_EQ(a.unfused.vector_flops, 22000);
  // Fused: bytes = 4,000 (x) + 4,000 (z) = 8,000 -> 8 ns; max(22 ns vector, 8 ns) = 22 ns.
  EXPECT_EQ(a.fused.bytes, 8000);
  EXPECT_DOUBLE_EQ(a.fused.seconds, 22e-9);
  EXPECT_EQ(a.fused.bottleneck.unit, "vector");
}

// --- fused traffic -----------------------------------------------------------------------

TEST(SolFusedBytes, SumOfReadersCappedThroughViewsUnreadInputsAndDuplicateOutputs) {
  Builder b;
  const TensorId x = b.tensor("x", {1000}, Role::kInput);       // 4,000 B
  const TensorId w = b.tensor("w", {500}, Role::kWeight);       // 2,000 B
  const TensorId unused = b.tensor("u", {9999}, Role::kInput);  // never read: 0 B
  const TensorId rows = b.tensor("rows", {100}, Role::kActivation);
  const TensorId wv = b.tensor("wv", {2, 500}, Role::kActivation);  // broadcast view of w
  const TensorId y = b.tensor("y", {1000}, Role::kActivation);      // 4,000 B
  // gather#0 fetches only 100 rows of x: 400 B.
  b.node("gather#0", {x}, {400}, {rows}, 0);
  // expand#0 makes a view of w: reads nothing.
  b.node("expand#0", {w}, {0}, {wv}, 0);
  b.g.tensors[wv].storage = w;
  b.g.nodes[1].bytes_written = 0;
  // add#0 reads all of x (4,000 B) and the view (capped at w's 2,000 B).
  b.node("add#0", {x, wv, rows}, {4000, 2000, 400}, {y}, 0);
  b.output(y);
  b.output(y);  // returned twice: counted once
  (void)unused;
  // x: min(400 + 4,000, 4,000) = 4,000; w via its view: min(0 + 2,000, 2,000) = 2,000;
  // u: 0; y: 4,000. Total 10,000.
  EXPECT_EQ(fused_bytes(b.g), 10000);
}

// A program over x [64, 1024] fp32 (262,144 B) whose body reads views of x; `neg` copies an
// [M, N] tensor (its output: M x N x 4 B).
Graph views_program(const std::string& body, const std::string& x = "M,N",
                    const std::string& dims = R"({"M": 64, "N": 1024})") {
  const std::string src = R"(
@kernel
def neg(X: Tensor("A,B")) -> Tensor("A,B"):
    Y = Tensor(A=X.shape[0], B=X.shape[1])
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = 0.0 - X[a, b]
    return Y
@kernel
def sub(X: Tensor("A,B"), Z: Tensor("A,B")) -> Tensor("A,B"):
    Y = Tensor(A=X.shape[0], B=X.shape[1])
    for a in Dim("A", parallel=True):
        for b in Dim("B", parallel=True):
            Y[a, b] = X[a, b] - Z[a, b]
    return Y
@kernel
def neg1(X: Tensor("B")) -> Tensor("B"):
    Y = Tensor(B=X.shape[0])
    for b in Dim("B", parallel=True):
        Y[b] = 0.0 - X[b]
    return Y
DIMS = )" + dims + R"(
def model(x: Tensor(")" + x +
                          R"(", role="input")):
)" + body;
  return trace_program(load_program_source(src, "views.py"), {});
}

TEST(SolFusedBytes, DisjointSlicesOfAWeightAddUp) {
  // x [2, 500] (4,000 B) read as two per-layer selects of 2,000 B each: the reads add up to
  // the whole tensor, 4,000 B (a max over readers would say 2,000); outputs 2 x 2,000 B.
  const Graph g = views_program(R"(
    return neg1(select(x, dim=0, index=0)), neg1(select(x, dim=0, index=1))
)",
                                "L,N", R"({"L": 2, "N": 500})");
  EXPECT_EQ(fused_bytes(g), 8000);
}

TEST(SolFusedBytes, OneSliceReadTwiceIsFetchedOnce) {
  // a = x[:, 0:16] (64 x 16 x 4 = 4,096 B) read by two kernels: fetched once with unlimited
  // on-chip capacity. 4,096 (a) + 2 x 4,096 (the two outputs) = 12,288 B; the old sum of
  // readers said 16,384, above what a fused implementation moves.
  const Graph g = views_program(R"(
    a = slice(x, dim=1, start=0, stop=16)
    return neg(a), neg(a)
)");
  EXPECT_EQ(fused_bytes(g), 12288);
  // Two slice calls of the same range are the same elements: 12,288 B again.
  const Graph h = views_program(R"(
    return neg(slice(x, dim=1, start=0, stop=16)), neg(slice(x, dim=1, start=0, stop=16))
)");
  EXPECT_EQ(fused_bytes(h), 12288);
}

TEST(SolFusedBytes, OverlappingSlicesCountTheirUnion) {
  // x[:, 0:16] and x[:, 8:24] overlap in 8 columns: their union is 24 columns,
  // 64 x 24 x 4 = 6,144 B; outputs 2 x 4,096 B. Total 14,336 B (the sum said 16,384).
  const Graph g = views_program(R"(
    return neg(slice(x, dim=1, start=0, stop=16)), neg(slice(x, dim=1, start=8, stop=24))
)");
  EXPECT_EQ(fused_bytes(g), 14336);
  // Boxes over two dims: x[0:32, 0:16] and x[16:64, 8:24] (2,048 + 3,072 B) share
  // rows 16..31 x columns 8..15, 128 elements: union (512 + 768 - 128) x 4 = 4,608 B;
  // outputs 2,048 + 3,072 B. Total 9,728 B.
  const Graph h = views_program(R"(
    a = slice(slice(x, dim=0, start=0, stop=32), dim=1, start=0, stop=16)
    b = slice(slice(x, dim=0, start=16, stop=64), dim=1, start=8, stop=24)
    return neg(a), neg(b)
)");
  EXPECT_EQ(fused_bytes(h), 9728);
}

TEST(SolFusedBytes, ReshapedSlicesKeepTheirRegion) {
  // x [1, 2048] split in halves, each reshaped to [2048 / 2] (a size-1 dim goes): disjoint,
  // 2 x 4,096 B read, 2 x 4,096 B written = 16,384 B (silu_and_mul's two halves).
  const Graph g = views_program(R"(
    a = reshape(slice(x, dim=1, start=0, stop=1024), "H", H=1024)
    b = reshape(slice(x, dim=1, start=1024, stop=2048), "H", H=1024)
    return neg1(a), neg1(b)
)",
                                "M,N", R"({"M": 1, "N": 2048})");
  EXPECT_EQ(fused_bytes(g), 16384);
}

TEST(SolFusedBytes, RegionsItCannotCompareCountTheLargest) {
  // Even and odd columns of x[:, 0:32] are disjoint, but a strided slice is followed as its
  // bounding box, so the two overlap as far as the rule knows and the larger read counts:
  // 64 x 16 x 4 = 4,096 B, plus 2 x 4,096 B written = 12,288 B (a lower bound of the exact
  // 16,384: never above what an implementation moves).
  const Graph g = views_program(R"(
    return neg(slice(x, dim=1, start=0, stop=32, step=2)), neg(slice(x, dim=1, start=1, stop=32, step=2))
)");
  EXPECT_EQ(fused_bytes(g), 12288);
}

TEST(SolFusedBytes, AScalarReadThroughTwoViewsIsReadOnce) {
  // x a scalar (4 B) broadcast to [4] and to [8] (two views of one element): 4 B read, plus
  // 16 + 32 B written = 52 B. (Regression: two views of a rank-0 storage crashed the rule.)
  const Graph g = views_program(R"(
    return neg1(broadcast(x, "B", B=4)), neg1(broadcast(x, "C", C=8))
)",
                                "", R"({"M": 1})");
  EXPECT_EQ(fused_bytes(g), 52);
}

TEST(SolUnfusedBytes, ANodeReadsTwoOverlappingViewsOfOneTensorOnce) {
  // x[:, 1:] - x[:, :-1] (torch.diff): one node reads two views of x that share 1,022 of
  // their 1,023 columns; alone it fetches x once, 64 x 1,024 x 4 = 262,144 B (the sum said
  // 2 x 261,888 = 523,776, above eager's traffic), and writes 64 x 1,023 x 4 = 261,888 B.
  const Graph g = views_program(R"(
    return sub(slice(x, dim=1, start=1, stop=1024), slice(x, dim=1, start=0, stop=1023))
)");
  const Node& n = g.nodes.back();
  EXPECT_EQ(n.op, "sub");
  EXPECT_EQ(n.bytes_read, 262144);
  EXPECT_EQ(n.bytes_written, 261888);
  EXPECT_EQ(fused_bytes(g), 262144 + 261888);
}

TEST(SolUnfusedBytes, AUnitReadsASliceItsNodesShareOnce) {
  // silu(x[:, 0:16]) lowered as sigmoid and mul in one unit: both read the slice (4,096 B),
  // the unit fetches it once. Unit: 4,096 read + 4,096 written (the mul) = 8,192 B; the old
  // sum said 12,288.
  const Graph g = views_program(R"(
    a = slice(x, dim=1, start=0, stop=16)
    with unit("aten.silu"):
        s = neg(a)
        y = neg(neg(a))
    return y
)");
  AnalysisOptions o;
  o.cache_aware = false;
  const Analysis an = analyze(g, load("H100_PCIe"), o);
  ASSERT_EQ(an.units.size(), 2u);  // the slice (a view: 0 B) and the block
  EXPECT_EQ(an.units[1].declared, 0);
  EXPECT_EQ(an.units[1].bytes_read, 4096);
  EXPECT_EQ(an.units[1].bytes_written, 4096);
}

// A KV cache [B=8, S=64, D=16] fp32 (32,768 B) updated in place at position `start` with
// k [8, 1, 16] (512 B), then read whole by a dot with q [8, 16] (512 B) into [8, 64]
// (2,048 B); the program returns the scores and the updated cache.
Graph kv_program(const std::string& start, const std::string& extra = "") {
  const std::string src = R"(
@kernel
def dot(Q: Tensor("B,D"), K: Tensor("B,S,D")) -> Tensor("B,S"):
    Y = Tensor(B=Q.shape[0], S=K.shape[1], fill=0)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D"):
                Y[b, s] += Q[b, d] * K[b, s, d]
    return Y
DIMS = {"B": 8, "S": 64, "D": 16, "one": 1}
def model(cache: Tensor("B,S,D", role="weight"), q: Tensor("B,D", role="input"), k: Tensor("B,one,D", role="input")):
    new = update(cache, k, dim="S", start=)" +
                          start + R"()
)" + extra + R"(
    return dot(q, new), new
)";
  return trace_program(load_program_source(src, "kv.py"), {});
}

TEST(SolFusedBytes, AnInPlaceUpdateWritesOnlyItsElements) {
  const Graph g = kv_program("3");
  const Node& u = g.nodes.at(0);
  EXPECT_EQ(u.bytes_read, 512);     // k; nothing of the cache
  EXPECT_EQ(u.bytes_written, 512);  // k's 128 elements, in the cache's memory
  EXPECT_EQ(g.tensors.at(u.outputs.at(0)).storage, g.tensors.at(u.inputs.at(0)).storage);
  // Fused: the cache's old elements the dot reads, less the 512 B the update wrote (they are
  // on chip) = 32,256; k 512; q 512; the in-place write 512; the scores 2,048; the returned
  // cache is that memory: 0. Total 35,840 B. (A copy of the cache, as concat lowered it,
  // would be 32,768 more written and read: above what eager PyTorch moves.)
  EXPECT_EQ(fused_bytes(g), 35840);
  // Unfused: the update alone 512 + 512; the dot reads q 512 and the cache 32,768 and
  // writes 2,048. Total 36,352 B.
  AnalysisOptions o;
  o.cache_aware = false;
  EXPECT_EQ(analyze(g, load("H100_PCIe"), o).unfused.bytes, 36352);
}

TEST(SolFusedBytes, WritingBackTheSameElementsIsNoUpdate) {
  // update(new, new[:, 3:4], start=3) puts back what is there (functionalisation's write-back
  // after `y[:, 1:3] += 1`): the result is `new` itself, no node and no bytes. The graph: the
  // first update, the slice view, the dot; fused 35,840 B as above.
  const Graph g = kv_program(
      "3", "    new = update(new, slice(new, dim=\"S\", start=3, stop=4), dim=\"S\", start=3)");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[1].builtin, Builtin::kSlice);
  EXPECT_EQ(fused_bytes(g), 35840);
}

TEST(SolFusedBytes, UpdateErrorsNameTheMismatch) {
  testing::expect_user_error([&] { kv_program("64"); }, ErrorKind::kShape,
                             "update(): src's 1 elements along dim 'S' from 64 in steps of 1 do "
                             "not fit in base's 64");
  testing::expect_user_error([&] { kv_program("3, step=0"); }, ErrorKind::kShape,
                             "update(): step must be at least 1");
  testing::expect_user_error([&] { kv_program("0", "    bad = update(cache, q, dim=\"S\")"); },
                             ErrorKind::kShape,
                             "src (B=8, D=16) must have base's shape (B=8, S=64, D=16) except "
                             "along dim 'S'");
}

TEST(SolFusedBytes, MissingInputBytesIsAnInternalError) {
  Graph g = linear_bias_matmul();
  g.nodes[1].input_bytes.pop_back();
  EXPECT_THROW(fused_bytes(g), InternalError);
}

// A contraction of casts up (PyTorch's `a.float() @ b.float().T` on bf16 a, b): the MACs
// multiply bf16 values, which a bf16 MMA takes exactly (each product of two 8-bit
// significands fits fp32's 24) and accumulates in fp32, as the program does.
Graph cast_matmul_program(const std::string& a_dtype, const std::string& b_dtype,
                          const std::string& between = "") {
  const std::string src = R"(
@kernel
def mm_nt(A: Tensor("M,K"), B: Tensor("N,K")) -> Tensor("M,N", dtype="fp32"):
    C = Tensor(M=A.shape[0], N=B.shape[0], dtype="fp32")
    for m in Dim("M", parallel=True):
        for n in Dim("N", parallel=True):
            for k in Dim("K"):
                C[m, n] += A[m, k] * B[n, k]
    return C
@kernel
def twice(X: Tensor("A,B")) -> Tensor("A,B"):
    Y = Tensor(A=X.shape[0], B=X.shape[1])
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j] * 2.0
    return Y
@kernel
def copy2(X: Tensor("A,B")) -> Tensor("A,B"):
    Y = Tensor(A=X.shape[0], B=X.shape[1])
    for i in Dim("A", parallel=True):
        for j in Dim("B", parallel=True):
            Y[i, j] = X[i, j]
    return Y
DIMS = {"M": 256, "N": 512, "K": 1024}
def model(a: Tensor("M,K", role="input", dtype=")" +
                          a_dtype + R"("),
          b: Tensor("N,K", role="input", dtype=")" +
                          b_dtype + R"(")):
    t1 = cast(a, "fp32")
    t2 = permute(permute(cast(b, "fp32"), "K,N"), "N,K")
)" + between + R"(
    return mm_nt(t1, t2)
)";
  return trace_program(load_program_source(src, "cast_mm.py"), {});
}

TEST(SolMathMode, CastsUpMultiplyTheirNarrowValues) {
  // 256 x 512 x 1024 = 134,217,728 MACs, 268,435,456 FLOPs. H100 SXM: bf16 989.4e12 and fp8
  // 1978.9e12 dense (its spec); fp32 MACs have no matrix rate there (66.9e12 vector).
  const ArchSpec h100 = load("H100_SXM");
  const Analysis bf = analyze(cast_matmul_program("bf16", "bf16"), h100, {});
  EXPECT_EQ(bf.math_mode, "bf16 (fp32 operands holding bf16 values)");
  EXPECT_DOUBLE_EQ(bf.fused.matrix_seconds, 268435456.0 / 989.4e12);
  // e4m3 values through a transpose and back: the fp8 rate.
  const Analysis f8 = analyze(cast_matmul_program("fp8_e4m3", "fp8_e4m3"), h100, {});
  EXPECT_EQ(f8.math_mode, "fp8 (fp32 operands holding fp8_e4m3 values)");
  EXPECT_DOUBLE_EQ(f8.fused.matrix_seconds, 268435456.0 / 1978.9e12);
  // bf16 times fp16 values: no 16-bit format holds both, TF32 does (494.7e12), also under
  // --fp32-math fp32 (true fp32: the vector rate, 66.9e12): the products are the same.
  AnalysisOptions fp32;
  fp32.fp32_math = Fp32Math::kFp32;
  const Analysis mixed = analyze(cast_matmul_program("bf16", "fp16"), h100, fp32);
  EXPECT_EQ(mixed.math_mode, "tf32 (fp32 operands holding bf16 and fp16 values)");
  EXPECT_DOUBLE_EQ(mixed.fused.matrix_seconds, 268435456.0 / 494.7e12);
  // A kernel that only copies (repeat_interleave's copy, no arithmetic) moves the values.
  EXPECT_EQ(analyze(cast_matmul_program("bf16", "bf16", "    t1 = copy2(t1)"), h100, {}).math_mode,
            "bf16 (fp32 operands holding bf16 values)");
  // fp8 times bf16 values: bf16 holds both.
  EXPECT_EQ(analyze(cast_matmul_program("fp8_e5m2", "bf16"), h100, {}).math_mode,
            "bf16 (fp32 operands holding fp8_e5m2 and bf16 values)");
}

TEST(SolMathMode, ComputedOperandsKeepTheirDtype) {
  // t1 * 2.0 is a new fp32 value: no narrower MMA multiplies it exactly. The node's own
  // fp32 mode stays: true fp32 under --fp32-math fp32 (vector units on H100 SXM: 66.9e12).
  const ArchSpec h100 = load("H100_SXM");
  AnalysisOptions fp32;
  fp32.fp32_math = Fp32Math::kFp32;
  const Analysis a = analyze(cast_matmul_program("bf16", "bf16", "    t1 = twice(t1)"), h100, fp32);
  ASSERT_EQ(a.math_modes.size(), 1u);
  EXPECT_EQ(a.math_mode, "fp32 (--fp32-math fp32; vector units, no matrix rate)");
  EXPECT_DOUBLE_EQ(a.fused.matrix_seconds, 268435456.0 / 66.9e12);
  // fp32 inputs: nothing to narrow.
  EXPECT_EQ(analyze(cast_matmul_program("fp32", "fp32"), h100, fp32).math_modes[0].mode, "fp32");
  // An fp64 contraction accumulates in fp64: casts of bf16 up to fp64 keep fp64.
  Builder b;
  const TensorId x = b.tensor("x", {64, 64}, Role::kInput, DType::kBf16);
  const TensorId x64 = b.tensor("x64", {64, 64}, Role::kActivation, DType::kFp64);
  const TensorId y = b.tensor("y", {64, 64}, Role::kActivation, DType::kFp64);
  b.node("cast#0", {x}, {8192}, {x64}, 0);
  b.g.nodes.back().kind = NodeKind::kDataMovement;
  b.g.nodes.back().builtin = Builtin::kCast;
  b.node("mm#0", {x64, x64}, {32768, 32768}, {y}, 262144, DType::kFp64);
  b.output(y);
  EXPECT_EQ(analyze(b.g, h100, {}).math_modes[0].mode, "fp64");
}

// x.float()[ids] on bf16 x [64, 256] (32,768 B) with ids [2] int64 (16 B): a fused kernel
// casts only the two gathered rows, 2 x 256 x 2 = 1,024 B of x; it writes 2 x 256 fp32
// (2,048 B). Returning the cast too needs all of x and writes the cast (65,536 B).
Graph cast_gather_program(const std::string& returns) {
  const std::string src = R"(
DIMS = {"E": 64, "R": 256, "M": 2}
def model(x: Tensor("E,R", role="input", dtype="bf16"), ids: Tensor("M", role="input", dtype="int64")):
    t = cast(x, "fp32")
    g = gather(reshape(t, "E,R"), ids, dim="E")
    return )" + returns + "\n";
  return trace_program(load_program_source(src, "cast_gather.py"), {});
}

TEST(SolFusedBytes, ACastReadOnlyThroughAGatherReadsTheGatheredRows) {
  EXPECT_EQ(fused_bytes(cast_gather_program("g")), 16 + 1024 + 2048);  // 34,832 before
  EXPECT_EQ(fused_bytes(cast_gather_program("g, t")), 16 + 32768 + 2048 + 65536);
}

TEST(SolFusedBytes, DisjointSlicesOfACastAddUp) {
  // x bf16 [2, 500] (2,000 B) cast up, each row read by its own kernel: both rows are needed,
  // 2,000 B (the largest single read would say 1,000); outputs 2 x 500 fp32 = 4,000 B.
  const std::string src = R"(
@kernel
def neg1(X: Tensor("B")) -> Tensor("B"):
    Y = Tensor(B=X.shape[0])
    for b in Dim("B", parallel=True):
        Y[b] = 0.0 - X[b]
    return Y
DIMS = {"L": 2, "N": 500}
def model(x: Tensor("L,N", role="input", dtype="bf16")):
    t = cast(x, "fp32")
    return neg1(select(t, dim=0, index=0)), neg1(select(t, dim=0, index=1))
)";
  EXPECT_EQ(fused_bytes(trace_program(load_program_source(src, "rows.py"), {})), 2000 + 4000);
}

TEST(SolFusedBytes, APermutationIsReadWhereItsResultIsNeeded) {
  // x fp32 [4, 500] (8,000 B) transposed by a copying permute, and one row of the result
  // (column 0 of x, 4 elements) read: the permute needs 16 B of x, not 8,000; output 16 B.
  const std::string src = R"(
@kernel
def neg1(X: Tensor("B")) -> Tensor("B"):
    Y = Tensor(B=X.shape[0])
    for b in Dim("B", parallel=True):
        Y[b] = 0.0 - X[b]
    return Y
DIMS = {"L": 4, "N": 500}
def model(x: Tensor("L,N", role="input")):
    t = permute(x, "N,L")
    return neg1(select(t, dim=0, index=0))
)";
  EXPECT_EQ(fused_bytes(trace_program(load_program_source(src, "perm.py"), {})), 16 + 16);
}

}  // namespace
}  // namespace solar
