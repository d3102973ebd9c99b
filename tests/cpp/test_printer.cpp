#include <gtest/gtest.h>

#include <filesystem>

#include "solar/ir/parser.h"
#include "solar/ir/printer.h"
#include "test_util.h"

namespace solar {
namespace {

// print(parse(f)) parses back to a tree equal to parse(f), and printing is a fixpoint.
TEST(Printer, RoundTripsEveryExample) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_dir() + "/examples/ir")) {
    if (entry.path().extension() != ".py") continue;
    SCOPED_TRACE(entry.path().string());
    ast::Module a = parse_file(entry.path().string());
    const std::string printed = print_module(a);
    ast::Module b = parse_source(printed, "printed");
    EXPECT_TRUE(ast::equal(a, b)) << printed;
    EXPECT_EQ(print_module(b), printed);
    ++count;
  }
  EXPECT_GE(count, 14);
}

TEST(Printer, FloatsAndStringsRoundTrip) {
  const char* src = "x = 1e-05\ny = 0.1\nz = \"a\\\"b\"\nw = (1,)\nv = 1e999\n";
  ast::Module a = parse_source(src, "t.py");
  ast::Module b = parse_source(print_module(a), "t.py");
  EXPECT_TRUE(ast::equal(a, b)) << print_module(a);
}

}  // namespace
}  // namespace solar
