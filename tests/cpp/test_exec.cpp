#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

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

TEST(Array, AllocateIsAlignedZeroedAndReusesLargeBlocks) {
  // 64-byte aligned and zeroed, for every size from 1 to 200 bytes.
  for (int64_t n = 1; n <= 50; ++n) {
    const Array a = Array::allocate(DType::kFp32, {n});
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data) % 64, 0u) << n;
    const auto* p = static_cast<const unsigned char*>(a.data);
    for (int64_t i = 0; i < 4 * n; ++i) ASSERT_EQ(p[i], 0) << n;
  }
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SOLAR_TEST_OWN_MALLOC 1  // the sanitizer's allocator replaces glibc's
#endif
#endif
#if defined(__GLIBC__) && !defined(SOLAR_TEST_OWN_MALLOC) && !defined(__SANITIZE_ADDRESS__)
  // A freed 8 MiB output is reused by the next one of that size: its zeroing faults in
  // none of its 2,048 pages of 4 KiB again. Aligned allocation (aligned new) mapped a fresh
  // block each time and faulted all 2,048. Allowed: 64, for other allocations and the
  // first use of heap it did not map before.
  const auto faults = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
  };
  for (int warm = 0; warm < 2; ++warm) Array::allocate(DType::kFp32, {2 << 20});
  const long before = faults();
  for (int i = 0; i < 4; ++i) Array::allocate(DType::kFp32, {2 << 20});
  EXPECT_LT(faults() - before, 64);
#endif
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

TEST(Interpreter, CostEstimateWithPackedGemms) {
  // The native GEMM path packs A, B and C of each contraction in fp32. linear (BMK,NK->BMN,
  // B=2 M=128 K=256 N=512): A 65,536 + B 131,072 + C 131,072 elements = 1,310,720 B, while
  // the inputs (919,552 B) and Y (524,288 B) are live: 2,754,560 B. The second product
  // (BMN,NP->BMP, P=64) packs 131,072 + 32,768 + 16,384 elements = 720,896 B beside
  // 1,509,376 B live: 2,230,272 B, less.
  const Program p = load_program(testing::example("linear_bias_matmul.py"));
  const ExecCost c = estimate_cost(trace_program(p, {}), /*packed_gemms=*/true);
  EXPECT_EQ(c.peak_bytes, 2754560);
}

// The native backend on a fresh cache directory of this test.
struct NativeFixture : ::testing::Test {
  std::filesystem::path dir;
  ExecOptions options;
  Program program = load_program(testing::example("linear_bias_matmul.py"));
  Graph graph;
  std::vector<Array> in;

  void SetUp() override {
    dir = std::filesystem::path(::testing::TempDir()) /
          ("solar-native-" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir);
    options.backend = Backend::kNative;
    options.cache_dir = dir.string();
    options.include_dir = testing::source_dir() + "/include";
    TraceOptions o;
    o.dims = {{"B", 2}, {"M", 4}, {"K", 3}, {"N", 5}, {"P", 2}};
    graph = trace_program(program, o);
    in = {filled(DType::kFp32, {2, 4, 3}, 1.0f), filled(DType::kFp32, {5, 3}, 1.0f),
          filled(DType::kFp32, {5}, 0.5f), filled(DType::kFp32, {5, 2}, 1.0f)};
  }
  // Z = 17.5 everywhere (see PaperExampleOnConstantInputs).
  void expect_paper_result(const std::vector<Array>& out) {
    ASSERT_EQ(out.size(), 1u);
    const float* z = static_cast<const float*>(out[0].data);
    for (int64_t i = 0; i < out[0].elements(); ++i) EXPECT_FLOAT_EQ(z[i], 17.5f);
  }
};

TEST_F(NativeFixture, RunsNativelyAndReportsIt) {
  ExecReport r;
  expect_paper_result(execute(program, graph, in, options, &r));
  EXPECT_EQ(r.backend, Backend::kNative);
  EXPECT_EQ(r.native_calls, 2);  // linear#0 and matmul#0
  EXPECT_EQ(r.interpreted_calls, 0);
  EXPECT_EQ(r.fallback_reason, "");
}

TEST_F(NativeFixture, AMissingCompilerIsACompileError) {
  options.compiler = "/nonexistent/c++";
  testing::expect_user_error([&] { execute(program, graph, in, options); }, ErrorKind::kCompile,
                             "cannot run '/nonexistent/c++': No such file or directory");
  EXPECT_EQ(native_unavailable_reason(options),
            "the C++ compiler '/nonexistent/c++' was not found");
}

TEST_F(NativeFixture, FallbackIsTheCallersSessionNotTheProcesses) {
  options.compiler = "/nonexistent/c++";
  options.fallback_to_interpreter = true;
  NativeSession session;
  options.session = &session;
  ExecReport r;
  expect_paper_result(execute(program, graph, in, options, &r));
  EXPECT_EQ(r.backend, Backend::kInterpreter);
  EXPECT_EQ(r.native_calls, 0);
  EXPECT_EQ(r.interpreted_calls, 2);
  EXPECT_NE(r.fallback_reason.find("cannot run '/nonexistent/c++'"), std::string::npos);
  EXPECT_EQ(session.unavailable(), r.fallback_reason);
  // Another session (a working compiler) is not affected.
  ExecOptions fresh = options;
  fresh.compiler = "c++";
  fresh.session = nullptr;
  fresh.fallback_to_interpreter = false;
  ExecReport r2;
  expect_paper_result(execute(program, graph, in, fresh, &r2));
  EXPECT_EQ(r2.backend, Backend::kNative);
  EXPECT_EQ(r2.native_calls, 2);
}

TEST_F(NativeFixture, ATruncatedCachedKernelIsRebuilt) {
  expect_paper_result(execute(program, graph, in, options));
  int damaged = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".so") continue;
    std::filesystem::resize_file(e.path(), std::filesystem::file_size(e.path()) / 3);
    ++damaged;
  }
  EXPECT_EQ(damaged, 2);
  ExecReport r;
  expect_paper_result(execute(program, graph, in, options, &r));  // no SIGBUS
  EXPECT_EQ(r.native_calls, 2);
}

TEST_F(NativeFixture, CancelStopsTheRun) {
  std::atomic<bool> cancel{true};
  options.cancel = &cancel;
  EXPECT_THROW(execute(program, graph, in, options), Interrupted);
}

TEST_F(NativeFixture, WithoutBoundsChecksTheVectorAndGemmPathsAgreeAndCancel) {
  // Both calls of the paper example are contractions (the GEMM path, with the bias nest on
  // the vector path): Z = 17.5 as above, and a set flag stops them.
  options.bounds_check = false;
  ExecReport r;
  expect_paper_result(execute(program, graph, in, options, &r));
  EXPECT_EQ(r.native_calls, 2);
  std::atomic<bool> cancel{true};
  options.cancel = &cancel;
  EXPECT_THROW(execute(program, graph, in, options), Interrupted);
}

TEST_F(NativeFixture, LongWorkIsAnnouncedForCompilesInterpretedCallsAndBigRunsOnly) {
  // ExecOptions::before_long_work is where the Python binding starts its Ctrl-C watcher.
  int calls = 0;
  options.before_long_work = [&] { ++calls; };
  expect_paper_result(execute(program, graph, in, options));
  EXPECT_EQ(calls, 2);  // before each of the two compiles (linear#0, matmul#0): a fresh cache
  calls = 0;
  expect_paper_result(execute(program, graph, in, options));
  // Cached kernels, and 240 points plus their FLOPs, far below 2^26: linear#0's product
  // 2*4*5*3 = 120 and bias 2*4*5 = 40, matmul#0's 2*4*2*5 = 80.
  EXPECT_EQ(calls, 0);
  ExecOptions interp = options;
  interp.backend = Backend::kInterpreter;
  expect_paper_result(execute(program, graph, in, interp));
  EXPECT_EQ(calls, 1);  // once per run, before the first interpreted call
  // A session whose native backend failed falls back without compiling: each fallen-back
  // call is interpreted, so each is announced (linear#0 and matmul#0).
  NativeSession failed;
  ExecOptions fallback = options;
  fallback.compiler = "/nonexistent/c++";
  fallback.fallback_to_interpreter = true;
  fallback.session = &failed;
  expect_paper_result(execute(program, graph, in, fallback));
  calls = 0;
  expect_paper_result(execute(program, graph, in, fallback));
  EXPECT_EQ(calls, 2);
  // linear#0 at B=16, M=1024, K=128, N=64: its product alone is 16*1024*128*64 =
  // 134,217,728 = 2^27 points, over 2^26 with the first node: told once, kernels cached.
  TraceOptions big;
  big.dims = {{"B", 16}, {"M", 1024}, {"K", 128}, {"N", 64}, {"P", 2}};
  const Graph g = trace_program(program, big);
  const std::vector<Array> bin = {
      filled(DType::kFp32, {16, 1024, 128}, 0.0f), filled(DType::kFp32, {64, 128}, 0.0f),
      filled(DType::kFp32, {64}, 0.0f), filled(DType::kFp32, {64, 2}, 0.0f)};
  options.bounds_check = false;
  execute(program, g, bin, options);  // compiles what this size needs
  calls = 0;
  execute(program, g, bin, options);
  EXPECT_EQ(calls, 1);
}

TEST_F(NativeFixture, TheDefaultCacheIsPrivateAndPerUser) {
  // With no cache_dir the kernels go to $XDG_CACHE_HOME/solar/kernels, as Python's
  // solar.execution.cache_dir says (before: <temp>/solar-kernels, shared by every user).
  // Solar creates solar/ and kernels/ 0700 (mode bits & 0777 == 0700). The two kernels of
  // the paper example (linear#0, matmul#0) are there: 2 objects, 2 records, 2 sources.
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string restore = saved ? saved : "";
  std::filesystem::create_directories(dir);
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  options.cache_dir = "";
  ExecReport r;
  expect_paper_result(execute(program, graph, in, options, &r));
  if (saved) {
    ::setenv("XDG_CACHE_HOME", restore.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
  EXPECT_EQ(r.native_calls, 2);
  const std::filesystem::path kernels = dir / "solar" / "kernels";
  for (const auto& d : {dir / "solar", kernels}) {
    struct stat st {};
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
  std::map<std::string, int> kinds;
  for (const auto& e : std::filesystem::directory_iterator(kernels))
    ++kinds[e.path().extension().string()];
  EXPECT_EQ(kinds, (std::map<std::string, int>{{".cpp", 2}, {".meta", 2}, {".so", 2}}));
}

// How many loaded objects are kernels: loaded through /proc/self/fd, or (before kernels were
// loaded from their verified descriptor) from `dir`.
int loaded_kernels(const std::filesystem::path& dir) {
  struct Count {
    std::string dir;
    int kernels = 0;
  } count{dir.string() + "/"};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* c = static_cast<Count*>(data);
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.rfind("/proc/self/fd/", 0) == 0 || name.rfind(c->dir, 0) == 0) ++c->kernels;
        return 0;
      },
      &count);
  return count.kernels;
}

TEST_F(NativeFixture, ASessionUnloadsItsKernelsButKeepsTheLibrariesTheyPulledIn) {
  // Kernels are loaded from their verified descriptor (/proc/self/fd/N): pinning still tells
  // them from the libraries they use. While the session lives its 2 kernels (linear#0,
  // matmul#0) are loaded; after it ends none is, and libgomp (pinned) stays loaded, so its
  // idle threads never run unmapped code.
  const int before = loaded_kernels(dir);
  {
    NativeSession session;
    options.session = &session;
    options.bounds_check = false;  // parallel code: the kernels use libgomp
    expect_paper_result(execute(program, graph, in, options));
    EXPECT_EQ(loaded_kernels(dir) - before, 2);
  }
  EXPECT_EQ(loaded_kernels(dir), before);
  EXPECT_NE(dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(OpenBlasCore, FollowsTheCpusFeaturesNotItsModel) {
  // The machine: an AVX-512 Xeon whose model OpenBLAS 0.3.21 does not know (it ran a
  // generic kernel); AVX-512 F, BW, DQ, VL and CD name SkylakeX whatever the model.
  CpuFeatures cpu{true, true, true, true, true, true, true, true};
  EXPECT_STREQ(openblas_core_for(cpu), "SkylakeX");
  cpu.avx512bw = false;  // AVX-512 F alone (Knights Landing): not SkylakeX's kernels
  EXPECT_STREQ(openblas_core_for(cpu), "Haswell");
  cpu = CpuFeatures{true, true, true};  // AVX2 and FMA (Haswell, Zen 1-3)
  EXPECT_STREQ(openblas_core_for(cpu), "Haswell");
  cpu.fma = false;
  EXPECT_STREQ(openblas_core_for(cpu), "Sandybridge");
  EXPECT_EQ(openblas_core_for(CpuFeatures{}), nullptr);  // SSE only: OpenBLAS chooses
}

}  // namespace
}  // namespace solar
