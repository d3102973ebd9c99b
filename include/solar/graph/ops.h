// The operator registry: every composition-layer builtin as data (graph/ops.def), so that
// stages dispatch on an enumerator rather than compare names. A graph node is a kernel call
// (Node::kernel, Builtin::kNone) or one builtin (Node::builtin).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace solar {

enum class Builtin : uint8_t {
  kNone,  // a kernel call
#define SOLAR_BUILTIN(id, name, converts, view, moves, attributes) id,
#include "solar/graph/ops.def"
#undef SOLAR_BUILTIN
};

// The number of builtins (rows of ops.def): Builtin values 1 .. kBuiltinCount.
inline constexpr int kBuiltinCount = 0
#define SOLAR_BUILTIN(id, name, converts, view, moves, attributes) +1
#include "solar/graph/ops.def"
#undef SOLAR_BUILTIN
    ;

struct BuiltinInfo {
  const char* name;
  bool converts;           // its output dtype may differ from its inputs'
  bool view;               // its outputs always alias its first input (moves no bytes)
  bool moves;              // its outputs are input elements unchanged, or constants
  const char* attributes;  // the struct of graph/attrs.h its Node::attrs hold ("": none)
};

// The row of `op` (kNone: {"", false, false, false, ""}).
const BuiltinInfo& builtin_info(Builtin op);
inline const char* builtin_name(Builtin op) { return builtin_info(op).name; }
// The builtin named `name` as written in a program; nullopt for any other name.
std::optional<Builtin> find_builtin(std::string_view name);
// Every builtin's name in the registry's order, separated by spaces (for messages).
std::string builtin_names();

}  // namespace solar
