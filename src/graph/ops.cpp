#include "solar/graph/ops.h"

#include <array>
#include <string>

namespace solar {
namespace {

constexpr std::array kBuiltins = {
    BuiltinInfo{"", false, false, false, ""},
#define SOLAR_BUILTIN(id, name, converts, view, moves, attributes) \
  BuiltinInfo{name, converts, view, moves, attributes},
#include "solar/graph/ops.def"
#undef SOLAR_BUILTIN
};

}  // namespace

const BuiltinInfo& builtin_info(Builtin op) { return kBuiltins.at(static_cast<size_t>(op)); }

std::optional<Builtin> find_builtin(std::string_view name) {
  // The registry is short (kBuiltinCount rows): a scan is as fast as a hash and needs no
  // table built at start-up.
  for (size_t i = 1; i < kBuiltins.size(); ++i)
    if (name == kBuiltins[i].name) return static_cast<Builtin>(i);
  return std::nullopt;
}

std::string builtin_names() {
  std::string out;
  for (size_t i = 1; i < kBuiltins.size(); ++i)
    out += (i > 1 ? " " : "") + std::string(kBuiltins[i].name);
  return out;
}

}  // namespace solar
