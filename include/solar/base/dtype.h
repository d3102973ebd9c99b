// Element types and tensor roles of the Affine Loop IR (docs/ir.md §2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace solar {

enum class DType : uint8_t {
  kFp64,
  kFp32,
  kTf32,
  kBf16,
  kFp16,
  kFp8E4M3,
  kFp8E5M2,
  kNvfp4,
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUint8,
  kInt4,
  kBool,
};

// Storage bits per element (nvfp4 and int4: 4; bool: 8, one byte as frameworks store it).
int dtype_bits(DType dtype);
// "fp32", "bf16", ... as written in the IR.
const char* dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
// Comma-separated list of every dtype name, for error hints.
std::string all_dtype_names();
bool dtype_is_float(DType dtype);

// Bytes of `elements` values of `dtype` (rounded up to whole bytes), or nullopt when they do
// not fit in int64 (`elements` >= 0).
std::optional<int64_t> checked_dtype_bytes(DType dtype, int64_t elements);
// The same for counts already known to fit (a traced graph's tensors); an InternalError if not.
int64_t dtype_bytes(DType dtype, int64_t elements);

// The math mode of fp32 contractions (docs/sol-modes.md, "Math modes"): the platform's default
// (TF32 tensor cores where the spec has them), true fp32, or TF32. A program states it per
// source operator (`with unit("...", fp32_math="fp32"):`, docs/ir.md §4.1); `--fp32-math`
// overrides it for the whole graph.
// How fp32 contractions run: the platform's default, true fp32, TF32, or a narrower format
// (bf16, fp16, fp8) whose products an implementation may use where the problem allows it
// (PyTorch's "medium" matmul precision; a benchmark definition whose data is bf16).
enum class Fp32Math : uint8_t { kPlatformDefault, kFp32, kTf32, kBf16, kFp16, kFp8 };
// "default", "fp32", "tf32", "bf16", "fp16", "fp8".
const char* fp32_math_name(Fp32Math mode);
std::optional<Fp32Math> parse_fp32_math(std::string_view name);

// kGenerated: a model() input whose values are made on chip where they are used (random
// numbers a program draws): it occupies no DRAM, so reading it moves 0 bytes (docs/ir.md §3).
enum class Role : uint8_t { kInput, kWeight, kActivation, kOutput, kGenerated };
const char* role_name(Role role);
std::optional<Role> parse_role(std::string_view name);

}  // namespace solar
