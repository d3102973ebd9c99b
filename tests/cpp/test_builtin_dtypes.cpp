// Every builtin over every dtype (and every pair of dtypes for the builtins that take two
// tensors), on both backends: the tracer rejects what has no single output dtype (concat and
// stack of different dtypes, a gather with a floating index), and everything it accepts runs
// with the right values and never writes past a buffer (the sanitizer build, `make
// cpp-sanitize`, runs this test under AddressSanitizer). Each program also passes the
// builtin's output through a kernel (`ident`), so that the native backend's compiled code
// reads every dtype a builtin writes.
//
// Inputs hold small integers, which every dtype represents exactly (nvfp4's e2m1 has 0, 1, 2,
// 3; bool has 0, 1): element i of an input is (i + offset) % 4 (bool: % 2), so the expected
// output of a copy is the input element it comes from, written out per builtin below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "solar/exec/executor.h"
#include "solar/pipeline/pipeline.h"
#include "test_util.h"

namespace solar {
namespace {

const std::vector<DType> kAllDtypes = {
    DType::kFp64,    DType::kFp32,    DType::kTf32,  DType::kBf16,  DType::kFp16,
    DType::kFp8E4M3, DType::kFp8E5M2, DType::kNvfp4, DType::kInt64, DType::kInt32,
    DType::kInt16,   DType::kInt8,    DType::kUint8, DType::kInt4,  DType::kBool,
};

double value(DType dtype, int64_t i, int64_t offset) {
  return static_cast<double>((i + offset) % (dtype == DType::kBool ? 2 : 4));
}

// An input of `dtype` and `shape` holding value(dtype, i, offset).
Array input(DType dtype, std::vector<int64_t> shape, int64_t offset) {
  Array a = Array::allocate(dtype, std::move(shape));
  for (int64_t i = 0; i < a.elements(); ++i) a.store(i, value(dtype, i, offset));
  return a;
}

// One program: model() computes `expr` from its parameters, returns it and ident() of it
// flattened to `flat` elements (ident keeps `out_dtype`).
std::string program(const std::string& params, const std::string& expr, DType out_dtype,
                    int64_t flat) {
  const std::string d = dtype_name(out_dtype);
  return "@kernel\n"
         "def ident(X: Tensor(\"F\")) -> Tensor(\"F\", dtype=\"" +
         d +
         "\"):\n"
         "    Y = Tensor(F=X.shape[0], dtype=\"" +
         d +
         "\")\n"
         "    for f in Dim(\"F\"):\n"
         "        Y[f] = X[f]\n"
         "    return Y\n"
         "DIMS = {\"R\": 2, \"C\": 3, \"V\": 4, \"K\": 2}\n"
         "def model(" +
         params +
         "):\n"
         "    y = " +
         expr +
         "\n"
         "    return y, ident(reshape(y, \"F\", F=" +
         std::to_string(flat) + "))\n";
}

ExecOptions options(Backend backend) {
  ExecOptions o;
  o.backend = backend;
  o.cache_dir = SOLAR_TEST_KERNEL_CACHE;
  o.include_dir = std::string(SOLAR_SOURCE_DIR) + "/include";
  o.fallback_to_interpreter = false;  // the native backend must really run
  return o;
}

// Runs `src` on `inputs` with both backends; both outputs must equal `expected` element by
// element (`expected(i)` for i < n), with the dtype `out_dtype`.
void expect_runs(const std::string& what, const std::string& src, std::vector<Array> inputs,
                 DType out_dtype, int64_t n, const std::function<double(int64_t)>& expected) {
  SCOPED_TRACE(what);
  const Program p = load_program_source(src, "builtin.py");
  const Graph g = trace_program(p, {});
  for (Backend backend : {Backend::kInterpreter, Backend::kNative}) {
    SCOPED_TRACE(backend == Backend::kNative ? "native" : "interpreter");
    const std::vector<Array> out = execute(p, g, inputs, options(backend));
    ASSERT_EQ(out.size(), 2u);
    for (const Array& a : out) {
      ASSERT_EQ(a.dtype, out_dtype);
      ASSERT_EQ(a.elements(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(a.load(i), expected(i)) << "element " << i;
    }
  }
}

std::string tensor(const std::string& name, const std::string& dims, DType dtype) {
  return name + ": Tensor(\"" + dims + "\", role=\"input\", dtype=\"" + dtype_name(dtype) + "\")";
}

TEST(BuiltinDtypes, ConcatAndStackOfEveryDtypePair) {
  // a [2, 3] (offset 0), b [2, 2] for concat / [2, 3] for stack (offset 1).
  // concat along C: out [2, 5], out[r, c] = a[r, c] for c < 3, else b[r, c - 3].
  // stack: out [2, 2, 3], out[0] = a, out[1] = b.
  for (DType da : kAllDtypes) {
    for (DType db : kAllDtypes) {
      const std::string cat = program(tensor("a", "R,C", da) + ", " + tensor("b", "R,K", db),
                                      "concat([a, b], dim=\"C\")", da, 10);
      const std::string stk = program(tensor("a", "R,C", da) + ", " + tensor("b", "R,C", db),
                                      "stack([a, b], dim=\"L\")", da, 12);
      if (da != db) {
        for (const std::string& src : {cat, stk}) {
          testing::expect_user_error(
              [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
              std::string("the tensors must have one dtype, but 'a' is ") + dtype_name(da) +
                  " and 'b' is " + dtype_name(db));
        }
        continue;
      }
      const std::string pair = std::string(dtype_name(da)) + " + " + dtype_name(db);
      expect_runs("concat " + pair, cat, {input(da, {2, 3}, 0), input(db, {2, 2}, 1)}, da, 10,
                  [&](int64_t i) {
                    const int64_t r = i / 5, c = i % 5;
                    return c < 3 ? value(da, r * 3 + c, 0) : value(db, r * 2 + c - 3, 1);
                  });
      expect_runs("stack " + pair, stk, {input(da, {2, 3}, 0), input(db, {2, 3}, 1)}, da, 12,
                  [&](int64_t i) { return i < 6 ? value(da, i, 0) : value(db, i - 6, 1); });
    }
  }
}

TEST(BuiltinDtypes, GatherOfEveryTableAndIndexDtype) {
  // table [4, 3] (offset 0), index [2] = (3, 1) (bool: (1, 0)); out [2, 3] = the rows.
  for (DType dt : kAllDtypes) {
    for (DType di : kAllDtypes) {
      const std::string src = program(tensor("t", "V,C", dt) + ", " + tensor("i", "K", di),
                                      "gather(t, i, dim=\"V\")", dt, 6);
      if (dtype_is_float(di)) {
        testing::expect_user_error(
            [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
            "must have an integer dtype");
        continue;
      }
      const std::vector<int64_t> rows =
          di == DType::kBool ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{3, 1};
      Array index = Array::allocate(di, {2});
      index.store(0, static_cast<double>(rows[0]));
      index.store(1, static_cast<double>(rows[1]));
      expect_runs(std::string("gather ") + dtype_name(dt) + "[" + dtype_name(di) + "]", src,
                  {input(dt, {4, 3}, 0), index}, dt, 6, [&](int64_t i) {
                    return value(dt, rows[static_cast<size_t>(i / 3)] * 3 + i % 3, 0);
                  });
    }
  }
}

TEST(BuiltinDtypes, TopkOfEveryDtype) {
  // x [2, 3] (offset 0): the 2 largest of each row, best first, ties in index order; e.g.
  // fp32 rows (0, 1, 2) and (3, 0, 1) give values (2, 1), (3, 1) and indices (2, 1), (0, 2).
  for (DType dt : kAllDtypes) {
    std::vector<double> best;
    std::vector<int64_t> at;
    for (int64_t r = 0; r < 2; ++r) {
      std::vector<int64_t> order = {0, 1, 2};
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return value(dt, r * 3 + a, 0) > value(dt, r * 3 + b, 0);
      });
      for (int64_t k = 0; k < 2; ++k) {
        best.push_back(value(dt, r * 3 + order[static_cast<size_t>(k)], 0));
        at.push_back(order[static_cast<size_t>(k)]);
      }
    }
    const std::string x = tensor("x", "R,C", dt);
    expect_runs(std::string("topk values ") + dtype_name(dt),
                program(x, "topk(x, k=2, dim=\"C\")[0]", dt, 4), {input(dt, {2, 3}, 0)}, dt, 4,
                [&](int64_t i) { return best[static_cast<size_t>(i)]; });
    expect_runs(std::string("topk indices ") + dtype_name(dt),
                program(x, "topk(x, k=2, dim=\"C\")[1]", DType::kInt64, 4), {input(dt, {2, 3}, 0)},
                DType::kInt64, 4,
                [&](int64_t i) { return static_cast<double>(at[static_cast<size_t>(i)]); });
  }
}

TEST(BuiltinDtypes, ScatterOfEveryBaseAndIndexDtype) {
  // base [2, 3] (offset 0), index [2, 2] = ((2, 0), (0, 1)) (bool: ((1, 0), (0, 1))), src
  // [2, 2] (offset 1): out = base with out[r, index[r, k]] = src[r, k].
  for (DType dt : kAllDtypes) {
    for (DType di : kAllDtypes) {
      const std::string src = program(
          tensor("b", "R,C", dt) + ", " + tensor("i", "R,K", di) + ", " + tensor("s", "R,K", dt),
          "scatter(b, i, s, dim=\"C\")", dt, 6);
      if (dtype_is_float(di)) {
        testing::expect_user_error(
            [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
            "must have an integer dtype");
        continue;
      }
      const std::vector<int64_t> cols =
          di == DType::kBool ? std::vector<int64_t>{1, 0, 0, 1} : std::vector<int64_t>{2, 0, 0, 1};
      Array index = Array::allocate(di, {2, 2});
      for (int64_t k = 0; k < 4; ++k)
        index.store(k, static_cast<double>(cols[static_cast<size_t>(k)]));
      expect_runs(std::string("scatter ") + dtype_name(dt) + "[" + dtype_name(di) + "]", src,
                  {input(dt, {2, 3}, 0), index, input(dt, {2, 2}, 1)}, dt, 6, [&](int64_t i) {
                    const int64_t r = i / 3, c = i % 3;
                    for (int64_t k = 0; k < 2; ++k)
                      if (cols[static_cast<size_t>(r * 2 + k)] == c) return value(dt, r * 2 + k, 1);
                    return value(dt, i, 0);
                  });
    }
  }
}

TEST(BuiltinDtypes, TopkRanksNanAboveEveryNumberBothWays) {
  // x = [nan, 1, 2, -1] (PyTorch 2.13): topk(k=2) gives [nan, 2] at [0, 2]; with largest=0
  // [-1, 1] at [3, 1] (NaN is never among the smallest; it was first before).
  Array x = Array::allocate(DType::kFp32, {4});
  const double in[] = {std::nan(""), 1.0, 2.0, -1.0};
  for (int64_t i = 0; i < 4; ++i) x.store(i, in[i]);
  const std::string p = "R: Tensor(\"C\", role=\"input\", dtype=\"fp32\")";
  for (const auto& [largest, values, at] :
       {std::tuple{1, std::vector<double>{std::nan(""), 2.0}, std::vector<double>{0, 2}},
        std::tuple{0, std::vector<double>{-1.0, 1.0}, std::vector<double>{3, 1}}}) {
    const std::string call = "topk(R, k=2, dim=\"C\", largest=" + std::to_string(largest) + ")";
    const std::string src = "DIMS = {\"C\": 4}\ndef model(" + p + "):\n    return " + call + "\n";
    SCOPED_TRACE(call);
    const Program prog = load_program_source(src, "topk.py");
    const Graph g = trace_program(prog, {});
    for (Backend backend : {Backend::kInterpreter, Backend::kNative}) {
      const std::vector<Array> out = execute(prog, g, {x}, options(backend));
      ASSERT_EQ(out.size(), 2u);
      for (int64_t k = 0; k < 2; ++k) {
        const double v = out[0].load(k), want = values[static_cast<size_t>(k)];
        EXPECT_TRUE(std::isnan(want) ? std::isnan(v) : v == want) << "value " << k << ": " << v;
        EXPECT_EQ(out[1].load(k), at[static_cast<size_t>(k)]) << "index " << k;
      }
    }
  }
}

TEST(BuiltinDtypes, ScatterAddOfEveryBaseAndIndexDtype) {
  // base [2, 3] (offset 0), index [2, 2] = ((2, 2), (0, 1)) (bool: ((1, 1), (0, 1))), src
  // [2, 2] (offset 1): out = base, then out[r, index[r, k]] += src[r, k] for k = 0, 1 in
  // order, rounded to the dtype after each add. Row 0 adds both of its src elements to one
  // position: b[0, 2] = 2, + s[0, 0] = 1, + s[0, 1] = 2 -> 5 (nvfp4 has no 5: 3 + 2 rounds
  // to 4, ties to even). A bool base has no addition: a type error.
  for (DType dt : kAllDtypes) {
    for (DType di : kAllDtypes) {
      const std::string src = program(
          tensor("b", "R,C", dt) + ", " + tensor("i", "R,K", di) + ", " + tensor("s", "R,K", dt),
          "scatter_add(b, i, s, dim=\"C\")", dt, 6);
      if (dtype_is_float(di) || dt == DType::kBool) {
        testing::expect_user_error(
            [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
            dt == DType::kBool && !dtype_is_float(di)
                ? "scatter_add(): base 'b' is bool, which has no addition"
                : "must have an integer dtype");
        continue;
      }
      const std::vector<int64_t> cols =
          di == DType::kBool ? std::vector<int64_t>{1, 1, 0, 1} : std::vector<int64_t>{2, 2, 0, 1};
      Array index = Array::allocate(di, {2, 2});
      for (int64_t k = 0; k < 4; ++k)
        index.store(k, static_cast<double>(cols[static_cast<size_t>(k)]));
      Array rounding = Array::allocate(dt, {1});
      auto rounded = [&](double v) {
        rounding.store(0, v);
        return rounding.load(0);
      };
      expect_runs(std::string("scatter_add ") + dtype_name(dt) + "[" + dtype_name(di) + "]", src,
                  {input(dt, {2, 3}, 0), index, input(dt, {2, 2}, 1)}, dt, 6, [&](int64_t i) {
                    const int64_t r = i / 3, c = i % 3;
                    double out = value(dt, i, 0);
                    for (int64_t k = 0; k < 2; ++k)
                      if (cols[static_cast<size_t>(r * 2 + k)] == c)
                        out = rounded(out + value(dt, r * 2 + k, 1));
                    return out;
                  });
    }
  }
}

TEST(BuiltinDtypes, UpdateOfEveryBaseAndSrcDtype) {
  // base [2, 4] (offset 0), src [2, 2] (offset 1) written over columns 1 and 3 (start 1,
  // step 2): out[r, c] = src[r, (c - 1) / 2] for c in {1, 3}, else base[r, c]. Different
  // dtypes: a type error naming both.
  for (DType db : kAllDtypes) {
    for (DType ds : kAllDtypes) {
      const std::string src = program(tensor("b", "R,V", db) + ", " + tensor("s", "R,K", ds),
                                      "update(b, s, dim=\"V\", start=1, step=2)", db, 8);
      if (db != ds) {
        testing::expect_user_error(
            [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
            std::string("update(): src 's' is ") + dtype_name(ds) + " but base 'b' is " +
                dtype_name(db));
        continue;
      }
      expect_runs(std::string("update ") + dtype_name(db), src,
                  {input(db, {2, 4}, 0), input(ds, {2, 2}, 1)}, db, 8, [&](int64_t i) {
                    const int64_t r = i / 4, c = i % 4;
                    return c == 1 || c == 3 ? value(ds, r * 2 + (c - 1) / 2, 1) : value(db, i, 0);
                  });
    }
  }
}

TEST(BuiltinDtypes, ApplyMaskAndCastOfEveryDtypePair) {
  // apply_mask: x [2, 3] (offset 0) where mask [2, 3] (offset 1) is nonzero, else 0.
  // cast: x [2, 3] (offset 0) to every dtype: the same small integers (bool: nonzero -> 1).
  for (DType dx : kAllDtypes) {
    for (DType dm : kAllDtypes) {
      const std::string mask = program(tensor("x", "R,C", dx) + ", " + tensor("m", "R,C", dm),
                                       "apply_mask(x, m)", dx, 6);
      expect_runs(std::string("apply_mask ") + dtype_name(dx) + " by " + dtype_name(dm), mask,
                  {input(dx, {2, 3}, 0), input(dm, {2, 3}, 1)}, dx, 6,
                  [&](int64_t i) { return value(dm, i, 1) != 0.0 ? value(dx, i, 0) : 0.0; });
      const std::string cast = program(tensor("x", "R,C", dx),
                                       std::string("cast(x, \"") + dtype_name(dm) + "\")", dm, 6);
      expect_runs(std::string("cast ") + dtype_name(dx) + " to " + dtype_name(dm), cast,
                  {input(dx, {2, 3}, 0)}, dm, 6, [&](int64_t i) {
                    const double v = value(dx, i, 0);
                    return dm == DType::kBool ? (v != 0.0 ? 1.0 : 0.0) : v;
                  });
    }
  }
}

TEST(BuiltinDtypes, BitcastOfEveryDtypePair) {
  // x [2, 8] (offset 0) read as every dtype: the same bytes, so out element i is element i of
  // x's buffer loaded as the new dtype; the last dim holds 8 * (x's bytes) / (new bytes)
  // elements (8 elements of at least 1 byte divide by any size up to 8). nvfp4, int4 and tf32
  // have no bytes of their own bits, and a byte is not a bool: those are `type` errors.
  // uint8 <-> nvfp4 (packed FP4) is BitcastPacksTwoFp4CodesPerByte's.
  auto bytes_of_own_bits = [](DType d) {
    return d != DType::kTf32 && d != DType::kNvfp4 && d != DType::kInt4;
  };
  for (DType dx : kAllDtypes) {
    for (DType dt : kAllDtypes) {
      if ((dx == DType::kUint8 && dt == DType::kNvfp4) ||
          (dx == DType::kNvfp4 && dt == DType::kUint8))
        continue;
      const int64_t last = 8 * dtype_bits(dx) / dtype_bits(dt);
      std::string src =
          program(tensor("x", "R,C", dx), std::string("bitcast(x, \"") + dtype_name(dt) + "\")", dt,
                  2 * last);
      src.replace(src.find("\"C\": 3"), 6, "\"C\": 8");  // x [2, 8]
      const std::string pair = std::string(dtype_name(dx)) + " as " + dtype_name(dt);
      if (!bytes_of_own_bits(dx) || !bytes_of_own_bits(dt) || dt == DType::kBool) {
        testing::expect_user_error(
            [&] { trace_program(load_program_source(src, "builtin.py"), {}); }, ErrorKind::kType,
            "bitcast(): cannot reinterpret " + pair);
        continue;
      }
      SCOPED_TRACE(pair);
      const Array x = input(dx, {2, 8}, 0);
      Array as_dt = x;  // the reference: x's buffer read as dt
      as_dt.dtype = dt;
      as_dt.shape = {2, last};
      const Program p = load_program_source(src, "builtin.py");
      const Graph g = trace_program(p, {});
      for (Backend backend : {Backend::kInterpreter, Backend::kNative}) {
        const std::vector<Array> out = execute(p, g, {x}, options(backend));
        ASSERT_EQ(out.size(), 2u);
        for (const Array& a : out) {
          ASSERT_EQ(a.dtype, dt);
          ASSERT_EQ(a.elements(), 2 * last);
          for (int64_t i = 0; i < 2 * last; ++i) {
            const double want = as_dt.load(i), got = a.load(i);
            ASSERT_TRUE(got == want || (got != got && want != want)) << "element " << i;
          }
        }
      }
    }
  }
}

TEST(BuiltinDtypes, BitcastPacksTwoFp4CodesPerByte) {
  // x uint8 [2, 2] = 0x21, 0xF8, 0x7A, 0x03: each byte holds two E2M1 codes, the first in the
  // low nibble (PyTorch's float4_e2m1fn_x2). As nvfp4 [2, 4] the codes are 1, 2 | 8, 15 |
  // 10, 7 | 3, 0, whose values (sign bit 8, exponent bits 6, mantissa bit 1, bias 1) are
  // 0.5, 1 | -0, -6 | -1, 6 | 1.5, 0. Read back as uint8 [2, 2] they are the same bytes.
  const std::vector<double> want = {0.5, 1.0, -0.0, -6.0, -1.0, 6.0, 1.5, 0.0};
  const std::string src =
      "DIMS = {\"R\": 2, \"C\": 2}\n"
      "def model(x: Tensor(\"R,C\", role=\"input\", dtype=\"uint8\")):\n"
      "    y = bitcast(x, \"nvfp4\")\n"
      "    return y, bitcast(y, \"uint8\")\n";
  const Program p = load_program_source(src, "packed.py");
  const Graph g = trace_program(p, {});
  Array x = Array::allocate(DType::kUint8, {2, 2});
  const uint8_t bytes[] = {0x21, 0xF8, 0x7A, 0x03};
  std::copy(bytes, bytes + 4, static_cast<uint8_t*>(x.data));
  const std::vector<Array> out = execute(p, g, {x}, options(Backend::kInterpreter));
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].dtype, DType::kNvfp4);
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{2, 4}));
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[0].load(i), want[static_cast<size_t>(i)]) << "element " << i;
    EXPECT_EQ(std::signbit(out[0].load(i)), std::signbit(want[static_cast<size_t>(i)])) << i;
  }
  ASSERT_EQ(out[1].dtype, DType::kUint8);
  ASSERT_EQ(out[1].shape, (std::vector<int64_t>{2, 2}));
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(static_cast<const uint8_t*>(out[1].data)[i], bytes[i]) << "byte " << i;
  // An odd count of codes fills no whole byte.
  testing::expect_user_error(
      [&] {
        trace_program(load_program_source("DIMS = {\"C\": 3}\n"
                                          "def model(y: Tensor(\"C\", role=\"input\", "
                                          "dtype=\"nvfp4\")):\n"
                                          "    return bitcast(y, \"uint8\")\n",
                                          "odd.py"),
                      {});
      },
      ErrorKind::kShape, "not a multiple of 2");
}

TEST(BuiltinDtypes, OneTensorBuiltinsOfEveryDtype) {
  // x [2, 3] (offset 0), x[r, c] = value(3r + c); bias [3] (offset 0) for broadcast.
  struct Case {
    std::string expr;
    int64_t n;
    std::function<int64_t(int64_t)> source;  // output element -> x element (-1: the pad value)
  };
  const std::vector<Case> cases = {
      // permute to (C, R): out[c, r] = x[r, c], out index 2c + r.
      {"permute(x, \"C,R\")", 6, [](int64_t i) { return (i % 2) * 3 + i / 2; }},
      {"permute_view(x, \"C,R\")", 6, [](int64_t i) { return (i % 2) * 3 + i / 2; }},
      {"reshape(x, \"N\", N=6)", 6, [](int64_t i) { return i; }},
      // columns 1..2: out[r, k] = x[r, 1 + k].
      {"slice(x, dim=\"C\", start=1, stop=3)", 4,
       [](int64_t i) { return (i / 2) * 3 + 1 + i % 2; }},
      // row 1: x[1, c] = x element 3 + c.
      {"select(x, dim=\"R\", index=1)", 3, [](int64_t i) { return 3 + i; }},
      // the second part of split into C sizes [1, 2]: out[r, k] = x[r, 1 + k].
      {"split(x, dim=\"C\", sizes=[1, 2])[1]", 4,
       [](int64_t i) { return (i / 2) * 3 + 1 + i % 2; }},
      // one column of padding each side: out[r, c] = x[r, c - 1] for 1 <= c <= 3, else 1.
      {"pad(x, dim=\"C\", before=1, after=1, value=1)", 10,
       [](int64_t i) {
         const int64_t c = i % 5;
         return c == 0 || c == 4 ? int64_t{-1} : (i / 5) * 3 + c - 1;
       }},
      // windows of 2 along C, step 1: out[r, p, w] = x[r, p + w], out index 4r + 2p + w.
      {"unfold(x, dim=\"C\", size=2, step=1)", 8,
       [](int64_t i) { return (i / 4) * 3 + (i / 2) % 2 + i % 2; }},
      // bias [3] broadcast to [2, 3]: out[r, c] = bias[c].
      {"broadcast(b, \"R,C\", R=2)", 6, [](int64_t i) { return i % 3; }},
  };
  for (DType d : kAllDtypes) {
    const std::string params = tensor("x", "R,C", d) + ", " + tensor("b", "C", d);
    for (const Case& c : cases) {
      expect_runs(c.expr + " of " + dtype_name(d), program(params, c.expr, d, c.n),
                  {input(d, {2, 3}, 0), input(d, {3}, 0)}, d, c.n, [&](int64_t i) {
                    const int64_t from = c.source(i);
                    return from < 0 ? 1.0 : value(d, from, 0);
                  });
    }
    // constant(1) [2, 3]: every element 1. iota [5]: 0, 1, 2, 3, 4 (bool: 0, 1, 1, 1, 1;
    // e2m1 and int4 represent 4 exactly).
    expect_runs(
        std::string("constant of ") + dtype_name(d),
        program(params,
                std::string("constant(1.0, \"R,C\", R=2, C=3, dtype=\"") + dtype_name(d) + "\")", d,
                6),
        {input(d, {2, 3}, 0), input(d, {3}, 0)}, d, 6, [](int64_t) { return 1.0; });
    expect_runs(
        std::string("iota of ") + dtype_name(d),
        program(params, std::string("iota(\"S\", S=5, dtype=\"") + dtype_name(d) + "\")", d, 5),
        {input(d, {2, 3}, 0), input(d, {3}, 0)}, d, 5, [&](int64_t i) {
          return d == DType::kBool ? (i > 0 ? 1.0 : 0.0) : static_cast<double>(i);
        });
  }
}

}  // namespace
}  // namespace solar
