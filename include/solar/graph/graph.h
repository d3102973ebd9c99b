// The einsum graph: a DAG whose nodes are kernel calls (lifted to extended einsums) and
// builtin calls (data movement), and whose edges are tensors. Built by the tracer
// (trace/) with each kernel call lifted by einsum/lift.h; read by every SOL mode (sol/)
// and the serialisers (io/). Immutable once built: stages take it by const reference.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "solar/base/checked.h"
#include "solar/base/counts.h"
#include "solar/base/dtype.h"
#include "solar/base/error.h"
#include "solar/base/prefetch.h"
#include "solar/base/scalar.h"
#include "solar/graph/ops.h"

namespace solar {

using TensorId = int32_t;
using NodeId = int32_t;
constexpr NodeId kNoNode = -1;

// The short lists of a node or a tensor (its tensors, sizes, dim names, attributes) are kept
// inside it up to N elements (absl::InlinedVector, a std::vector-like container): a node and
// its tensors then take one or two heap blocks instead of about ten. Freeing ten scattered
// blocks per node cost a 40,000-node graph more per node than a 5,000-node one (its heap
// outgrows the last-level cache), the pipeline's main departure from linear growth
// (bench/README.md).
template <class T, size_t N>
using SmallVec = absl::InlinedVector<T, N>;
using TensorIds = SmallVec<TensorId, 4>;
using NodeIds = SmallVec<NodeId, 4>;
using Shape = SmallVec<int64_t, 4>;
using DimNames = SmallVec<std::string, 4>;

// A tensor's dim names, immutable and shared: the tensors a kernel or a builtin makes with the
// same names point at one list (the tracer interns them, trace/trace_context.h). A TensorInfo
// then holds 16 bytes where a list of four strings took 136, and tracing copies no strings:
// the benchmark's 40,000-node flat graph (54,541 tensors) holds 6.5 MB less, and the pipeline's
// cost per node grew with the graph's memory (bench/README.md, "Where the growth is"). Reads
// as a const container of strings.
class SharedDims {
 public:
  SharedDims() = default;
  explicit SharedDims(std::shared_ptr<const DimNames> names) : names_(std::move(names)) {}
  // A list of its own (not interned): for graphs built by hand and in tests.
  SharedDims(std::initializer_list<std::string> names)
      : names_(std::make_shared<const DimNames>(names)) {}
  explicit SharedDims(DimNames names)
      : names_(std::make_shared<const DimNames>(std::move(names))) {}

  const DimNames& names() const { return names_ ? *names_ : no_names(); }
  operator const DimNames&() const { return names(); }  // NOLINT: reads as the list
  size_t size() const { return names().size(); }
  const std::string& operator[](size_t i) const { return names()[i]; }
  DimNames::const_iterator begin() const { return names().begin(); }
  DimNames::const_iterator end() const { return names().end(); }
  friend bool operator==(const SharedDims& a, const SharedDims& b) {
    return a.names_ == b.names_ || a.names() == b.names();
  }

 private:
  static const DimNames& no_names() {
    static const DimNames kEmpty;  // immutable
    return kEmpty;
  }
  std::shared_ptr<const DimNames> names_;
};

using NodeAttrs = SmallVec<int64_t, 4>;   // Node::attrs, a builtin's static attributes
using InputBytes = SmallVec<int64_t, 4>;  // Node::input_bytes, bytes read per input

// Counts (docs/ir.md §7-8). The tracer checks every count of a node as it builds it (its
// tensors' elements and bytes, its MACs, 2 x MACs, FLOPs by kind and in total, bytes read and
// written): one that does not fit in int64 is a UserError of kind `overflow`. The accessors
// below therefore never wrap (a violated invariant is an InternalError); sums over nodes are
// checked where they are formed (Graph::total_macs, the SOL modes, the serialisers).

// One edge of the graph: a tensor value of fixed shape.
struct TensorInfo {
  // The fields every analysis pass reads (ids, dtype, sparsity, producer, storage, shape) come
  // first and fill the first 64 bytes; the names last. A 40,000-node graph's tensors outgrow
  // the last-level cache, and passes that follow tensor ids then fetch one line per tensor
  // instead of two or three (bench/README.md, pipeline growth).
  TensorId id = 0;
  DType dtype = DType::kFp32;
  Role role = Role::kActivation;  // input | weight | activation (graph outputs: is_output)
  bool is_output = false;         // returned by model()
  NodeId producer = kNoNode;      // kNoNode for graph inputs and weights
  // The tensor that owns this tensor's memory: itself, or for a view (reshape, slice,
  // select, split, broadcast) the storage of the viewed tensor. A reader of a view fetches
  // at most min(bytes(), storage's bytes()).
  TensorId storage = -1;
  double sparsity = 0.0;  // fraction of zeros, 0 <= s < 1
  Shape shape;            // sizes, same order as dims
  NodeIds consumers;
  std::string name;  // the composition-layer name ("x", "linear#0.out0", ...)
  SharedDims dims;   // dim names, outermost first

  int64_t elements() const;
  // Bytes at full declared size, scaled by (1 - sparsity), rounded up; 0 for a generated
  // input (Role::kGenerated), which never occupies DRAM.
  int64_t bytes() const;
};

// A hint that `t`'s record is read soon (solar/base/prefetch.h): the fields the passes read,
// its first 64 bytes, lie on at most two cache lines.
inline void prefetch(const TensorInfo& t) { prefetch_lines(&t, 2 * kCacheLine); }

// One term of an affine projection: coefficient * rank.
struct ProjectionTerm {
  std::string rank;
  int64_t coefficient = 1;
};

// How one operand is indexed: one affine expression per tensor dim (Timeloop-style
// sum-of-products), plus the constant offset of each (e.g. -pad).
struct Operand {
  int slot = 0;      // kernel tensor index (Node::operand_tensor)
  std::string name;  // kernel parameter or local name
  std::vector<std::vector<ProjectionTerm>> projection;
  std::vector<int64_t> offsets;  // one per tensor dim
  bool is_output = false;
  // Elements of the tensor this access touches (a lower bound, touched_elements in
  // einsum/lift.h); -1 when not computed (an output, a kernel-local).
  int64_t touched = -1;
};

// One loop nest of a kernel call, as an extended einsum.
struct Einsum {
  std::string text;                    // "BMK,NK->BMN", sliding windows "BC(P+R)(Q+S),OCRS->BOPQ"
  std::vector<std::string> ranks;      // loop dims, outermost first
  std::vector<int64_t> rank_sizes;     // same order
  std::vector<Operand> inputs;         // tensors read, in first-read order
  Operand output;                      // the tensor written
  ReduceOp reduce = ReduceOp::kNone;   // += *= max min, or none for plain assignment
  std::string map_expr;                // the scalar body as written
  int64_t points = 0;                  // product of rank sizes
  int64_t macs = 0;                    // points, if the body is a product accumulated with +=
  FlopCounts flops;                    // non-MAC arithmetic of this nest
  DType compute_dtype = DType::kFp32;  // dtype of the MAC operands (matrix rate lookup)
  DType output_dtype = DType::kFp32;   // dtype of the written tensor
  bool output_is_local = false;        // writes a kernel-local tensor that is not returned
  // A statement of the nest is under a guard (`if`): its MACs and FLOPs above count only the
  // points the guard lets through (docs/ir.md 7.1); `points` stays the dense product.
  bool guarded = false;
};

enum class NodeKind : uint8_t { kEinsum, kDataMovement };

using UnitId = int32_t;

// One source-level operator (docs/ir.md §4.1, docs/sol-modes.md "Unfused"): the nodes traced
// inside one `with unit("label"):` block (the IR a front end emits for one PyTorch call), or
// one node alone (every call outside such a block; the graph stores only the blocks, and
// effective_units in sol/analysis.h lists both). The unfused mode runs each unit alone: its
// inner intermediates stay on chip, what it reads from outside and what is read after it
// crosses DRAM.
struct Unit {
  UnitId id = 0;
  std::string name;           // "hardsigmoid#0" for a block (label and its count); a node's name
  std::string label;          // the block's label ("aten.hardsigmoid"); the node's op otherwise
  Loc loc;                    // the `with` statement, or the node's call site
  std::vector<NodeId> nodes;  // in execution order
  bool declared = false;      // from a `with unit(...)` block
  Fp32Math fp32_math = Fp32Math::kPlatformDefault;  // the block's fp32_math=, if any
};
const char* node_kind_name(NodeKind kind);

struct Node {
  // The fields the analysis passes read of every node (kind, unit, counts, tensor lists)
  // come first, the names and execution arguments last: see TensorInfo.
  NodeId id = 0;
  NodeKind kind = NodeKind::kEinsum;
  Builtin builtin = Builtin::kNone;   // data movement: which builtin (graph/ops.h)
  DType matrix_dtype = DType::kFp32;  // dtype of the MACs (largest-MAC einsum's compute dtype)
  // Math mode of its fp32 MACs as the program states it (its unit's fp32_math=); the
  // analysis applies --fp32-math over it and the spec's default where it is kPlatformDefault.
  Fp32Math fp32_math = Fp32Math::kPlatformDefault;
  UnitId unit = -1;  // its `with unit(...)` block (Graph::units); -1: a unit of its own
  int64_t macs = 0;
  // DRAM traffic of this node alone (unfused): each distinct tensor read plus each tensor
  // written, once, at full size (unlimited cache inside the node). For data movement this
  // follows the builtin's traffic rule (a view moves nothing).
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  FlopCounts flops;  // non-MAC FLOPs by kind
  // One extended einsum per loop nest (null for data movement), shared by every call with
  // the same kernel, shapes, dtypes and scalars: lifted once, stored once. Operands name
  // kernel tensors by slot; operand_tensor() maps a slot to this call's graph tensor.
  std::shared_ptr<const std::vector<Einsum>> einsums;
  TensorIds inputs;  // tensors read, in argument order
  TensorIds outputs;
  SmallVec<TensorId, 8> slot_tensors;  // kernel tensor index -> graph tensor (-1: kernel-local)
  // Bytes this node reads of each input, same order as `inputs`: full size capped at the size
  // of its storage for kernels (a broadcast view is read once); for gather only the rows it
  // fetches; 0 for views. Fused traffic of a graph input or weight is the sum, over readers
  // of it or of views of it, of these bytes, capped at its size.
  InputBytes input_bytes;
  std::string name;    // "linear#0": callee and its call count
  std::string op;      // kernel or builtin name
  Loc loc;             // call site in model() (or the helper it was called from)
  std::string einsum;  // node-level string, e.g. "BMK,NK,N->BMN"; "" for data movement
  // What execution needs beyond shapes: the kernel (index into Program::kernels) and its
  // scalar arguments by parameter; or a builtin's static attributes (docs/ir.md, Builtins):
  // permute: the order; slice: axis, start, step; select: axis, index; split: axis and each
  // output's offset; concat/stack: axis; pad: axis, before, after (and `value`); broadcast:
  // for each output dim the input dim it reads or -1; gather: axis; constant: `value`.
  int kernel = -1;
  SmallVec<Scalar, 2> scalar_args;
  NodeAttrs attrs;
  double value = 0.0;

  int64_t matrix_flops() const { return invariant_mul(macs, 2, "matrix FLOPs"); }
  int64_t vector_flops() const { return flops.total(); }
  int64_t total_flops() const { return invariant_add(matrix_flops(), vector_flops(), "FLOPs"); }
  int64_t bytes() const { return invariant_add(bytes_read, bytes_written, "node bytes"); }
  // The graph tensor an operand of one of this node's einsums reads or writes (-1: local).
  TensorId operand_tensor(const Operand& operand) const {
    return operand.slot >= 0 && static_cast<size_t>(operand.slot) < slot_tensors.size()
               ? slot_tensors[static_cast<size_t>(operand.slot)]
               : -1;
  }
  size_t einsum_count() const { return einsums ? einsums->size() : 0; }
};

struct Graph {
  std::string source;               // file the program came from
  std::vector<TensorInfo> tensors;  // indexed by TensorId
  std::vector<Node> nodes;          // indexed by NodeId, in topological (execution) order
  std::vector<TensorId> inputs;     // model() parameters, in order (inputs and weights)
  std::vector<TensorId> outputs;    // returned by model(), in order
  std::vector<Unit> units;          // the `with unit(...)` blocks, in execution order
  std::vector<std::pair<std::string, int64_t>> dims;  // model-level dim sizes used

  // Sums over the nodes; a UserError (kind `overflow`) naming the node where the sum stops
  // fitting in int64.
  int64_t total_macs() const;
  int64_t total_flops() const;
};

// The error for a sum over `graph`'s nodes (`quantity`: "MACs", "unfused bytes") that stops
// fitting in int64 when `node` is added.
UserError total_overflow(const Graph& graph, const Node& node, const std::string& quantity);

}  // namespace solar
