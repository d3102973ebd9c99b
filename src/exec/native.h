// The native backend: each kernel is translated to C++, compiled once with the system
// compiler (OpenMP for parallel=True loops) into a shared object cached by the hash of its
// source in a private directory (verified by its recorded size and SHA-256 before each load),
// and loaded with dlopen from the descriptor it was verified through (private to src/exec;
// docs/execution.md).
#pragma once

#include <string>
#include <vector>

#include "solar/einsum/lift.h"
#include "solar/exec/executor.h"
#include "solar/ir/program.h"

namespace solar::detail {

// Same contract as interpret_kernel. Kernels are loaded into (and found in) `session`; the
// call is counted in `report` under the backend that ran it.
void run_native_kernel(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
                       const std::vector<Scalar>& scalar_args, std::vector<Array>& tensors,
                       const ExecOptions& options, const std::string& call_name,
                       NativeSession& session, ExecReport& report);

}  // namespace solar::detail
