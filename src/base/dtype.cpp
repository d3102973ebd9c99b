#include "solar/base/dtype.h"

#include <array>
#include <string>

#include "solar/base/checked.h"

namespace solar {
namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  int bits;
  bool is_float;
};
constexpr std::array<DTypeInfo, 15> kDTypes = {{
    {DType::kFp64, "fp64", 64, true},
    {DType::kFp32, "fp32", 32, true},
    {DType::kTf32, "tf32", 32, true},
    {DType::kBf16, "bf16", 16, true},
    {DType::kFp16, "fp16", 16, true},
    {DType::kFp8E4M3, "fp8_e4m3", 8, true},
    {DType::kFp8E5M2, "fp8_e5m2", 8, true},
    {DType::kNvfp4, "nvfp4", 4, true},
    {DType::kInt64, "int64", 64, false},
    {DType::kInt32, "int32", 32, false},
    {DType::kInt16, "int16", 16, false},
    {DType::kInt8, "int8", 8, false},
    {DType::kUint8, "uint8", 8, false},
    {DType::kInt4, "int4", 4, false},
    {DType::kBool, "bool", 8, false},
}};
const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }
}  // namespace

int dtype_bits(DType dtype) { return info(dtype).bits; }
const char* dtype_name(DType dtype) { return info(dtype).name; }
bool dtype_is_float(DType dtype) { return info(dtype).is_float; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

std::string all_dtype_names() {
  std::string out;
  for (const auto& d : kDTypes) {
    if (!out.empty()) out += ", ";
    out += d.name;
  }
  return out;
}

std::optional<int64_t> checked_dtype_bytes(DType dtype, int64_t elements) {
  const int bits = dtype_bits(dtype);
  if (bits % 8 == 0) return checked_mul(elements, bits / 8);
  // 4-bit formats: two per byte, rounded up (never forms elements * bits, which may not fit).
  return elements / 2 + elements % 2;
}

int64_t dtype_bytes(DType dtype, int64_t elements) {
  auto bytes = checked_dtype_bytes(dtype, elements);
  if (!bytes) {
    throw InternalError(std::to_string(elements) + " elements of " + dtype_name(dtype) +
                        " overflow int64 bytes in a graph whose counts were checked");
  }
  return *bytes;
}

const char* fp32_math_name(Fp32Math mode) {
  switch (mode) {
    case Fp32Math::kPlatformDefault:
      return "default";
    case Fp32Math::kFp32:
      return "fp32";
    case Fp32Math::kTf32:
      return "tf32";
    case Fp32Math::kBf16:
      return "bf16";
    case Fp32Math::kFp16:
      return "fp16";
    case Fp32Math::kFp8:
      return "fp8";
  }
  return "default";
}

std::optional<Fp32Math> parse_fp32_math(std::string_view name) {
  if (name == "default") return Fp32Math::kPlatformDefault;
  if (name == "fp32") return Fp32Math::kFp32;
  if (name == "tf32") return Fp32Math::kTf32;
  if (name == "bf16") return Fp32Math::kBf16;
  if (name == "fp16") return Fp32Math::kFp16;
  if (name == "fp8") return Fp32Math::kFp8;
  return std::nullopt;
}

const char* role_name(Role role) {
  switch (role) {
    case Role::kInput:
      return "input";
    case Role::kWeight:
      return "weight";
    case Role::kActivation:
      return "activation";
    case Role::kOutput:
      return "output";
    case Role::kGenerated:
      return "generated";
  }
  return "activation";
}

std::optional<Role> parse_role(std::string_view name) {
  if (name == "input") return Role::kInput;
  if (name == "weight") return Role::kWeight;
  if (name == "activation") return Role::kActivation;
  if (name == "output") return Role::kOutput;
  if (name == "generated") return Role::kGenerated;
  return std::nullopt;
}

}  // namespace solar
