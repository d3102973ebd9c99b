// Helpers shared by the C++ tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "solar/base/error.h"

namespace solar::testing {

inline std::string source_dir() { return SOLAR_SOURCE_DIR; }
inline std::string example(const std::string& name) {
  return source_dir() + "/examples/ir/" + name;
}

// Runs `fn`, expects a UserError whose first diagnostic has `kind` and whose text contains
// `substring`.
template <typename Fn>
void expect_user_error(Fn&& fn, ErrorKind kind, const std::string& substring) {
  try {
    fn();
    ADD_FAILURE() << "expected a UserError containing '" << substring << "'";
  } catch (const UserError& e) {
    bool found = false;
    for (const auto& d : e.diagnostics()) found = found || d.kind == kind;
    EXPECT_TRUE(found) << "kind " << error_kind_name(kind) << " not among: " << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << "message: " << e.what();
  }
}

}  // namespace solar::testing
