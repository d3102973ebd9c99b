// Values of the composition layer (private to src/trace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solar/graph/graph.h"

namespace solar::detail {

struct Value {
  enum class Kind : uint8_t { kNone, kInt, kFloat, kStr, kTensor, kTuple, kList };
  Kind kind = Kind::kNone;
  int64_t i = 0;
  double f = 0.0;
  // kStr: the string. kInt: the model dim the number was read from (x.shape[i], DIMS["L"],
  // size("L")) and kList from range(): the dim of its bound, "" if none; only for the hint of
  // the tracer's node cap ("lower --dim L").
  std::string s;
  TensorId tensor = -1;
  std::vector<Value> items;
  int64_t deep = 1;  // values held, nested ones included (1 for a scalar): the cost of a copy

  static Value none() { return Value{}; }
  static Value of_int(int64_t v) {
    Value x;
    x.kind = Kind::kInt;
    x.i = v;
    return x;
  }
  static Value of_float(double v) {
    Value x;
    x.kind = Kind::kFloat;
    x.f = v;
    return x;
  }
  static Value of_str(std::string v) {
    Value x;
    x.kind = Kind::kStr;
    x.s = std::move(v);
    return x;
  }
  static Value of_tensor(TensorId t) {
    Value x;
    x.kind = Kind::kTensor;
    x.tensor = t;
    return x;
  }
  static Value of_seq(Kind kind, std::vector<Value> items) {
    Value x;
    x.kind = kind;
    x.items = std::move(items);
    for (const Value& v : x.items) x.deep += v.deep;
    return x;
  }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat; }
  bool is_seq() const { return kind == Kind::kTuple || kind == Kind::kList; }
  double as_double() const { return kind == Kind::kInt ? static_cast<double>(i) : f; }
};

const char* value_kind_name(Value::Kind kind);

}  // namespace solar::detail
