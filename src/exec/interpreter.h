// The reference interpreter: runs one kernel call's loop nests point by point over
// bytecode compiled from the IR (private to src/exec).
#pragma once

#include <string>
#include <vector>

#include "solar/einsum/lift.h"
#include "solar/exec/executor.h"
#include "solar/ir/program.h"

namespace solar::detail {

// `tensors` holds one array per kernel tensor (Kernel::tensors order): the parameters as
// given, the allocations already allocated and filled. `lifted` gives the call's dim sizes.
void interpret_kernel(const Program& program, const Kernel& kernel, const LiftedCall& lifted,
                      const std::vector<Scalar>& scalar_args, std::vector<Array>& tensors,
                      const ExecOptions& options, const std::string& call_name);

}  // namespace solar::detail
