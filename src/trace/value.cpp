#include "value.h"

namespace solar::detail {

const char* value_kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kStr:
      return "str";
    case Value::Kind::kTensor:
      return "tensor";
    case Value::Kind::kTuple:
      return "tuple";
    case Value::Kind::kList:
      return "list";
  }
  return "value";
}

}  // namespace solar::detail
