// The pipeline as a straight list of stages: read -> parse -> check -> trace (+ lift).
#pragma once

#include <string>

#include "solar/graph/graph.h"
#include "solar/ir/program.h"
#include "solar/trace/tracer.h"

namespace solar {

// Reads, parses and checks an IR file.
Program load_program(const std::string& path);
// Parses and checks IR source text (`file` names it in messages).
Program load_program_source(const std::string& text, const std::string& file);
// load_program + trace_program.
Graph graph_from_file(const std::string& path, const TraceOptions& options);

}  // namespace solar
