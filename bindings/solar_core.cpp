// The one binding file: converts arguments, exposes read-only views of the core's results,
// and maps C++ errors to Python (solar.errors.UserError with diagnostics, InternalError).
#include <nanobind/make_iterator.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <thread>

#include "solar/arch/spec.h"
#include "solar/exec/executor.h"
#include "solar/graph/attrs.h"
#include "solar/io/json.h"
#include "solar/io/yaml.h"
#include "solar/ir/checker.h"
#include "solar/ir/parser.h"
#include "solar/ir/passes.h"
#include "solar/ir/printer.h"
#include "solar/pipeline/pipeline.h"
#include "solar/pipeline/session.h"
#include "solar/pipeline/sweep.h"
#include "solar/sol/analysis.h"
#include "solar/sol/cache_aware.h"
#include "solar/sol/chains.h"
#include "solar/sol/inverse.h"
#include "solar/sol/io_bound.h"

namespace nb = nanobind;
using namespace nb::literals;

// A graph's short lists (graph.h: SmallVec, an absl::InlinedVector) convert to and from Python
// lists as std::vector does, through nanobind's own list caster.
namespace nanobind::detail {
template <typename T, size_t N, typename A>
struct type_caster<absl::InlinedVector<T, N, A>> : list_caster<absl::InlinedVector<T, N, A>, T> {};
}  // namespace nanobind::detail

namespace {

nb::dict flops_dict(const solar::FlopCounts& f) {
  nb::dict d;
  d["add"] = f.add;
  d["mul"] = f.mul;
  d["div"] = f.div;
  d["transcendental"] = f.transcendental;
  d["compare"] = f.compare;
  d["other"] = f.other;
  return d;
}

solar::Fp32Math fp32_math_option(const std::string& s) {
  if (s.empty()) return solar::Fp32Math::kPlatformDefault;
  if (const auto mode = solar::parse_fp32_math(s)) return *mode;
  throw solar::UserError(solar::ErrorKind::kArgument, "", {},
                         "--fp32-math must be fp32, tf32, bf16, fp16 or fp8, got '" + s + "'");
}

// --quantize and --kv-cache values ("" for none): the recipe, or none when both are empty (a
// UserError naming the recipes or the formats for one the core does not know).
std::optional<solar::QuantRecipe> quantize_option(const std::string& recipe,
                                                  const std::string& kv_cache) {
  if (recipe.empty() && kv_cache.empty()) return std::nullopt;
  return solar::parse_quant_recipe(recipe, kv_cache);
}

double accuracy_option(double accuracy) {
  if (!(accuracy >= 0.0) || std::isinf(accuracy))
    throw solar::UserError(
        solar::ErrorKind::kArgument, "", {},
        "--accuracy must be a finite relative error of 0 or more, got " + std::to_string(accuracy));
  return accuracy;
}

// A read-only, indexable view of a graph's tensors or nodes (graph.tensors, graph.nodes) and
// of an analysis's per-node bounds (analysis.nodes, which the HTML report indexes per node). A
// converted list made every read of the attribute build a wrapper per element, so a Python
// loop that indexed graph.tensors was quadratic in the graph's size (stop 29: validating a
// 3,079-node LSTM took 400 s, 31 s after hoisting the read). Here indexing is O(1) and an
// element is wrapped only when read; each wrapper keeps the view, and the view the graph, alive.
template <class T>
struct SeqView {
  const std::vector<T>* items;
};

template <class T>
void bind_seq_view(nb::module_& m, const char* name) {
  using View = SeqView<T>;
  auto index = [](const View& v, Py_ssize_t i) {
    const auto n = static_cast<Py_ssize_t>(v.items->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw nb::index_error("index out of range");
    return static_cast<size_t>(i);
  };
  nb::class_<View>(m, name)
      .def("__len__", [](const View& v) { return v.items->size(); })
      .def(
          "__getitem__",
          [index](const View& v, Py_ssize_t i) -> const T& { return (*v.items)[index(v, i)]; },
          nb::rv_policy::reference_internal)
      .def("__getitem__",
           [](nb::handle self, const nb::slice& s) {
             const View& v = nb::cast<const View&>(self);
             const auto [start, stop, step, count] = s.compute(v.items->size());
             nb::list out;
             for (size_t k = 0; k < count; ++k) {
               const auto i = static_cast<size_t>(start + static_cast<Py_ssize_t>(k) * step);
               out.append(nb::cast(&(*v.items)[i], nb::rv_policy::reference_internal, self));
             }
             return out;
           })
      .def(
          "__iter__",
          [](const View& v) {
            return nb::make_iterator(nb::type<View>(), "iterator", v.items->begin(),
                                     v.items->end());
          },
          nb::keep_alive<0, 1>())
      .def("__repr__", [name](const View& v) {
        return std::string(name) + "(" + std::to_string(v.items->size()) + " items)";
      });
}

solar::TilingMemo* tilings_of(solar::Session* session) {
  return session ? &session->tilings : nullptr;
}

// The cancellation token of one execution (ExecOptions::cancel), set when SIGINT arrives.
// Python's own signal machinery does the catching: its C-level handler writes each caught
// signal's number to the wakeup fd (signal.set_wakeup_fd, which solar.execution points at a
// pipe of the call's own, on the main thread) and trips the Python-level handler. A thread of
// this call polls the pipe's read end and sets the token on a SIGINT byte; the destructor
// writes a 0 byte (no signal's number) to stop it. The thread starts only when the executor
// is about to do long work (ExecOptions::before_long_work: a compile, an interpreted call,
// or 2^26 points and FLOPs of native work): a thread started beside a short native run waited for a
// core held by the run's OpenMP team and then took it from the team (0.4-0.9 ms of a 2 ms
// depthwise convolution on 2 cores). A SIGINT before it starts stays in the pipe and stops
// the run when it does; one during a short run is Python's to raise when the call returns.
// The execution stays on the calling thread (running it on another thread cost each call a
// new OpenMP team, 2-7 ms, bench/compare_builds.py). No signal handler is installed here
// and nothing outlives the call (no process-wide state, nothing to survive a fork).
// fds.first < 0: no watching (off the main thread, where Python takes no wakeup fd).
class InterruptWatch {
 public:
  explicit InterruptWatch(std::pair<int, int> fds) : read_(fds.first), write_(fds.second) {}
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
  // Starts watching (once; later calls do nothing).
  void start() {
    if (read_ >= 0 && !thread_.joinable()) thread_ = std::thread([this] { watch(); });
  }
  ~InterruptWatch() {
    if (!thread_.joinable()) return;
    // The pipe is non-blocking: while it is full the watcher is awake draining it.
    const unsigned char stop = 0;
    while (!ended_.load() && ::write(write_, &stop, 1) < 0 && (errno == EINTR || errno == EAGAIN)) {
    }
    thread_.join();
  }
  const std::atomic<bool>* token() const { return &interrupted_; }

 private:
  void watch() {
    pollfd fd = {read_, POLLIN, 0};
    bool stop = false;
    while (!stop) {
      if (::poll(&fd, 1, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if ((fd.revents & POLLIN) == 0) break;  // the pipe was closed: stop watching
      unsigned char bytes[64];
      const ssize_t n = ::read(read_, bytes, sizeof bytes);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        if (bytes[i] == SIGINT) interrupted_.store(true);
        if (bytes[i] == 0) stop = true;
      }
    }
    ended_.store(true);
  }

  int read_, write_;
  std::atomic<bool> interrupted_{false}, ended_{false};
  std::thread thread_;
};

// A node's typed attributes (graph/attrs.h) as a dict, by field name.
nb::dict node_attributes(const solar::Node& n) {
  using solar::Builtin;
  nb::dict d;
  switch (n.builtin) {
    case Builtin::kPermute:
    case Builtin::kPermuteView:
    case Builtin::kBroadcast:
      d["from"] = solar::DimMapAttrs::of(n).flat();
      break;
    case Builtin::kConcat:
    case Builtin::kStack:
    case Builtin::kScatter:
    case Builtin::kScatterAdd:
      d["axis"] = solar::AxisAttrs::of(n).axis;
      if (n.builtin == Builtin::kScatter || n.builtin == Builtin::kScatterAdd)
        d["inplace"] = solar::AxisAttrs::of(n).inplace;
      break;
    case Builtin::kSlice:
    case Builtin::kUpdate: {
      const auto a = solar::SliceAttrs::of(n);
      d["axis"] = a.axis;
      d["start"] = a.start;
      d["step"] = a.step;
      break;
    }
    case Builtin::kSelect: {
      const auto a = solar::SelectAttrs::of(n);
      d["axis"] = a.axis;
      d["index"] = a.index;
      break;
    }
    case Builtin::kUnfold: {
      const auto a = solar::UnfoldAttrs::of(n);
      d["axis"] = a.axis;
      d["step"] = a.step;
      break;
    }
    case Builtin::kSplit: {
      const auto a = solar::SplitAttrs::of(n);
      d["axis"] = a.axis;
      d["offsets"] = a.offsets;
      break;
    }
    case Builtin::kPad: {
      const auto a = solar::PadAttrs::of(n);
      d["axis"] = a.axis;
      d["before"] = a.before;
      d["after"] = a.after;
      d["fill"] = a.fill;
      break;
    }
    case Builtin::kGather: {
      const auto a = solar::GatherAttrs::of(n);
      d["axis"] = a.axis;
      d["distinct"] = a.distinct;
      break;
    }
    case Builtin::kTopk: {
      const auto a = solar::TopkAttrs::of(n);
      d["axis"] = a.axis;
      d["k"] = a.k;
      d["largest"] = a.largest;
      break;
    }
    case Builtin::kFft: {
      const auto a = solar::FftAttrs::of(n);
      static constexpr const char* kKinds[] = {"r2c", "c2r", "c2c"};
      d["axis"] = a.axis;
      d["kind"] = kKinds[static_cast<int>(a.kind)];
      d["n"] = a.n;
      d["inverse"] = a.inverse;
      d["onesided"] = a.onesided;
      d["scale"] = a.scale;
      break;
    }
    case Builtin::kConstant:
      d["value"] = n.value;
      break;
    default:
      break;
  }
  return d;
}

// The NumPy storage type of a dtype in the executor (Python views it as the real type).
nb::dlpack::dtype storage_dlpack(solar::DType d) {
  using solar::DType;
  switch (d) {
    case DType::kFp64:
      return nb::dtype<double>();
    case DType::kFp32:
    case DType::kTf32:
      return nb::dtype<float>();
    case DType::kInt64:
      return nb::dtype<int64_t>();
    case DType::kInt32:
      return nb::dtype<int32_t>();
    case DType::kInt16:
      return nb::dtype<int16_t>();
    case DType::kInt8:
      return nb::dtype<int8_t>();
    case DType::kBf16:
    case DType::kFp16:
      return nb::dtype<uint16_t>();
    default:
      return nb::dtype<uint8_t>();
  }
}

using InArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Solar C++ core (parse, check, trace, lift, SOL analysis)";

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const solar::UserError& e) {
      nb::list diags;
      for (const auto& d : e.diagnostics()) {
        diags.append(nb::make_tuple(solar::error_kind_name(d.kind), d.file, d.loc.line, d.loc.col,
                                    d.message, d.hint));
      }
      nb::object cls = nb::module_::import_("solar.errors").attr("UserError");
      nb::object exc = cls(e.what(), diags);
      PyErr_SetObject(cls.ptr(), exc.ptr());
    } catch (const solar::Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const solar::InternalError& e) {
      nb::object cls = nb::module_::import_("solar.errors").attr("InternalError");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });

  // --- front end ------------------------------------------------------------------------
  m.def(
      "format_source",
      [](const std::string& text, const std::string& file) {
        return solar::print_module(solar::parse_source(text, file));
      },
      "text"_a, "file"_a = "<string>", "Parse and print back in canonical layout.");
  m.def(
      "roundtrip_equal",
      [](const std::string& text, const std::string& file) {
        auto a = solar::parse_source(text, file);
        auto b = solar::parse_source(solar::print_module(a), file);
        return solar::ast::equal(a, b);
      },
      "text"_a, "file"_a = "<string>");
  m.def("read_source", &solar::read_source_file, "path"_a);

  nb::class_<solar::Program>(m, "Program")
      .def_prop_ro("file", [](const solar::Program& p) { return p.file; })
      .def_prop_ro("kernels",
                   [](const solar::Program& p) {
                     std::vector<std::string> names;
                     for (const auto& k : p.kernels) names.push_back(k.name);
                     return names;
                   })
      .def_prop_ro("kernel_einsums",
                   [](const solar::Program& p) {
                     std::vector<std::pair<std::string, std::string>> out;
                     for (const auto& k : p.kernels) out.emplace_back(k.name, k.einsum);
                     return out;
                   })
      .def_prop_ro("dims", [](const solar::Program& p) { return p.dims; });
  m.def(
      "format_diagnostic",
      [](const std::string& kind, const std::string& file, uint32_t line, uint32_t col,
         const std::string& message, const std::string& hint) {
        return solar::format_diagnostic(kind, file, solar::Loc{line, col}, message, hint);
      },
      "kind"_a, "file"_a, "line"_a, "col"_a, "message"_a, "hint"_a,
      "A diagnostic's text, as every error of the core prints it.");
  m.def("load_program", &solar::load_program, "path"_a);
  m.def("load_program_source", &solar::load_program_source, "text"_a, "file"_a = "<string>");
  m.def(
      "canonical_program",
      [](const std::string& text, const std::string& file) {
        // The checked program's text as the printer re-emits it from the AST: what Solar
        // writes for an accepted translation, never the reply's own text (docs/agent.md).
        return solar::print_module(solar::load_program_source(text, file).module);
      },
      "text"_a, "file"_a = "<string>",
      "Parse, check and print back in canonical layout; a UserError if the checker refuses.");
  m.def(
      "check_dump",
      [](const std::string& path, const std::string& pass) {
        // The checked program after `pass` (ir/passes.h), or after each ("all"); "kernel-ir":
        // the typed scalar IR of the checked program.
        if (pass == "kernel-ir") return solar::print_kernel_ir(solar::load_program(path));
        std::vector<std::string> names = {"check_and_lower"};
        for (const solar::CheckPass& p : solar::check_passes()) names.emplace_back(p.name);
        if (pass != "all" && std::find(names.begin(), names.end(), pass) == names.end()) {
          std::string known;
          for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
          throw solar::UserError(
              solar::ErrorKind::kArgument, "", {},
              "no checker pass named '" + pass + "' (passes: " + known + ", or all)");
        }
        std::string out;
        solar::check_program(solar::parse_file(path),
                             [&](const std::string& name, const solar::Program& program) {
                               if (pass != "all" && name != pass) return;
                               out += "## after " + name + "\n" + solar::print_checked(program);
                             });
        return out;
      },
      "path"_a, "pass"_a = "all",
      "The checked program as text after one checker pass (or after each: 'all').");

  // --- graph ----------------------------------------------------------------------------
  nb::class_<solar::TensorInfo>(m, "Tensor")
      .def_ro("id", &solar::TensorInfo::id)
      .def_ro("name", &solar::TensorInfo::name)
      .def_prop_ro("dims", [](const solar::TensorInfo& t) { return t.dims.names(); })
      .def_ro("shape", &solar::TensorInfo::shape)
      .def_prop_ro("dtype", [](const solar::TensorInfo& t) { return solar::dtype_name(t.dtype); })
      .def_prop_ro("role",
                   [](const solar::TensorInfo& t) {
                     return t.is_output ? "output" : solar::role_name(t.role);
                   })
      .def_ro("sparsity", &solar::TensorInfo::sparsity)
      .def_ro("producer", &solar::TensorInfo::producer)
      .def_ro("consumers", &solar::TensorInfo::consumers)
      .def_ro("storage", &solar::TensorInfo::storage)
      .def_ro("is_output", &solar::TensorInfo::is_output)
      .def_prop_ro("elements", &solar::TensorInfo::elements)
      .def_prop_ro("bytes", &solar::TensorInfo::bytes);

  nb::class_<solar::Einsum>(m, "Einsum")
      .def_ro("text", &solar::Einsum::text)
      .def_ro("ranks", &solar::Einsum::ranks)
      .def_ro("rank_sizes", &solar::Einsum::rank_sizes)
      .def_ro("points", &solar::Einsum::points)
      .def_ro("macs", &solar::Einsum::macs)
      .def_ro("guarded", &solar::Einsum::guarded)
      .def_ro("map_expr", &solar::Einsum::map_expr)
      .def_prop_ro("reduce", [](const solar::Einsum& e) { return solar::reduce_op_name(e.reduce); })
      .def_prop_ro("flops", [](const solar::Einsum& e) { return flops_dict(e.flops); })
      .def_prop_ro("vector_flops", [](const solar::Einsum& e) { return e.flops.total(); })
      .def_prop_ro("output_name", [](const solar::Einsum& e) { return e.output.name; })
      .def_prop_ro("output_dtype",
                   [](const solar::Einsum& e) { return solar::dtype_name(e.output_dtype); })
      .def_prop_ro("reduced_ranks",
                   [](const solar::Einsum& e) {
                     // Ranks the written index does not use: each output element accumulates over
                     // them.
                     std::vector<std::string> reduced;
                     for (const std::string& r : e.ranks) {
                       bool used = false;
                       for (const auto& dim : e.output.projection)
                         for (const auto& t : dim)
                           used = used || (t.rank == r && t.coefficient != 0);
                       if (!used) reduced.push_back(r);
                     }
                     return reduced;
                   })
      .def_prop_ro("output_ranks", [](const solar::Einsum& e) {
        // Per dim of the written tensor, the ranks its index uses.
        std::vector<std::vector<std::string>> ranks;
        for (const auto& dim : e.output.projection) {
          std::vector<std::string> used;
          for (const auto& t : dim)
            if (t.coefficient != 0) used.push_back(t.rank);
          ranks.push_back(std::move(used));
        }
        return ranks;
      });

  m.def(
      "builtins",
      [] {
        nb::list rows;
        for (int i = 1; i <= solar::kBuiltinCount; ++i) {
          const auto op = static_cast<solar::Builtin>(i);
          const solar::BuiltinInfo& info = solar::builtin_info(op);
          nb::dict row;
          row["name"] = info.name;
          row["converts"] = info.converts;
          row["view"] = info.view;
          row["moves"] = info.moves;
          row["attributes"] = info.attributes;
          rows.append(row);
        }
        return rows;
      },
      "The builtins of the composition layer (graph/ops.def), one dict each: name, converts, "
      "view, moves, attributes.");

  nb::class_<solar::Node>(m, "Node")
      .def_ro("id", &solar::Node::id)
      .def_ro("name", &solar::Node::name)
      .def_ro("op", &solar::Node::op)
      .def_prop_ro("kind", [](const solar::Node& n) { return solar::node_kind_name(n.kind); })
      .def_ro("einsum", &solar::Node::einsum)
      .def_prop_ro("einsums",
                   [](const solar::Node& n) {
                     return n.einsums ? *n.einsums : std::vector<solar::Einsum>{};
                   })
      .def_ro("inputs", &solar::Node::inputs)
      .def_ro("outputs", &solar::Node::outputs)
      .def_ro("macs", &solar::Node::macs)
      .def_prop_ro("flops", [](const solar::Node& n) { return flops_dict(n.flops); })
      .def_prop_ro("matrix_flops", &solar::Node::matrix_flops)
      .def_prop_ro("vector_flops", &solar::Node::vector_flops)
      .def_prop_ro("total_flops", &solar::Node::total_flops)
      .def_ro("attrs", &solar::Node::attrs)
      .def_prop_ro("attributes", &node_attributes,
                   "The builtin's typed attributes (graph/attrs.h) by name; {} for a kernel "
                   "call and the builtins without attributes.")
      .def_ro("bytes_read", &solar::Node::bytes_read)
      .def_ro("bytes_written", &solar::Node::bytes_written)
      .def_prop_ro("bytes", &solar::Node::bytes)
      .def_prop_ro("line", [](const solar::Node& n) { return n.loc.line; })
      .def_ro("unit", &solar::Node::unit)
      .def_prop_ro("fp32_math",
                   [](const solar::Node& n) { return solar::fp32_math_name(n.fp32_math); });

  nb::class_<solar::Unit>(m, "Unit")
      .def_ro("id", &solar::Unit::id)
      .def_ro("name", &solar::Unit::name)
      .def_ro("label", &solar::Unit::label)
      .def_ro("nodes", &solar::Unit::nodes)
      .def_ro("declared", &solar::Unit::declared)
      .def_prop_ro("fp32_math",
                   [](const solar::Unit& u) { return solar::fp32_math_name(u.fp32_math); })
      .def_prop_ro("line", [](const solar::Unit& u) { return u.loc.line; });

  bind_seq_view<solar::Node>(m, "NodeList");
  bind_seq_view<solar::TensorInfo>(m, "TensorList");
  nb::class_<solar::Graph>(m, "Graph")
      .def_ro("source", &solar::Graph::source)
      .def_prop_ro(
          "nodes", [](const solar::Graph& g) { return SeqView<solar::Node>{&g.nodes}; },
          nb::keep_alive<0, 1>())
      .def_prop_ro(
          "tensors", [](const solar::Graph& g) { return SeqView<solar::TensorInfo>{&g.tensors}; },
          nb::keep_alive<0, 1>())
      .def_ro("inputs", &solar::Graph::inputs)
      .def_ro("outputs", &solar::Graph::outputs)
      .def_ro("dims", &solar::Graph::dims)
      .def_prop_ro("total_macs", &solar::Graph::total_macs)
      .def_prop_ro("total_flops", &solar::Graph::total_flops)
      .def_prop_ro("unfused_bytes", &solar::unfused_bytes)
      .def_prop_ro("units", &solar::effective_units)
      .def_prop_ro("fused_bytes", &solar::fused_bytes)
      .def("to_yaml", &solar::graph_yaml);

  m.def(
      "trace",
      [](const solar::Program& p, std::vector<std::pair<std::string, int64_t>> dims) {
        solar::TraceOptions o;
        o.dims = std::move(dims);
        return solar::trace_program(p, o);
      },
      "program"_a, "dims"_a = std::vector<std::pair<std::string, int64_t>>{});

  // --- architecture and analysis --------------------------------------------------------
  nb::class_<solar::ArchSpec>(m, "ArchSpec")
      .def_ro("name", &solar::ArchSpec::name)
      .def_ro("description", &solar::ArchSpec::description)
      .def_ro("file", &solar::ArchSpec::file)
      .def_ro("notes", &solar::ArchSpec::notes)
      .def_ro("fp32_matrix_mode", &solar::ArchSpec::fp32_matrix_mode)
      .def_ro("cache_level", &solar::ArchSpec::cache_level)
      .def_ro("sparsity", &solar::ArchSpec::sparsity)
      .def_ro("clock", &solar::ArchSpec::clock)
      // Accumulate type of each matrix rate that states one (fp16, bf16, fp8, fp4).
      .def_ro("matrix_accumulate", &solar::ArchSpec::matrix_accumulate)
      .def_prop_ro("matrix_flops_per_second",
                   [](const solar::ArchSpec& a) {
                     std::map<std::string, std::pair<double, std::string>> out;
                     for (const auto& [k, r] : a.matrix_flops_per_second)
                       out[k] = {r.value, r.source};
                     return out;
                   })
      .def_prop_ro("vector_flops_per_second",
                   [](const solar::ArchSpec& a) {
                     std::map<std::string, std::pair<double, std::string>> out;
                     for (const auto& [k, r] : a.vector_flops_per_second)
                       out[k] = {r.value, r.source};
                     return out;
                   })
      .def_prop_ro("dram_bytes_per_second",
                   [](const solar::ArchSpec& a) {
                     return std::make_pair(a.dram_bytes_per_second.value,
                                           a.dram_bytes_per_second.source);
                   })
      .def_ro("dram_capacity_bytes", &solar::ArchSpec::dram_capacity_bytes)
      .def_prop_ro("on_chip", [](const solar::ArchSpec& a) {
        nb::list out;
        for (const auto& l : a.on_chip) {
          nb::dict d;
          d["name"] = l.name;
          d["capacity_bytes"] = l.capacity_bytes;
          d["bytes_per_second"] = l.bytes_per_second;
          d["source"] = l.source;
          out.append(d);
        }
        return out;
      });
  m.def("load_arch", &solar::resolve_arch, "name_or_path"_a, "search_dir"_a);
  m.def("list_archs", &solar::list_arch_names, "search_dir"_a);

  nb::class_<solar::Bottleneck>(m, "Bottleneck")
      .def_ro("kind", &solar::Bottleneck::kind)
      .def_ro("unit", &solar::Bottleneck::unit);
  bind_seq_view<solar::NodeSol>(m, "NodeSolList");
  nb::class_<solar::NodeSol>(m, "NodeSol")
      .def_ro("node", &solar::NodeSol::node)
      .def_ro("matrix_seconds", &solar::NodeSol::matrix_seconds)
      .def_ro("vector_seconds", &solar::NodeSol::vector_seconds)
      .def_ro("memory_seconds", &solar::NodeSol::memory_seconds)
      .def_ro("seconds", &solar::NodeSol::seconds)
      .def_ro("bottleneck", &solar::NodeSol::bottleneck)
      .def_ro("intensity", &solar::NodeSol::intensity)
      .def_ro("math_mode", &solar::NodeSol::math_mode)
      .def_ro("cache_aware_bytes", &solar::NodeSol::cache_aware_bytes)
      .def_ro("cache_aware_seconds", &solar::NodeSol::cache_aware_seconds)
      .def_ro("cache_schedule_bytes", &solar::NodeSol::cache_schedule_bytes);
  nb::class_<solar::UnitSol>(m, "UnitSol")
      .def_ro("unit", &solar::UnitSol::unit)
      .def_ro("bytes_read", &solar::UnitSol::bytes_read)
      .def_ro("bytes_written", &solar::UnitSol::bytes_written)
      .def_prop_ro("bytes", &solar::UnitSol::bytes)
      .def_ro("matrix_seconds", &solar::UnitSol::matrix_seconds)
      .def_ro("vector_seconds", &solar::UnitSol::vector_seconds)
      .def_ro("memory_seconds", &solar::UnitSol::memory_seconds)
      .def_ro("seconds", &solar::UnitSol::seconds)
      .def_ro("bottleneck", &solar::UnitSol::bottleneck);
  nb::class_<solar::MathModeGroup>(m, "MathModeGroup")
      .def_ro("mode", &solar::MathModeGroup::mode)
      .def_ro("reason", &solar::MathModeGroup::reason)
      .def_ro("vector_units", &solar::MathModeGroup::vector_units)
      .def_ro("nodes", &solar::MathModeGroup::nodes)
      .def_ro("macs", &solar::MathModeGroup::macs)
      .def_ro("matrix_flops_per_second", &solar::MathModeGroup::matrix_flops_per_second);
  nb::class_<solar::CacheLevel>(m, "CacheLevel")
      .def_ro("available", &solar::CacheLevel::available)
      .def_ro("level", &solar::CacheLevel::level)
      .def_ro("capacity_bytes", &solar::CacheLevel::capacity_bytes)
      .def_ro("bound_capacity_bytes", &solar::CacheLevel::bound_capacity_bytes)
      .def_ro("reason", &solar::CacheLevel::reason);
  nb::class_<solar::CacheSchedule>(m, "CacheSchedule")
      .def_ro("found", &solar::CacheSchedule::found)
      .def_ro("bytes", &solar::CacheSchedule::bytes)
      .def_ro("seconds", &solar::CacheSchedule::seconds)
      .def_ro("gap", &solar::CacheSchedule::gap);
  nb::class_<solar::GraphSol>(m, "GraphSol")
      .def_ro("mode", &solar::GraphSol::mode)
      .def_ro("flops", &solar::GraphSol::flops)
      .def_ro("matrix_flops", &solar::GraphSol::matrix_flops)
      .def_ro("vector_flops", &solar::GraphSol::vector_flops)
      .def_ro("bytes", &solar::GraphSol::bytes)
      .def_ro("matrix_seconds", &solar::GraphSol::matrix_seconds)
      .def_ro("vector_seconds", &solar::GraphSol::vector_seconds)
      .def_ro("memory_seconds", &solar::GraphSol::memory_seconds)
      .def_ro("llc_bytes", &solar::GraphSol::llc_bytes)
      .def_ro("llc_seconds", &solar::GraphSol::llc_seconds)
      .def_ro("seconds", &solar::GraphSol::seconds)
      .def_ro("bottleneck", &solar::GraphSol::bottleneck)
      .def_ro("intensity", &solar::GraphSol::intensity);
  nb::class_<solar::StartingState>(m, "StartingState")
      .def_ro("warm", &solar::StartingState::warm)
      .def_ro("assumption", &solar::StartingState::assumption)
      .def_ro("level", &solar::StartingState::level)
      .def_ro("capacity_bytes", &solar::StartingState::capacity_bytes)
      .def_ro("bytes_per_second", &solar::StartingState::bytes_per_second)
      .def_ro("served_max_bytes", &solar::StartingState::served_max_bytes);
  nb::class_<solar::QuantChange>(m, "QuantChange")
      .def_ro("node", &solar::QuantChange::node)
      .def_ro("weight", &solar::QuantChange::weight)
      .def_ro("cache", &solar::QuantChange::cache)
      .def_ro("activation", &solar::QuantChange::activation)
      .def_ro("prologue", &solar::QuantChange::prologue)
      .def_ro("bytes_before", &solar::QuantChange::bytes_before)
      .def_ro("bytes_after", &solar::QuantChange::bytes_after)
      .def_prop_ro("matrix_before",
                   [](const solar::QuantChange& c) { return solar::dtype_name(c.matrix_before); })
      .def_prop_ro("matrix_after",
                   [](const solar::QuantChange& c) { return solar::dtype_name(c.matrix_after); });
  nb::class_<solar::QuantSkip>(m, "QuantSkip")
      .def_ro("node", &solar::QuantSkip::node)
      .def_ro("reason", &solar::QuantSkip::reason);
  nb::class_<solar::QuantReport>(m, "QuantReport")
      .def_ro("recipe", &solar::QuantReport::recipe)
      .def_ro("weights", &solar::QuantReport::weights)
      .def_ro("activations", &solar::QuantReport::activations)
      .def_ro("changes", &solar::QuantReport::changes)
      .def_ro("skipped", &solar::QuantReport::skipped)
      .def_ro("weight_bytes_before", &solar::QuantReport::weight_bytes_before)
      .def_ro("weight_bytes_after", &solar::QuantReport::weight_bytes_after)
      .def_ro("kv_cache", &solar::QuantReport::kv_cache)
      .def_prop_ro("kv_format", [](const solar::QuantReport& q) { return q.applied.kv_name; })
      .def_ro("kv_inputs", &solar::QuantReport::kv_inputs)
      .def_ro("kv_skipped", &solar::QuantReport::kv_skipped)
      .def_ro("kv_bytes_before", &solar::QuantReport::kv_bytes_before)
      .def_ro("kv_bytes_after", &solar::QuantReport::kv_bytes_after);
  m.def("quant_recipe_names", &solar::quant_recipe_names);
  m.def("kv_cache_format_names", &solar::kv_cache_format_names);
  m.def(
      "quantized_graph",
      [](const solar::Graph& g, const std::string& recipe, const std::string& kv_cache) {
        return solar::quantize(g, solar::parse_quant_recipe(recipe, kv_cache)).graph;
      },
      "graph"_a, "recipe"_a, "kv_cache"_a = "",
      "The graph an analysis under `recipe` prices: the same nodes, with the recipe's bytes, "
      "FLOPs and matrix formats (per-node tables of a quantised analysis).");
  m.def(
      "check_quant_recipe",
      [](const std::string& text, const std::string& kv_cache) {
        solar::parse_quant_recipe(text, kv_cache);
      },
      "text"_a, "kv_cache"_a = "",
      "Raises the error (kind `argument`) of a --quantize or --kv-cache value the core rejects.");

  nb::class_<solar::Analysis>(m, "Analysis")
      .def_ro("arch", &solar::Analysis::arch)
      .def_ro("math_mode", &solar::Analysis::math_mode)
      .def_ro("fp32_math", &solar::Analysis::fp32_math)
      .def_ro("matrix_flops_per_second", &solar::Analysis::matrix_flops_per_second)
      .def_ro("vector_flops_per_second", &solar::Analysis::vector_flops_per_second)
      .def_ro("dram_bytes_per_second", &solar::Analysis::dram_bytes_per_second)
      .def_ro("ridge_matrix", &solar::Analysis::ridge_matrix)
      .def_ro("ridge_vector", &solar::Analysis::ridge_vector)
      .def_prop_ro(
          "nodes", [](const solar::Analysis& a) { return SeqView<solar::NodeSol>{&a.nodes}; },
          nb::keep_alive<0, 1>())
      .def_ro("units", &solar::Analysis::units)
      .def_ro("math_modes", &solar::Analysis::math_modes)
      .def_ro("unfused", &solar::Analysis::unfused)
      .def_ro("fused", &solar::Analysis::fused)
      .def_ro("cache", &solar::Analysis::cache)
      .def_ro("starting_state", &solar::Analysis::starting_state)
      .def_ro("quantization", &solar::Analysis::quantization)
      // None when the arch has no cache level (Analysis.cache.reason says why).
      .def_prop_ro("cache_aware",
                   [](const solar::Analysis& a) -> std::optional<solar::GraphSol> {
                     if (!a.cache.available) return std::nullopt;
                     return a.cache_aware;
                   })
      // The best schedule found (achievable, not a bound); None without a cache level or
      // when no tiling fits.
      .def_prop_ro("cache_schedule",
                   [](const solar::Analysis& a) -> std::optional<solar::CacheSchedule> {
                     if (!a.cache.available || !a.cache_schedule.found) return std::nullopt;
                     return a.cache_schedule;
                   });

  m.def(
      "analyze",
      [](const solar::Graph& g, const solar::ArchSpec& a, const std::string& fp32, bool cache_aware,
         solar::Session* session, double accuracy, bool warm, const std::string& quantize,
         const std::string& kv_cache) {
        solar::AnalysisOptions o;
        o.fp32_math = fp32_math_option(fp32);
        o.cache_aware = cache_aware;
        o.warm = warm;
        o.memo = tilings_of(session);
        o.accuracy = accuracy_option(accuracy);
        o.quantize = quantize_option(quantize, kv_cache);
        return solar::analyze(g, a, o);
      },
      "graph"_a, "arch"_a, "fp32_math"_a = "default", "cache_aware"_a = true,
      "session"_a.none() = nb::none(), "accuracy"_a = 0.0, "warm"_a = false, "quantize"_a = "",
      "kv_cache"_a = "",
      "The SOL modes of the graph on the arch; `session` keeps the tiling searches for later "
      "analyses (None: this analysis's own); `accuracy`: the relative error a correct "
      "implementation may make in a contraction (0: no accuracy contract); `warm`: a kernel "
      "repeated without flushing, its data in the last-level cache up to its capacity "
      "(docs/sol-modes.md, \"Starting state\"); `quantize`: a recipe (\"w4a16\", \"w4a4\", ...; "
      "\"\": "
      "none; docs/sol-modes.md, \"Quantisation recipes\"); `kv_cache`: the KV cache's format "
      "(\"fp8\", "
      "...; \"\": as written).");

  // --- inverse roofline, sweeps, chain reordering ---------------------------------------
  nb::class_<solar::Target>(m, "Target")
      .def_ro("seconds", &solar::Target::seconds)
      .def_ro("hertz", &solar::Target::hertz)
      .def_ro("text", &solar::Target::text);
  m.def("parse_latency", &solar::parse_latency, "text"_a);
  m.def("parse_rate", &solar::parse_rate, "text"_a);
  nb::class_<solar::InverseMode>(m, "InverseMode")
      .def_ro("mode", &solar::InverseMode::mode)
      .def_ro("flops", &solar::InverseMode::flops)
      .def_ro("matrix_flops", &solar::InverseMode::matrix_flops)
      .def_ro("vector_flops", &solar::InverseMode::vector_flops)
      .def_ro("bytes", &solar::InverseMode::bytes)
      .def_ro("seconds", &solar::InverseMode::seconds)
      .def_ro("attainable_hertz", &solar::InverseMode::attainable_hertz)
      .def_ro("speedup_required", &solar::InverseMode::speedup_required)
      .def_ro("met", &solar::InverseMode::met)
      .def_ro("flops_per_second_min", &solar::InverseMode::flops_per_second_min)
      .def_ro("matrix_flops_per_second_min", &solar::InverseMode::matrix_flops_per_second_min)
      .def_ro("vector_flops_per_second_min", &solar::InverseMode::vector_flops_per_second_min)
      .def_ro("bytes_per_second_min", &solar::InverseMode::bytes_per_second_min)
      .def_ro("compute_improvement", &solar::InverseMode::compute_improvement)
      .def_ro("matrix_improvement", &solar::InverseMode::matrix_improvement)
      .def_ro("vector_improvement", &solar::InverseMode::vector_improvement)
      .def_ro("dram_improvement", &solar::InverseMode::dram_improvement)
      .def_ro("bottleneck", &solar::InverseMode::bottleneck);
  nb::class_<solar::Inverse>(m, "Inverse")
      .def_ro("arch", &solar::Inverse::arch)
      .def_ro("target", &solar::Inverse::target)
      .def_ro("matrix_flops_per_second", &solar::Inverse::matrix_flops_per_second)
      .def_ro("vector_flops_per_second", &solar::Inverse::vector_flops_per_second)
      .def_ro("dram_bytes_per_second", &solar::Inverse::dram_bytes_per_second)
      .def_ro("math_mode", &solar::Inverse::math_mode)
      .def_ro("modes", &solar::Inverse::modes);
  m.def("inverse_roofline", &solar::inverse_roofline, "analysis"_a, "target"_a);

  nb::class_<solar::SweepPoint>(m, "SweepPoint")
      .def_ro("dims", &solar::SweepPoint::dims)
      .def_ro("arch", &solar::SweepPoint::arch)
      .def_ro("flops", &solar::SweepPoint::flops)
      .def_ro("matrix_flops", &solar::SweepPoint::matrix_flops)
      .def_ro("vector_flops", &solar::SweepPoint::vector_flops)
      .def_ro("unfused_bytes", &solar::SweepPoint::unfused_bytes)
      .def_ro("fused_bytes", &solar::SweepPoint::fused_bytes)
      .def_ro("unfused_seconds", &solar::SweepPoint::unfused_seconds)
      .def_ro("fused_seconds", &solar::SweepPoint::fused_seconds)
      .def_ro("unfused_bottleneck", &solar::SweepPoint::unfused_bottleneck)
      .def_ro("fused_bottleneck", &solar::SweepPoint::fused_bottleneck);
  m.def(
      "sweep",
      [](const solar::Program& p, const std::vector<solar::DimOverrides>& configs,
         const std::vector<solar::ArchSpec>& archs, const std::string& fp32, double accuracy,
         const std::string& quantize, const std::string& kv_cache) {
        solar::AnalysisOptions o;
        o.fp32_math = fp32_math_option(fp32);
        o.accuracy = accuracy_option(accuracy);
        o.quantize = quantize_option(quantize, kv_cache);
        return solar::sweep(p, configs, archs, o);
      },
      "program"_a, "configs"_a, "archs"_a, "fp32_math"_a = "default", "accuracy"_a = 0.0,
      "quantize"_a = "", "kv_cache"_a = "");

  nb::class_<solar::ChainTensor>(m, "ChainTensor")
      .def_ro("name", &solar::ChainTensor::name)
      .def_ro("ranks", &solar::ChainTensor::ranks)
      .def_prop_ro("dtype", [](const solar::ChainTensor& t) { return solar::dtype_name(t.dtype); });
  nb::class_<solar::ChainOrder>(m, "ChainOrder")
      .def_ro("expression", &solar::ChainOrder::expression)
      .def_ro("macs", &solar::ChainOrder::macs)
      .def_ro("flops", &solar::ChainOrder::flops)
      .def_ro("bytes", &solar::ChainOrder::bytes)
      .def_ro("intermediate_bytes", &solar::ChainOrder::intermediate_bytes);
  nb::class_<solar::Chain>(m, "Chain")
      .def_ro("kind", &solar::Chain::kind)
      .def_ro("nodes", &solar::Chain::nodes)
      .def_ro("einsum", &solar::Chain::einsum)
      .def_ro("operands", &solar::Chain::operands)
      .def_ro("output", &solar::Chain::output)
      .def_ro("rank_sizes", &solar::Chain::rank_sizes)
      .def_ro("orders", &solar::Chain::orders)
      .def_ro("left_to_right", &solar::Chain::left_to_right)
      .def_ro("best", &solar::Chain::best)
      .def_ro("worst", &solar::Chain::worst)
      .def_ro("as_written", &solar::Chain::as_written)
      .def_ro("direct", &solar::Chain::direct);
  m.def("find_chains", &solar::find_chains, "graph"_a);
  m.def(
      "chain_orders",
      [](const std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>& ops,
         const std::vector<std::string>& output_ranks,
         const std::map<std::string, int64_t>& rank_sizes, const std::string& output_dtype) {
        auto dtype = [](const std::string& name) {
          const auto d = solar::parse_dtype(name);
          if (!d) {
            throw solar::UserError(solar::ErrorKind::kUnknownDtype, "", {},
                                   "unknown dtype '" + name + "'");
          }
          return *d;
        };
        std::vector<solar::ChainTensor> operands;
        for (const auto& [name, ranks, dt] : ops) operands.push_back({name, ranks, dtype(dt)});
        return solar::chain_orders(operands, {"out", output_ranks, dtype(output_dtype)},
                                   rank_sizes);
      },
      "operands"_a, "output_ranks"_a, "rank_sizes"_a, "output_dtype"_a = "fp32",
      "Every association order of (name, ranks, dtype) operands in their order.");
  // --- cache-aware curve: plain data for plots and reports -------------------------------
  m.def(
      "cache_aware_curve",
      [](const solar::Graph& g, double platform_capacity, bool per_node, solar::Session* session) {
        const std::vector<double> caps = solar::curve_capacities(g, platform_capacity);
        std::vector<solar::CurvePoint> graph_curve;
        std::vector<std::vector<solar::CurvePoint>> node_curves;
        {
          nb::gil_scoped_release release;
          graph_curve = solar::cache_aware_curve(g, caps, tilings_of(session));
          if (per_node) node_curves = solar::cache_aware_node_curves(g, caps, tilings_of(session));
        }
        auto points = [](const std::vector<solar::CurvePoint>& curve) {
          nb::list out;
          for (const auto& p : curve) {
            nb::dict d;
            d["capacity_bytes"] = p.capacity_bytes;
            d["dram_bytes"] = p.bound_bytes;
            d["schedule_bytes"] = p.schedule_bytes;
            out.append(d);
          }
          return out;
        };
        nb::list nodes;
        for (size_t i = 0; i < node_curves.size(); ++i) {
          nb::dict nd;
          nd["node"] = g.nodes[i].name;
          nd["points"] = points(node_curves[i]);
          nodes.append(nd);
        }
        nb::list graph_points = points(graph_curve);
        return nb::make_tuple(graph_points, nodes);
      },
      "graph"_a, "platform_capacity_bytes"_a = 0.0, "per_node"_a = false,
      "session"_a.none() = nb::none(),
      "Curve points {capacity_bytes, dram_bytes (the proven bound), schedule_bytes (the best "
      "schedule found, None if none fits)} of the graph, and of every node when per_node.");
  m.def(
      "cache_aware_bound_bytes",
      [](const solar::Graph& g, double capacity, std::optional<int> node) {
        nb::gil_scoped_release release;
        return node ? solar::io_bound_node_bytes(g, *node, capacity)
                    : solar::io_bound_graph_bytes(g, capacity);
      },
      "graph"_a, "capacity_bytes"_a, "node"_a = nb::none(),
      "The proven lower bound on DRAM bytes of the graph (or of one node alone) when the chip "
      "holds capacity_bytes.");
  m.def(
      "cache_schedule_bytes",
      [](const solar::Graph& g, double capacity, std::optional<int> node, solar::Session* session) {
        nb::gil_scoped_release release;
        return node ? solar::schedule_node_bytes(g, *node, capacity, tilings_of(session))
                    : solar::schedule_graph_bytes(g, capacity, tilings_of(session));
      },
      "graph"_a, "capacity_bytes"_a, "node"_a = nb::none(), "session"_a.none() = nb::none(),
      "DRAM bytes of the best schedule found for the graph (or one node alone) with a buffer "
      "of capacity_bytes: achievable, not a bound; None if no tiling fits.");
  m.def(
      "cache_aware_einsum_bytes",
      [](const solar::Graph& g, double capacity, solar::Session& session) {
        // Every einsum nest of every node alone at `capacity` (the benchmark's unit of work):
        // (count of nests, sum of their least DRAM bytes).
        int64_t count = 0, total = 0;
        for (const solar::Node& n : g.nodes) {
          if (!n.einsums) continue;
          for (const solar::Einsum& e : *n.einsums) {
            const auto p = solar::tiling_problem(g, n, e, false);
            const auto& f = session.tilings.frontier(p);
            const auto best = solar::min_dram_bytes(f, capacity);
            total += best ? *best : (f.empty() ? 0 : f.front().dram_bytes);
            ++count;
          }
        }
        return std::make_pair(count, total);
      },
      "graph"_a, "capacity_bytes"_a, "session"_a);

  // --- execution ------------------------------------------------------------------------
  m.def(
      "estimate_cost",
      [](const solar::Graph& g, bool packed_gemms) {
        const auto c = solar::estimate_cost(g, packed_gemms);
        return std::make_tuple(c.peak_bytes, c.operations, c.gemm_macs);
      },
      "graph"_a, "packed_gemms"_a = false,
      "(peak bytes of live arrays, loop iterations x operations, MACs the native GEMM path "
      "may take); packed_gemms: with the native GEMM path's packed operands");

  m.def(
      "model_inputs",
      [](const solar::Program& p) {
        // (name, dims, dtype, role) of each model() tensor parameter, in order.
        std::vector<std::tuple<std::string, std::vector<std::string>, std::string, std::string>>
            out;
        for (const auto& param : p.model->params) {
          const auto* ann = param.annotation.get();
          if (!ann || ann->kind != solar::ast::ExprKind::kCall || ann->items[0]->text != "Tensor")
            continue;
          std::vector<std::string> dims;
          std::string cur;
          for (char c : (ann->items.size() > 1 ? ann->items[1]->text : std::string()) + ",") {
            if (c == ' ') continue;
            if (c == ',') {
              if (!cur.empty()) dims.push_back(cur);
              cur.clear();
            } else {
              cur += c;
            }
          }
          std::string dtype = "fp32", role = "input";
          if (const auto* kw = ann->keyword("dtype")) dtype = kw->value->text;
          if (const auto* kw = ann->keyword("role")) role = kw->value->text;
          out.emplace_back(param.name, dims, dtype, role);
        }
        return out;
      },
      "program"_a);

  nb::class_<solar::Session>(m, "Session",
                             "What the core keeps between calls (pipeline/session.h): kernels "
                             "the native backend loaded, tiling searches; owned by the caller")
      .def(nb::init<>())
      .def_prop_ro("unavailable", [](const solar::Session& s) { return s.native.unavailable(); })
      .def_prop_ro("tiling_memo_stats",
                   [](const solar::Session& s) {
                     const auto st = s.tilings.stats();
                     return std::make_pair(st.hits, st.misses);
                   })
      .def("clear_tilings", [](solar::Session& s) { s.tilings.clear(); });

  m.def(
      "native_unavailable_reason",
      [](const std::string& cache_dir, const std::string& compiler) {
        solar::ExecOptions o;
        o.cache_dir = cache_dir;
        if (!compiler.empty()) o.compiler = compiler;
        return solar::native_unavailable_reason(o);
      },
      "cache_dir"_a = "", "compiler"_a = "",
      "Why the native backend cannot run here ('' when the compiler and cache look usable).");

  m.def(
      "execute",
      [](const solar::Program& p, const solar::Graph& g,
         std::vector<std::pair<InArray, std::string>> inputs, const std::string& backend,
         bool bounds_check, const std::string& cache_dir, const std::string& include_dir,
         const std::string& compiler, solar::Session* session, bool fallback,
         std::pair<int, int> interrupt_fds) {
        std::vector<solar::Array> arrays;
        for (auto& [a, dtype] : inputs) {
          solar::Array arr;
          arr.dtype = *solar::parse_dtype(dtype);
          for (size_t i = 0; i < a.ndim(); ++i)
            arr.shape.push_back(static_cast<int64_t>(a.shape(i)));
          arr.data = a.data();  // borrowed: the caller keeps the inputs alive
          arrays.push_back(std::move(arr));
        }
        solar::ExecOptions o;
        if (backend == "native") {
          o.backend = solar::Backend::kNative;
        } else if (backend != "interpreter") {
          throw solar::UserError(
              solar::ErrorKind::kArgument, "", {},
              "backend must be 'native' or 'interpreter', got '" + backend + "'");
        }
        o.bounds_check = bounds_check;
        o.cache_dir = cache_dir;
        o.include_dir = include_dir;
        if (!compiler.empty()) o.compiler = compiler;
        o.session = session ? &session->native : nullptr;
        o.fallback_to_interpreter = fallback;
        std::vector<solar::Array> outs;
        solar::ExecReport report;
        {
          InterruptWatch watch(interrupt_fds);
          o.cancel = watch.token();
          o.before_long_work = [&watch] { watch.start(); };
          try {
            nb::gil_scoped_release release;
            outs = solar::execute(p, g, arrays, o, &report);
          } catch (const solar::Interrupted&) {
            // Python's handler was tripped with the byte that stopped the run: run it now
            // (KeyboardInterrupt from the default handler), so it does not fire again later
            // in the caller's clean-up; a handler that returns leaves the interruption.
            if (PyErr_CheckSignals() != 0) throw nb::python_error();
            throw;
          }
        }
        nb::list result;
        for (auto& a : outs) {
          if (!a.owner && a.data) {
            // An input returned as it is or through a view (reshape, bitcast): its memory is
            // the caller's, which may free it; the output gets its own copy.
            solar::Array copy = solar::Array::allocate(a.dtype, a.shape);
            std::memcpy(copy.data, a.data, static_cast<size_t>(a.nbytes()));
            a = std::move(copy);
          }
          auto* keep = new solar::Array(a);
          nb::capsule owner(keep, [](void* q) noexcept { delete static_cast<solar::Array*>(q); });
          std::vector<size_t> shape(a.shape.begin(), a.shape.end());
          nb::ndarray<nb::numpy> arr(keep->data, shape.size(), shape.data(), owner, nullptr,
                                     storage_dlpack(a.dtype));
          result.append(nb::make_tuple(arr, solar::dtype_name(a.dtype)));
        }
        nb::dict r;
        r["backend"] = solar::backend_name(report.backend);
        r["native_calls"] = report.native_calls;
        r["interpreted_calls"] = report.interpreted_calls;
        r["fallback_reason"] = report.fallback_reason;
        return nb::make_tuple(result, r);
      },
      "program"_a, "graph"_a, "inputs"_a, "backend"_a = "interpreter", "bounds_check"_a = true,
      "cache_dir"_a = "", "include_dir"_a = "", "compiler"_a = "", "session"_a.none() = nb::none(),
      "fallback_to_interpreter"_a = false, "interrupt_fds"_a = std::pair<int, int>{-1, -1},
      "Runs the graph; interrupt_fds: the read and write ends of the pipe Python's "
      "signal.set_wakeup_fd writes to (a SIGINT there stops the run; -1: none). Returns ([(array, "
      "dtype)], {backend, "
      "native_calls, interpreted_calls, "
      "fallback_reason}).");

  m.def(
      "numeric_roundtrip",
      [](const std::string& dtype, nb::ndarray<const double, nb::c_contig, nb::device::cpu> v) {
        const auto d = solar::parse_dtype(dtype);
        if (!d) {
          throw solar::UserError(solar::ErrorKind::kUnknownDtype, "", {},
                                 "unknown dtype '" + dtype + "'");
        }
        const size_t n = v.size();
        auto* out = new double[n];
        for (size_t i = 0; i < n; ++i) out[i] = solar::round_to_dtype(*d, v.data()[i]);
        nb::capsule owner(out, [](void* p) noexcept { delete[] static_cast<double*>(p); });
        size_t shape[1] = {n};
        return nb::ndarray<nb::numpy, double>(out, 1, shape, owner);
      },
      "dtype"_a, "values"_a, "Each value stored in the dtype's format and loaded back.");

  m.def(
      "analysis_json",
      [](const solar::Graph& g, const std::vector<solar::ArchSpec>& archs,
         const std::vector<solar::Analysis>& analyses, const std::string& status,
         const std::string& detail, const std::vector<std::string>& measurements) {
        solar::ValidationInfo v{status, detail};
        if (archs.size() == 1)
          return solar::analysis_json(g, archs[0], analyses[0], v, 2,
                                      measurements.empty() ? "" : measurements[0]);
        return solar::analyses_json(g, archs, analyses, v, 2, measurements);
      },
      "graph"_a, "archs"_a, "analyses"_a, "status"_a = "none", "detail"_a = "",
      "measurements"_a = std::vector<std::string>{},
      "The analysis JSON (docs/json-schema.md); `measurements`: one JSON object text per "
      "analysis (the --measure results), written as its `measurement`.");
}
