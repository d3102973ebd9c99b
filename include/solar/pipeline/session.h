// What one user of the library keeps between calls: the kernels the native backend has
// loaded and whether it fell back (exec/executor.h, NativeSession), and the tiling searches
// the cache-aware mode has done (sol/cache_aware.h, TilingMemo). The core has no process-wide
// mutable state: the caller owns a Session (the Python layer keeps one per process, tests and
// benchmarks make their own) and passes its parts to the calls that use them
// (ExecOptions::session, AnalysisOptions::memo); each call takes its own cancellation token
// (ExecOptions::cancel).
#pragma once

#include "solar/exec/executor.h"
#include "solar/sol/cache_aware.h"

namespace solar {

struct Session {
  NativeSession native;
  TilingMemo tilings;
};

}  // namespace solar
