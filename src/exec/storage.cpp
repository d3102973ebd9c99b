#include "storage.h"

#include <cstring>

#include "solar/exec/executor.h"
#include "solar/exec/numeric.h"

namespace solar::detail {

double load_element(DType dtype, const void* data, int64_t i) {
  switch (dtype) {
    case DType::kFp64:
      return static_cast<const double*>(data)[i];
    case DType::kFp32:
    case DType::kTf32:
      return static_cast<const float*>(data)[i];
    case DType::kBf16:
      return numeric::from_bf16(static_cast<const uint16_t*>(data)[i]);
    case DType::kFp16:
      return numeric::from_fp16(static_cast<const uint16_t*>(data)[i]);
    case DType::kFp8E4M3:
      return numeric::from_fp8_e4m3(static_cast<const uint8_t*>(data)[i]);
    case DType::kFp8E5M2:
      return numeric::from_fp8_e5m2(static_cast<const uint8_t*>(data)[i]);
    case DType::kNvfp4:
      return numeric::from_e2m1(static_cast<const uint8_t*>(data)[i]);
    case DType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::kInt32:
      return static_cast<const int32_t*>(data)[i];
    case DType::kInt16:
      return static_cast<const int16_t*>(data)[i];
    case DType::kInt8:
      return static_cast<const int8_t*>(data)[i];
    case DType::kUint8:
      return static_cast<const uint8_t*>(data)[i];
    case DType::kInt4:
      return numeric::from_int4(static_cast<const uint8_t*>(data)[i]);
    case DType::kBool:
      return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

void store_element(DType dtype, void* data, int64_t i, double v) {
  switch (dtype) {
    case DType::kFp64:
      static_cast<double*>(data)[i] = v;
      return;
    case DType::kFp32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      return;
    case DType::kTf32:
      static_cast<float*>(data)[i] = numeric::round_tf32(v);
      return;
    case DType::kBf16:
      static_cast<uint16_t*>(data)[i] = numeric::to_bf16(v);
      return;
    case DType::kFp16:
      static_cast<uint16_t*>(data)[i] = numeric::to_fp16(v);
      return;
    case DType::kFp8E4M3:
      static_cast<uint8_t*>(data)[i] = numeric::to_fp8_e4m3(v);
      return;
    case DType::kFp8E5M2:
      static_cast<uint8_t*>(data)[i] = numeric::to_fp8_e5m2(v);
      return;
    case DType::kNvfp4:
      static_cast<uint8_t*>(data)[i] = numeric::to_e2m1(v);
      return;
    case DType::kInt64:
      static_cast<int64_t*>(data)[i] = numeric::to_int<int64_t>(v);
      return;
    case DType::kInt32:
      static_cast<int32_t*>(data)[i] = numeric::to_int<int32_t>(v);
      return;
    case DType::kInt16:
      static_cast<int16_t*>(data)[i] = numeric::to_int<int16_t>(v);
      return;
    case DType::kInt8:
      static_cast<int8_t*>(data)[i] = numeric::to_int<int8_t>(v);
      return;
    case DType::kUint8:
      static_cast<uint8_t*>(data)[i] = numeric::to_int<uint8_t>(v);
      return;
    case DType::kInt4:
      static_cast<uint8_t*>(data)[i] = numeric::to_int4(v);
      return;
    case DType::kBool:
      static_cast<uint8_t*>(data)[i] = (v != 0.0 && v == v) ? 1 : 0;
      return;
  }
}

}  // namespace solar::detail

namespace solar {

double Array::load(int64_t i) const { return detail::load_element(dtype, data, i); }

void Array::store(int64_t i, double v) { detail::store_element(dtype, data, i, v); }

double round_to_dtype(DType dtype, double v) {
  alignas(8) unsigned char buf[8] = {};
  detail::store_element(dtype, buf, 0, v);
  return detail::load_element(dtype, buf, 0);
}

}  // namespace solar
