#include <gtest/gtest.h>

#include <cstring>

#include "solar/exec/executor.h"
#include "solar/pipeline/pipeline.h"
#include "test_util.h"

namespace solar {
namespace {

Array filled(DType dtype, std::vector<int64_t> shape, float value) {
  Array a = Array::allocate(dtype, std::move(shape));
  float* p = static_cast<float*>(a.data);
  for (int64_t i = 0; i < a.elements(); ++i) p[i] = value;
  return a;
}

TEST(Interpreter, PaperExampleOnConstantInputs) {
  // x = 1, fc_weight = 1, fc_bias = 0.5, D = 1 (B=2, M=4, K=3, N=5, P=2):
  // Y = bias + Σ_k x·w = 0.5 + K = 3.5; Z = Σ_n Y·D = N · 3.5 = 17.5 everywhere.
  const Program p = load_program(testing::example("linear_bias_matmul.py"));
  TraceOptions o;
  o.dims = {{"B", 2}, {"M", 4}, {"K", 3}, {"N", 5}, {"P", 2}};
  const Graph g = trace_program(p, o);
  std::vector<Array> in = {filled(DType::kFp32, {2, 4, 3}, 1.0f),
                           filled(DType::kFp32, {5, 3}, 1.0f), filled(DType::kFp32, {5}, 0.5f),
                           filled(DType::kFp32, {5, 2}, 1.0f)};
  const std::vector<Array> out = execute(p, g, in, ExecOptions{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 4, 2}));
  const float* z = static_cast<const float*>(out[0].data);
  for (int64_t i = 0; i < out[0].elements(); ++i) EXPECT_FLOAT_EQ(z[i], 17.5f);
}

TEST(Interpreter, InputShapeMismatchNamesTheParameter) {
  const Program p = load_program(testing::example("linear_bias_matmul.py"));
  const Graph g = trace_program(p, {});
  std::vector<Array> in = {filled(DType::kFp32, {2, 128, 255}, 0),
                           filled(DType::kFp32, {512, 256}, 0), filled(DType::kFp32, {512}, 0),
                           filled(DType::kFp32, {512, 64}, 0)};
  testing::expect_user_error([&] { execute(p, g, in, ExecOptions{}); }, ErrorKind::kInput,
                             "input 'x' must have shape [2, 128, 256] (B,M,K), got [2, 128, 255]");
}

TEST(Interpreter, CostEstimateOfThePaperExample) {
  // Live arrays at the peak: inputs 4·(65,536 + 131,072 + 512 + 32,768) = 919,552 B, plus
  // Y (524,288 B) while it exists, plus Z (65,536 B): 1,509,376 B.
  const Program p = load_program(testing::example("linear_bias_matmul.py"));
  const ExecCost c = estimate_cost(trace_program(p, {}));
  EXPECT_EQ(c.peak_bytes, 1509376);
}

}  // namespace
}  // namespace solar
