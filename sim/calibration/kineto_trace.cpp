#include "sim/calibration/kineto_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "sim/core/csv_fields.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/core/quantile.h"

namespace placesim {
namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// A member of `args` whose name matches `key` ignoring case (Kineto writes "External id",
/// other tools "external id"); null when absent.
const Json* arg(const Json& args, const std::string& key) {
  if (!args.is_object()) return nullptr;
  auto exact = args.find(key);
  if (exact != args.end()) return &*exact;
  const std::string wanted = lower(key);
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (lower(it.key()) == wanted) return &it.value();
  }
  return nullptr;
}

std::optional<int64_t> integer_arg(const Json& args, const std::string& key) {
  const Json* value = arg(args, key);
  if (!value || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

/// A thread id as text: Kineto writes numbers, other tools strings ("stream 7").
std::string id_text(const Json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

struct CpuOp {
  std::string name;
  double start_us = 0;
  double end_us = 0;
  const Json* args = nullptr;
  std::vector<size_t> kernels;  ///< indexes into the kernel list, in trace order
};

struct GpuKernel {
  std::string name;
  double duration_us = 0;
  std::optional<int64_t> correlation;
  std::optional<int64_t> external_id;
};

struct RuntimeCall {
  std::string thread;  ///< pid/tid
  double time_us = 0;
};

/// An operator's tensor dimensions ("Input Dims"), one list per input (empty for non-tensors).
std::vector<std::vector<int64_t>> input_dims(const CpuOp& op, const char* key = "Input Dims") {
  std::vector<std::vector<int64_t>> dims;
  const Json* list = arg(*op.args, key);
  if (!list || !list->is_array()) return dims;
  for (const Json& input : *list) {
    std::vector<int64_t> one;
    if (input.is_array()) {
      for (const Json& d : input) one.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
    }
    dims.push_back(std::move(one));
  }
  return dims;
}

/// A concrete scalar or int-list input as PyTorch records it ("[1, 1]", "1", "True"); empty when absent.
std::string concrete_input(const CpuOp& op, size_t index) {
  const Json* list = arg(*op.args, "Concrete Inputs");
  if (!list || !list->is_array() || index >= list->size() || !(*list)[index].is_string()) return "";
  return (*list)[index].get<std::string>();
}

/// "[2, 3]" -> {2, 3}; "4" -> {4}; nullopt when it does not parse.
std::optional<std::vector<int64_t>> int_list(const std::string& text) {
  std::string digits;
  for (char c : text) digits += (c == '[' || c == ']' || c == ',') ? ' ' : c;
  std::istringstream in(digits);
  std::vector<int64_t> values;
  int64_t value = 0;
  while (in >> value) values.push_back(value);
  if (!in.eof() || values.empty()) return std::nullopt;
  return values;
}

/// A pair of spatial values (height, width) from a list of one or two.
std::optional<std::pair<int64_t, int64_t>> spatial_pair(const std::string& text) {
  auto values = int_list(text);
  if (!values || values->size() > 2) return std::nullopt;
  return std::make_pair(values->front(), values->back());
}

std::optional<Precision> precision_of(const CpuOp& op, const std::vector<std::string>& kernel_names) {
  const Json* types = arg(*op.args, "Input type");
  if (!types || !types->is_array() || types->empty() || !(*types)[0].is_string()) return std::nullopt;
  const std::string type = (*types)[0].get<std::string>();
  if (type == "c10::Half") return Precision::kFp16;
  if (type == "c10::BFloat16") return Precision::kBf16;
  if (type != "float") return std::nullopt;
  // fp32 tensors multiplied on tensor cores in TF32 (allow_tf32): the kernels say so in their names.
  for (const std::string& name : kernel_names) {
    const std::string l = lower(name);
    if (l.find("tf32") != std::string::npos || l.find("s1688") != std::string::npos ||
        l.find("s16816") != std::string::npos) {
      return Precision::kTf32;
    }
  }
  return Precision::kFp32;
}

/// Whether a tensor of `dims` with `strides` is stored transposed (column-major in its last two dims).
bool stored_transposed(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  if (dims.size() < 2 || strides.size() != dims.size()) return false;
  const size_t r = dims.size() - 2;
  return strides[r + 1] != 1 && strides[r] == 1 && dims[r] > 1;
}

/// A kernel name without its template and parameter lists, and without commas.
std::string short_kernel_name(const std::string& name) {
  std::string text = name.substr(0, name.find_first_of("(<"));
  if (text.rfind("void ", 0) == 0) text = text.substr(5);
  std::replace(text.begin(), text.end(), ',', ' ');
  return text.size() > 60 ? text.substr(0, 60) : text;
}

/// cuDNN's algorithm family of a forward convolution, when its kernels' names say it.
std::string conv_algorithm_from_kernels(const std::vector<std::string>& names) {
  bool winograd = false, nonfused = false, fft = false, implicit = false, im2col = false;
  for (const std::string& name : names) {
    const std::string l = lower(name);
    if (l.find("winograd") != std::string::npos) winograd = true;
    if (l.find("nonfused") != std::string::npos || l.find("generatewinograd") != std::string::npos) nonfused = true;
    if (l.find("fft") != std::string::npos) fft = true;
    if (l.find("implicit") != std::string::npos || l.find("fprop") != std::string::npos) implicit = true;
    if (l.find("im2col") != std::string::npos) im2col = true;
  }
  if (winograd) return nonfused ? "WINOGRAD_NONFUSED" : "WINOGRAD";
  if (fft) return "FFT";
  if (im2col) return "GEMM";
  if (implicit) return "IMPLICIT_GEMM";
  return "";
}

struct Call {
  std::string op;
  std::string shape;
  Precision precision = Precision::kFp32;
  std::string algorithm;
  double seconds = 0;
  std::string aten_op;
  std::string kernels;
  int64_t kernel_count = 0;
};

std::string kernel_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " + ") + short_kernel_name(name);
  return text;
}

/// The GEMM an mm/addmm/bmm/baddbmm call ran, or the reason it cannot be read.
std::optional<std::string> gemm_shape(const CpuOp& op, std::string& table_op, std::string& why) {
  const auto dims = input_dims(op);
  const auto strides = input_dims(op, "Input Strides");
  const bool batched = op.name == "aten::bmm" || op.name == "aten::baddbmm";
  const size_t a = (op.name == "aten::addmm" || op.name == "aten::baddbmm") ? 1 : 0;
  const size_t rank = batched ? 3 : 2;
  if (dims.size() < a + 2 || dims[a].size() != rank || dims[a + 1].size() != rank) {
    why = op.name + ": no Input Dims (record with record_shapes=True)";
    return std::nullopt;
  }
  const auto& x = dims[a];
  const auto& y = dims[a + 1];
  const size_t r = rank - 2;
  if (x[r + 1] != y[r] || std::any_of(x.begin(), x.end(), [](int64_t d) { return d < 1; }) || y[r + 1] < 1 ||
      (batched && x[0] != y[0])) {
    why = op.name + ": Input Dims that do not multiply";
    return std::nullopt;
  }
  const bool ta = strides.size() > a && stored_transposed(x, strides[a]);
  const bool tb = strides.size() > a + 1 && stored_transposed(y, strides[a + 1]);
  std::string shape = batched ? "batch=" + std::to_string(x[0]) + ";" : "";
  shape += "m=" + std::to_string(x[r]) + ";n=" + std::to_string(y[r + 1]) + ";k=" + std::to_string(x[r + 1]) +
           ";ta=" + (ta ? "1" : "0") + ";tb=" + (tb ? "1" : "0");
  table_op = batched ? "bmm" : "gemm";
  return shape;
}

/// Where a convolution operator keeps its arguments.
struct ConvSignature {
  size_t input = 0, weight = 1, stride = 0, padding = 0, dilation = 0, groups = 0;
  std::optional<size_t> transposed;
};

std::optional<ConvSignature> conv_signature(const std::string& name) {
  // aten::cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, deterministic, allow_tf32)
  if (name == "aten::cudnn_convolution") return ConvSignature{0, 1, 3, 2, 4, 5, std::nullopt};
  // aten::convolution / _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
  if (name == "aten::convolution" || name == "aten::_convolution") return ConvSignature{0, 1, 3, 4, 5, 8, 6};
  // aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
  //                            output_padding, groups, output_mask)
  if (name == "aten::convolution_backward") return ConvSignature{1, 2, 4, 5, 6, 9, 7};
  return std::nullopt;
}

/// The convolution's shape keys, or the reason they cannot be read.
std::optional<std::string> conv_shape(const CpuOp& op, const ConvSignature& at, std::string& why) {
  const auto dims = input_dims(op);
  if (dims.size() <= std::max(at.input, at.weight) || dims[at.input].size() != 4 || dims[at.weight].size() != 4) {
    why = op.name + ": not a 2-D convolution with Input Dims (record with record_shapes=True)";
    return std::nullopt;
  }
  if (at.transposed && concrete_input(op, *at.transposed) == "True") {
    why = op.name + ": transposed convolution";
    return std::nullopt;
  }
  auto stride = spatial_pair(concrete_input(op, at.stride));
  auto padding = spatial_pair(concrete_input(op, at.padding));
  auto dilation = spatial_pair(concrete_input(op, at.dilation));
  auto groups = int_list(concrete_input(op, at.groups));
  if (!stride || !padding || !dilation || !groups || groups->size() != 1) {
    why = op.name + ": no stride, padding, dilation or groups (PyTorch >= 2.0 records them as Concrete Inputs)";
    return std::nullopt;
  }
  const auto& x = dims[at.input];
  const auto& f = dims[at.weight];
  const int64_t g = groups->front();
  if (g < 1 || f[1] * g != x[1] || f[0] % g != 0 || stride->first < 1 || stride->second < 1 || padding->first < 0 ||
      padding->second < 0 || dilation->first < 1 || dilation->second < 1 ||
      std::any_of(x.begin(), x.end(), [](int64_t d) { return d < 1; }) ||
      std::any_of(f.begin(), f.end(), [](int64_t d) { return d < 1; })) {
    why = op.name + ": inconsistent convolution arguments";
    return std::nullopt;
  }
  std::string shape = "n=" + std::to_string(x[0]) + ";c=" + std::to_string(x[1]) + ";h=" + std::to_string(x[2]) +
                      ";w=" + std::to_string(x[3]) + ";k=" + std::to_string(f[0]) + ";r=" + std::to_string(f[2]) +
                      ";s=" + std::to_string(f[3]) + ";pad_h=" + std::to_string(padding->first) +
                      ";pad_w=" + std::to_string(padding->second) + ";stride_h=" + std::to_string(stride->first) +
                      ";stride_w=" + std::to_string(stride->second);
  if (dilation->first != 1 || dilation->second != 1) {
    shape += ";dil_h=" + std::to_string(dilation->first) + ";dil_w=" + std::to_string(dilation->second);
  }
  if (g != 1) shape += ";groups=" + std::to_string(g);
  return shape;
}

/// cuDNN's layout conversion around a tensor-core convolution of NCHW tensors.
bool is_layout_transpose(const std::string& kernel_name) {
  return kernel_name.find("nchwToNhwc") != std::string::npos || kernel_name.find("nhwcToNchw") != std::string::npos;
}

/// The pass a backward convolution kernel computes, from cuDNN's kernel names ("dgrad", "wgrad");
/// empty for kernels that say neither (bias gradients, layout conversions).
std::string backward_pass_of(const std::string& kernel_name) {
  const std::string l = lower(kernel_name);
  if (l.find("dgrad") != std::string::npos) return "conv_bwd_data";
  if (l.find("wgrad") != std::string::npos) return "conv_bwd_filter";
  return "";
}

}  // namespace

KinetoTraceTable read_kineto_trace(const std::filesystem::path& path) {
  const std::string file = path.string();
  const Json trace = parse_json_file(path);
  const Json* events = nullptr;
  std::string events_path = "/traceEvents";
  if (trace.is_object() && trace.contains("traceEvents")) {
    events = &trace["traceEvents"];
  } else if (trace.is_array()) {
    events = &trace;
    events_path = "";
  }
  if (!events || !events->is_array()) {
    throw InputError(file, trace.is_object() ? "/traceEvents" : "/",
                     "expected a Chrome trace (an object with a \"traceEvents\" array, as torch.profiler's "
                     "export_chrome_trace writes)");
  }

  std::vector<CpuOp> ops;
  std::vector<GpuKernel> kernels;
  std::unordered_map<int64_t, RuntimeCall> runtime_by_correlation;
  std::map<std::string, std::vector<size_t>> ops_by_thread;
  std::unordered_map<int64_t, size_t> op_by_external_id;
  for (size_t i = 0; i < events->size(); ++i) {
    const Json& event = (*events)[i];
    if (!event.is_object() || event.value("ph", "") != "X") continue;
    const auto cat = event.find("cat");
    const auto ts = event.find("ts");
    const auto dur = event.find("dur");
    if (cat == event.end() || !cat->is_string() || ts == event.end() || !ts->is_number() || dur == event.end() ||
        !dur->is_number()) {
      continue;
    }
    const std::string category = lower(cat->get<std::string>());
    const double start = ts->get<double>();
    const double duration = dur->get<double>();
    if (!std::isfinite(start) || !std::isfinite(duration) || duration < 0) {
      throw InputError(file, events_path + "/" + std::to_string(i), "expected finite \"ts\" and \"dur\" >= 0");
    }
    static const Json kNoArgs = Json::object();
    auto args_it = event.find("args");
    const Json& args = args_it != event.end() ? *args_it : kNoArgs;
    const std::string thread = id_text(event, "pid") + "/" + id_text(event, "tid");
    if (category == "cpu_op" || category == "operator") {
      CpuOp op;
      op.name = event.value("name", "");
      op.start_us = start;
      op.end_us = start + duration;
      op.args = &args;
      if (auto id = integer_arg(args, "External id")) op_by_external_id.emplace(*id, ops.size());
      ops_by_thread[thread].push_back(ops.size());
      ops.push_back(std::move(op));
    } else if (category == "cuda_runtime" || category == "runtime" || category == "cuda_driver") {
      if (auto correlation = integer_arg(args, "correlation")) {
        runtime_by_correlation[*correlation] = RuntimeCall{thread, start};
      }
    } else if (category == "kernel") {
      GpuKernel kernel;
      kernel.name = event.value("name", "");
      kernel.duration_us = duration;
      kernel.correlation = integer_arg(args, "correlation");
      kernel.external_id = integer_arg(args, "External id");
      kernels.push_back(std::move(kernel));
    }
  }
  if (kernels.empty()) {
    throw InputError(file, events_path,
                     "no GPU kernels (events with \"cat\": \"kernel\"): profile with "
                     "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] and record_shapes=True");
  }
  for (auto& [thread, list] : ops_by_thread) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) { return ops[a].start_us < ops[b].start_us; });
  }

  // Each kernel to the operator that launched it: the innermost operator around its launch call
  // on the launching thread, else the operator its "External id" names.
  KinetoTraceTable table;
  table.kernel_events = static_cast<int64_t>(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::optional<size_t> owner;
    if (kernels[k].correlation) {
      auto call = runtime_by_correlation.find(*kernels[k].correlation);
      if (call != runtime_by_correlation.end()) {
        auto list = ops_by_thread.find(call->second.thread);
        if (list != ops_by_thread.end()) {
          const double t = call->second.time_us;
          auto it = std::upper_bound(list->second.begin(), list->second.end(), t,
                                     [&](double time, size_t op) { return time < ops[op].start_us; });
          // Walk back from the last operator started before the launch to the first that is still
          // running (a bounded walk: launches happen inside leaf operators).
          for (int steps = 0; it != list->second.begin() && steps < 256; ++steps) {
            --it;
            if (ops[*it].end_us >= t) {
              owner = *it;
              break;
            }
          }
        }
      }
    }
    if (!owner && kernels[k].external_id) {
      auto it = op_by_external_id.find(*kernels[k].external_id);
      if (it != op_by_external_id.end()) owner = it->second;
    }
    if (!owner) {
      ++table.skipped["no operator around its launch (record with ProfilerActivity.CPU)"];
      continue;
    }
    ops[*owner].kernels.push_back(k);
  }

  std::vector<Call> calls;
  for (const CpuOp& op : ops) {
    if (op.kernels.empty()) continue;
    std::vector<std::string> names;
    double total_us = 0;
    for (size_t k : op.kernels) {
      names.push_back(kernels[k].name);
      total_us += kernels[k].duration_us;
    }
    const int64_t count = static_cast<int64_t>(names.size());
    std::string why;
    auto precision = precision_of(op, names);
    const auto signature = conv_signature(op.name);
    const bool gemm = op.name == "aten::mm" || op.name == "aten::addmm" || op.name == "aten::bmm" ||
                      op.name == "aten::baddbmm";
    if (!gemm && !signature) {
      table.skipped[op.name + ": not a GEMM or convolution"] += count;
      continue;
    }
    if (!precision) {
      table.skipped[op.name + ": inputs neither float, c10::Half nor c10::BFloat16"] += count;
      continue;
    }
    if (gemm) {
      Call call;
      auto shape = gemm_shape(op, call.op, why);
      if (!shape) {
        table.skipped[why] += count;
        continue;
      }
      call.shape = *shape;
      call.precision = *precision;
      call.algorithm = "cublas";
      call.seconds = total_us * 1e-6;
      call.aten_op = op.name;
      call.kernels = kernel_list(names);
      call.kernel_count = count;
      calls.push_back(std::move(call));
      continue;
    }
    auto shape = conv_shape(op, *signature, why);
    if (!shape) {
      table.skipped[why] += count;
      continue;
    }
    if (op.name != "aten::convolution_backward") {
      // cuDNN's NCHW <-> NHWC transposes are not the convolution's: the cost model adds them from
      // the scenario's memory_format (sim/cost/layout_transposes.h).
      std::vector<std::string> conv_names;
      double conv_us = 0;
      for (size_t k : op.kernels) {
        if (is_layout_transpose(kernels[k].name)) continue;
        conv_names.push_back(kernels[k].name);
        conv_us += kernels[k].duration_us;
      }
      if (const int64_t transposes = count - static_cast<int64_t>(conv_names.size()); transposes > 0) {
        table.skipped[op.name + ": NCHW <-> NHWC layout transposes (the model adds them under memory_format nchw)"] +=
            transposes;
      }
      if (conv_names.empty()) continue;
      calls.push_back(Call{"conv_fwd", *shape, *precision, conv_algorithm_from_kernels(conv_names), conv_us * 1e-6,
                           op.name, kernel_list(conv_names), static_cast<int64_t>(conv_names.size())});
      continue;
    }
    // Backward: the data-gradient kernels and the filter-gradient kernels are two rows.
    for (const char* pass : {"conv_bwd_data", "conv_bwd_filter"}) {
      double pass_us = 0;
      std::vector<std::string> pass_names;
      for (size_t k : op.kernels) {
        if (backward_pass_of(kernels[k].name) == pass) {
          pass_us += kernels[k].duration_us;
          pass_names.push_back(kernels[k].name);
        }
      }
      if (pass_names.empty()) continue;
      calls.push_back(Call{pass, *shape, *precision, "", pass_us * 1e-6, op.name, kernel_list(pass_names),
                           static_cast<int64_t>(pass_names.size())});
    }
    int64_t unnamed = 0;
    for (size_t k : op.kernels) unnamed += backward_pass_of(kernels[k].name).empty() ? 1 : 0;
    if (unnamed > 0) {
      table.skipped["aten::convolution_backward: kernel named neither dgrad nor wgrad (bias gradient, layout)"] +=
          unnamed;
    }
  }

  std::map<std::tuple<std::string, std::string, Precision, std::string>, std::vector<const Call*>> groups;
  for (const Call& call : calls) groups[{call.op, call.shape, call.precision, call.algorithm}].push_back(&call);
  for (const auto& [key, members] : groups) {
    TraceKernelRow row;
    std::tie(row.op, row.shape, row.precision, row.algorithm) = key;
    std::vector<double> seconds;
    for (const Call* call : members) {
      seconds.push_back(call->seconds);
      table.kernels_used += call->kernel_count;
    }
    row.median_seconds = median(seconds);
    row.calls = static_cast<int64_t>(members.size());
    row.aten_op = members.front()->aten_op;
    row.kernels = members.front()->kernels;
    table.rows.push_back(std::move(row));
  }
  if (table.rows.empty()) {
    std::string reasons;
    for (const auto& [reason, count] : table.skipped) {
      reasons += "; " + reason + " (" + std::to_string(count) + " kernels)";
    }
    throw InputError(file, events_path, "no GEMM or convolution kernel with its shapes among " +
                                            std::to_string(table.kernel_events) + " GPU kernels" + reasons);
  }
  return table;
}

std::string kineto_trace_table_csv(const KinetoTraceTable& table, const std::string& device,
                                   const std::string& trace_name) {
  std::string csv = "device,op,shape,precision,algorithm,seconds,source\n";
  for (const TraceKernelRow& row : table.rows) {
    std::ostringstream seconds;
    seconds.precision(6);
    seconds << row.median_seconds;
    // The source is the last column: it may hold commas, never a line break.
    std::string source = trace_name + ": median of " + std::to_string(row.calls) + " call(s) of " + row.aten_op +
                         " (" + row.kernels + ")";
    std::replace(source.begin(), source.end(), '\n', ' ');
    std::replace(source.begin(), source.end(), '\r', ' ');
    csv += device + "," + row.op + "," + row.shape + "," + to_string(row.precision) + "," + row.algorithm + "," +
           seconds.str() + "," + neutralise_formula(source) + "\n";
  }
  return csv;
}

}  // namespace placesim
