// The operator registry: every composition-layer builtin as data (graph/ops.def), so that
// stages dispatch on an enumerator rather than compare names. A graph node is a kernel call
// (Node::kernel, Builtin::kNone) or one builtin (Node::builtin).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace solar {

enum class Builtin : uint8_t {
  kNone,  // a kernel call
#define SOLAR_BUILTIN(id, name, converts, attributes) id,
#include "solar/graph/ops.def"
#undef SOLAR_BUILTIN
};

struct BuiltinInfo {
  const char* name;
  bool converts;           // its output dtype may differ from its inputs'
  const char* attributes;  // what Node::attrs holds, in order
};

// The row of `op` (kNone: {"", false, ""}).
const BuiltinInfo& builtin_info(Builtin op);
inline const char* builtin_name(Builtin op) { return builtin_info(op).name; }
// The builtin named `name` as written in a program; nullopt for any other name.
std::optional<Builtin> find_builtin(std::string_view name);

}  // namespace solar
