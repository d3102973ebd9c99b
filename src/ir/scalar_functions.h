// The scalar functions of kernel bodies (docs/ir.md §3.4) and how each is counted (§7.3):
// the checker validates calls against this table, the FLOP count pass classifies them.
#pragma once

#include <string>
#include <unordered_map>

namespace solar::detail {

enum class FnClass { kTranscendental, kCompare, kOther, kSelect, kCast };

inline const std::unordered_map<std::string, FnClass>& scalar_functions() {
  static const std::unordered_map<std::string, FnClass> k = {
      {"exp", FnClass::kTranscendental},
      {"log", FnClass::kTranscendental},
      {"log1p", FnClass::kTranscendental},
      {"expm1", FnClass::kTranscendental},
      {"sqrt", FnClass::kTranscendental},
      {"rsqrt", FnClass::kTranscendental},
      {"tanh", FnClass::kTranscendental},
      {"sigmoid", FnClass::kTranscendental},
      {"erf", FnClass::kTranscendental},
      {"sin", FnClass::kTranscendental},
      {"cos", FnClass::kTranscendental},
      {"pow", FnClass::kTranscendental},
      {"max", FnClass::kCompare},
      {"min", FnClass::kCompare},
      {"abs", FnClass::kOther},
      {"floor", FnClass::kOther},
      {"ceil", FnClass::kOther},
      {"round", FnClass::kOther},
      {"select", FnClass::kSelect},
      {"cast", FnClass::kCast},
  };
  return k;
}

}  // namespace solar::detail
