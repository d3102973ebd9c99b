// Private helpers on strings shared by the stages in src/ (not part of the public API).
#pragma once

#include <string>
#include <vector>

namespace solar {

// The parts with `sep` between each two: join({"a", "b"}, ", ") is "a, b".
inline std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace solar
