#include "solar/pipeline/pipeline.h"

#include "solar/ir/checker.h"
#include "solar/ir/parser.h"

namespace solar {

Program load_program(const std::string& path) { return check_program(parse_file(path)); }

Program load_program_source(const std::string& text, const std::string& file) {
  return check_program(parse_source(text, file));
}

Graph graph_from_file(const std::string& path, const TraceOptions& options) {
  return trace_program(load_program(path), options);
}

}  // namespace solar
