#include "solar/sol/traffic.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include "solar/base/checked.h"
#include "solar/graph/attrs.h"

namespace solar {

int64_t view_read_bytes(const Graph& graph, TensorId t) {
  const TensorInfo& info = graph.tensors[static_cast<size_t>(t)];
  return std::min(info.bytes(), graph.tensors[static_cast<size_t>(info.storage)].bytes());
}

namespace {

// Bytes of `tensor` that `n` touches through kernel tensor `slot`.
int64_t touched_bytes(const Node& n, int slot, const TensorInfo& tensor) {
  int64_t elements = 0;
  bool accessed = false;
  if (!n.einsums || tensor.role == Role::kGenerated) return tensor.bytes();
  for (const Einsum& e : *n.einsums) {
    for (const Operand& op : e.inputs) {
      if (op.slot != slot) continue;
      accessed = true;
      elements = std::max(elements, op.touched >= 0 ? op.touched : tensor.elements());
    }
  }
  if (!accessed || elements >= tensor.elements()) return tensor.bytes();
  const int64_t dense = dtype_bytes(tensor.dtype, elements);
  if (tensor.sparsity <= 0.0) return dense;
  return static_cast<int64_t>(std::ceil(static_cast<double>(dense) * (1.0 - tensor.sparsity)));
}

}  // namespace

int64_t kernel_read_bytes(const Graph& graph, const Node& node, int slot, TensorId t) {
  return std::min(view_read_bytes(graph, t),
                  touched_bytes(node, slot, graph.tensors[static_cast<size_t>(t)]));
}

namespace {

// The elements of its storage a view can address: a box in `frame`, the storage's elements in
// row-major order reshaped (a bijection) to the frame's shape. Unknown for views this rule
// does not follow (unfold's overlapping windows, a reshape after a slice).
struct Region {
  bool known = false;
  Shape frame;
  std::vector<int64_t> lo, hi;  // per frame dim: [lo, hi)
  bool dense = true;            // every element of the box (no slice step above 1)
  int64_t elements() const {
    int64_t n = 1;
    for (size_t d = 0; d < lo.size(); ++d) n *= hi[d] - lo[d];  // at most the storage's count
    return n;
  }
};

// One dim of a view: the frame dim it walks (-1: a broadcast dim, which addresses nothing
// new) and the frame coordinate of its index i, offset + stride * i.
struct ViewAxis {
  int64_t frame_dim = -1, offset = 0, stride = 1;
};

void frame_whole(Region& r, std::vector<ViewAxis>& axes) {
  r.lo.assign(r.frame.size(), 0);
  r.hi.assign(r.frame.begin(), r.frame.end());
  axes.assign(r.frame.size(), ViewAxis{});
  for (size_t d = 0; d < axes.size(); ++d) axes[d].frame_dim = static_cast<int64_t>(d);
}

// The axes of a view reshaped from `from` to `to` when only size-1 dims come or go (the
// others keep their order): true, with `axes` updated; false otherwise.
bool reshape_axes(const Shape& from, const Shape& to, std::vector<ViewAxis>& axes) {
  std::vector<ViewAxis> next;
  size_t i = 0;
  for (int64_t size : to) {
    while (i < from.size() && from[i] == 1 && size != 1) ++i;  // a size-1 dim that goes
    if (size == 1 && (i >= from.size() || from[i] != 1)) {
      next.push_back(ViewAxis{});  // a size-1 dim that comes: addresses nothing new
      continue;
    }
    if (i >= from.size() || from[i] != size) return false;
    next.push_back(axes[i++]);
  }
  for (; i < from.size(); ++i)
    if (from[i] != 1) return false;
  axes = std::move(next);
  return true;
}

// Narrows the box to elements start, start + step, ... (n of them) of view axis `axis`.
void narrow(Region& r, ViewAxis& a, int64_t start, int64_t step, int64_t n) {
  if (a.frame_dim < 0) return;
  a.offset += a.stride * start;
  a.stride *= step;
  const auto d = static_cast<size_t>(a.frame_dim);
  r.lo[d] = a.offset;
  r.hi[d] = n <= 0 ? a.offset : a.offset + a.stride * (n - 1) + 1;
  if (a.stride > 1 && n > 1) r.dense = false;
}

Region view_region(const Graph& g, TensorId t) {
  std::vector<TensorId> chain;  // t, the tensor it views, ..., up to the storage (excluded)
  for (TensorId cur = t; cur != g.tensors[static_cast<size_t>(cur)].storage;) {
    chain.push_back(cur);
    const NodeId p = g.tensors[static_cast<size_t>(cur)].producer;
    if (p == kNoNode || g.nodes[static_cast<size_t>(p)].inputs.empty()) return {};
    cur = g.nodes[static_cast<size_t>(p)].inputs[0];
  }
  Region r;
  r.known = true;
  r.frame = g.tensors[static_cast<size_t>(g.tensors[static_cast<size_t>(t)].storage)].shape;
  std::vector<ViewAxis> axes;
  frame_whole(r, axes);
  bool whole = true;    // nothing narrowed or reordered yet: a reshape only re-frames
  bool opaque = false;  // the view's axes are not followed (the region still is)
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const TensorInfo& v = g.tensors[static_cast<size_t>(*it)];
    const Node& p = g.nodes[static_cast<size_t>(v.producer)];
    const TensorInfo& in = g.tensors[static_cast<size_t>(p.inputs[0])];
    switch (p.builtin) {
      case Builtin::kUpdate:
      case Builtin::kScatter:
      case Builtin::kScatterAdd:
        break;  // base's elements, some of them written in place (an in-place scatter)
      case Builtin::kBitcast:
        if (dtype_bits(v.dtype) != dtype_bits(in.dtype)) return {};  // elements regrouped
        break;  // the same elements, read as another dtype of their size
      case Builtin::kReshape:
        if (v.shape == in.shape) break;
        if (whole) {
          r.frame = v.shape;
          frame_whole(r, axes);
        } else if (!opaque) {
          // The same elements; the axes follow when only size-1 dims come or go, and are
          // lost otherwise (a later slice then makes the region unknown).
          opaque = !reshape_axes(in.shape, v.shape, axes);
        }
        break;
      case Builtin::kPermute:
      case Builtin::kPermuteView:
      case Builtin::kBroadcast: {
        whole = false;
        if (opaque) break;  // the same elements, in an order not followed
        const std::span<const int64_t> from = DimMapAttrs::of(p).from;
        std::vector<ViewAxis> next(from.size());
        for (size_t d = 0; d < from.size(); ++d) {
          const int64_t a = from[d];
          if (a >= 0 && static_cast<size_t>(a) < axes.size() &&
              in.shape[static_cast<size_t>(a)] == v.shape[d])
            next[d] = axes[static_cast<size_t>(a)];  // else new or expanded from size 1
        }
        axes = std::move(next);
        break;
      }
      case Builtin::kSlice: {
        if (opaque) return {};
        const SliceAttrs a = SliceAttrs::of(p);
        if (a.step < 1 || a.axis >= axes.size()) return {};
        narrow(r, axes[a.axis], a.start, a.step, v.shape[a.axis]);
        whole = false;
        break;
      }
      case Builtin::kSplit: {
        if (opaque) return {};
        const SplitAttrs a = SplitAttrs::of(p);
        const auto k = static_cast<size_t>(std::find(p.outputs.begin(), p.outputs.end(), *it) -
                                           p.outputs.begin());
        if (k >= a.offsets.size() || a.axis >= axes.size()) return {};
        narrow(r, axes[a.axis], a.offsets[k], 1, v.shape[a.axis]);
        whole = false;
        break;
      }
      case Builtin::kSelect: {
        if (opaque) return {};
        const SelectAttrs a = SelectAttrs::of(p);
        if (a.axis >= axes.size()) return {};
        narrow(r, axes[a.axis], a.index, 1, 1);
        axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(a.axis));
        whole = false;
        break;
      }
      default:
        return {};  // unfold's overlapping windows, or a view this rule does not know
    }
  }
  return r;
}

// Bytes of `elements` elements of storage `s` (its dtype and density).
int64_t elements_bytes(const TensorInfo& s, int64_t elements) {
  if (elements >= s.elements()) return s.bytes();
  if (s.role == Role::kGenerated) return 0;
  const int64_t dense = dtype_bytes(s.dtype, elements);
  if (s.sparsity <= 0.0) return dense;
  return static_cast<int64_t>(std::ceil(static_cast<double>(dense) * (1.0 - s.sparsity)));
}

bool overlap(const Region& a, const Region& b) {
  for (size_t d = 0; d < a.lo.size(); ++d)
    if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;
  return true;
}

// Elements in the union of `boxes` (dims d and after), or nullopt when the sweep would take
// more than `budget` steps (the caller then counts the largest box). Recursive sweep over
// each dim's breakpoints.
std::optional<int64_t> union_elements(const std::vector<const Region*>& boxes, size_t d,
                                      int64_t& budget) {
  if (boxes.empty()) return 0;
  if (d == boxes.front()->lo.size()) return 1;
  std::vector<int64_t> cuts;
  for (const Region* b : boxes) cuts.push_back(b->lo[d]), cuts.push_back(b->hi[d]);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  int64_t total = 0;
  std::vector<const Region*> sub;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    budget -= static_cast<int64_t>(boxes.size());
    if (budget < 0) return std::nullopt;
    sub.clear();
    for (const Region* b : boxes)
      if (b->lo[d] <= cuts[i] && b->hi[d] >= cuts[i + 1]) sub.push_back(b);
    const std::optional<int64_t> inner = union_elements(sub, d + 1, budget);
    if (!inner) return std::nullopt;
    total += (cuts[i + 1] - cuts[i]) * *inner;  // a subset of the frame: fits
  }
  return total;
}

// Union-find over indices, for the components of overlapping regions.
struct Components {
  std::vector<size_t> parent;
  explicit Components(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i) parent[i] = i;
  }
  size_t find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

// Σ over the components of overlapping boxes (all of one frame) of what each needs: the
// volume of its union when every access fetches its whole box, else its largest access.
int64_t frame_bytes(const TensorInfo& s, const std::vector<Region>& regions,
                    const std::vector<int64_t>& bytes, const std::vector<size_t>& members) {
  const size_t n = members.size();
  const size_t rank = regions[members.front()].lo.size();
  auto largest_read = [&] {
    int64_t most_bytes = 0;
    for (size_t m : members) most_bytes = std::max(most_bytes, bytes[m]);
    return most_bytes;
  };
  if (rank == 0) return largest_read();  // a scalar: every read is of its one element
  // Components by a sweep along the dim whose boxes start at the most places (a weight stack
  // read one layer at a time: each box alone there); pair checks are budgeted, and past the
  // budget every box is taken as overlapping every other (the largest counts: still a bound).
  size_t sweep = 0, most = 0;
  for (size_t d = 0; d < rank; ++d) {
    std::vector<int64_t> starts;
    for (size_t m : members) starts.push_back(regions[m].lo[d]);
    std::sort(starts.begin(), starts.end());
    const auto distinct =
        static_cast<size_t>(std::unique(starts.begin(), starts.end()) - starts.begin());
    if (distinct > most) most = distinct, sweep = d;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  auto box = [&](size_t i) -> const Region& { return regions[members[i]]; };
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return box(a).lo[sweep] < box(b).lo[sweep]; });
  Components comp(n);
  int64_t checks = int64_t{1} << 22;
  std::vector<size_t> active;
  for (size_t i : order) {
    const Region& r = box(i);
    std::erase_if(active, [&](size_t a) { return box(a).hi[sweep] <= r.lo[sweep]; });
    for (size_t a : active) {
      if (--checks < 0) return largest_read();
      if (overlap(box(a), r)) comp.join(a, i);
    }
    active.push_back(i);
  }
  std::vector<std::vector<size_t>> groups(n);
  for (size_t i = 0; i < n; ++i) groups[comp.find(i)].push_back(members[i]);
  int64_t total = 0;
  for (const auto& group : groups) {
    if (group.empty()) continue;
    int64_t largest = 0;
    bool whole_boxes = true;
    std::vector<const Region*> boxes;
    for (size_t m : group) {
      largest = std::max(largest, bytes[m]);
      const Region& r = regions[m];
      whole_boxes = whole_boxes && r.dense && bytes[m] == elements_bytes(s, r.elements());
      boxes.push_back(&r);
    }
    int64_t need = largest;
    if (whole_boxes && group.size() > 1) {
      int64_t budget = int64_t{1} << 20;
      if (const std::optional<int64_t> e = union_elements(boxes, 0, budget))
        need = std::max(largest, elements_bytes(s, *e));
    }
    total = saturating_add(total, need);
  }
  return total;
}

}  // namespace

bool inputs_share_memory(const Graph& graph, const Node& node) {
  const auto& in = node.inputs;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t j = i + 1; j < in.size(); ++j)
      if (graph.tensors[static_cast<size_t>(in[i])].storage ==
          graph.tensors[static_cast<size_t>(in[j])].storage)
        return true;
  return false;
}

std::vector<int64_t> union_read_bytes(const Graph& graph, const Node& node) {
  std::vector<int64_t> out;
  std::vector<TensorId> done;
  std::vector<StorageAccess> accesses;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorId s = graph.tensors[static_cast<size_t>(node.inputs[i])].storage;
    if (std::find(done.begin(), done.end(), s) != done.end()) continue;
    done.push_back(s);
    accesses.clear();
    for (size_t j = i; j < node.inputs.size(); ++j)
      if (graph.tensors[static_cast<size_t>(node.inputs[j])].storage == s)
        accesses.push_back({node.inputs[j], node.input_bytes[j]});
    out.push_back(storage_union_bytes(graph, s, accesses));
  }
  return out;
}

bool writes_in_place(const Graph& graph, const Node& node) {
  if (node.kind != NodeKind::kDataMovement || node.outputs.empty() || node.bytes_written <= 0)
    return false;
  const TensorId out = node.outputs.front();
  return graph.tensors[static_cast<size_t>(out)].storage != out;
}

int64_t storage_union_bytes(const Graph& graph, TensorId storage,
                            std::vector<StorageAccess>& accesses) {
  const TensorInfo& s = graph.tensors[static_cast<size_t>(storage)];
  // A view builtin's read fetches nothing; one tensor accessed several times: its largest
  // access.
  std::erase_if(accesses, [](const StorageAccess& a) { return a.bytes <= 0; });
  std::sort(accesses.begin(), accesses.end(), [](const StorageAccess& a, const StorageAccess& b) {
    return a.tensor != b.tensor ? a.tensor < b.tensor : a.bytes > b.bytes;
  });
  accesses.erase(std::unique(accesses.begin(), accesses.end(),
                             [](const StorageAccess& a, const StorageAccess& b) {
                               return a.tensor == b.tensor;
                             }),
                 accesses.end());
  if (accesses.empty()) return 0;
  if (accesses.size() == 1) return std::min(accesses.front().bytes, s.bytes());
  std::vector<Region> regions;
  std::vector<int64_t> bytes;
  for (const StorageAccess& a : accesses) {
    regions.push_back(view_region(graph, a.tensor));
    const Region& r = regions.back();
    bytes.push_back(std::min(a.bytes, r.known ? elements_bytes(s, r.elements()) : s.bytes()));
  }
  // Regions of one frame are compared; regions of different frames (or unknown) may overlap
  // anything, so the total is the largest of the frames' sums and the unknown accesses.
  int64_t total = 0;
  std::vector<char> done(regions.size(), 0);
  for (size_t i = 0; i < regions.size(); ++i) {
    if (done[i]) continue;
    if (!regions[i].known) {
      total = std::max(total, bytes[i]);
      continue;
    }
    std::vector<size_t> members;
    for (size_t j = i; j < regions.size(); ++j) {
      if (!done[j] && regions[j].known && regions[j].frame == regions[i].frame) {
        members.push_back(j);
        done[j] = 1;
      }
    }
    total = std::max(total, frame_bytes(s, regions, bytes, members));
  }
  return std::min(total, s.bytes());
}

}  // namespace solar
