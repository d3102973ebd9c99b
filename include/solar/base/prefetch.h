// Memory hints for the passes that walk a large program or graph in order. A structure that
// outgrows the last-level cache (the syntax tree and graph of a 40,000-node program) is read
// from memory, and a walk that reaches a record through a pointer or an id stalls on its
// first read; asking for it a few steps ahead overlaps those reads (bench/README.md,
// "Prefetching the walks"). Hints only: no result depends on them, and an address that is not
// mapped is ignored by the processor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace solar {

inline constexpr size_t kCacheLine = 64;

// Asks for the cache lines of [p, p + bytes). The address arithmetic is on integers: the range
// may run past the end of the object p points into.
inline void prefetch_lines(const void* p, size_t bytes) {
  if (!p) return;
  const auto first = reinterpret_cast<uintptr_t>(p);
  for (uintptr_t a = first; a < first + bytes; a += kCacheLine)
    __builtin_prefetch(reinterpret_cast<const void*>(a));
}

}  // namespace solar
