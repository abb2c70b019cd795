#include "sim/graph/onnx/onnx_window_checks.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "sim/graph/onnx/onnx_attributes.h"
#include "sim/graph/onnx/onnx_shapes.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

// Beyond this a window attribute is a mistake; below it ONNX's shape arithmetic ((k - 1) x d + 1,
// input + pads) cannot overflow 64 bits.
constexpr int64_t kMaxWindowValue = 2147483647;  // 2^31 - 1

bool is_conv(const std::string& type) {
  return type == "Conv" || type == "ConvInteger" || type == "QLinearConv" || type == "ConvTranspose";
}

std::optional<std::vector<int64_t>> ints(const pb::NodeProto& node, const std::string& name) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  if (!attribute) return std::nullopt;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

// The spelling of an attribute type in messages ("a float", "a list of integers").
std::string type_text(int type) {
  switch (type) {
    case pb::AttributeProto::FLOAT: return "a float";
    case pb::AttributeProto::INT: return "an integer";
    case pb::AttributeProto::STRING: return "a string";
    case pb::AttributeProto::INTS: return "a list of integers";
    case pb::AttributeProto::FLOATS: return "a list of floats";
    case pb::AttributeProto::STRINGS: return "a list of strings";
    default: return "an attribute of type " + std::to_string(type);
  }
}

// `name` must have ONNX type `wanted` when present (UNDEFINED: files older than IR 3 leave it out).
std::string type_problem(const pb::NodeProto& node, const std::string& name, int wanted) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  if (!attribute || attribute->type() == wanted || attribute->type() == pb::AttributeProto::UNDEFINED) return "";
  return "attribute " + name + " must be " + type_text(wanted) + ", got " + type_text(attribute->type());
}

std::string range_problem(const std::string& name, size_t i, int64_t value, int64_t least) {
  std::string where = name + "[" + std::to_string(i) + "] is " + std::to_string(value);
  if (value < least) {
    return where + "; " + name + (least == 0 ? " must not be negative" : " must be at least " + std::to_string(least));
  }
  if (value > kMaxWindowValue) return where + "; " + name + " above 2^31 - 1 are implausible";
  return "";
}

bool uses_dilation(const std::string& type) { return is_conv(type) || type == "MaxPool"; }

const std::vector<std::string>& window_types() {
  static const std::vector<std::string> kTypes = {"Conv",    "ConvInteger", "QLinearConv", "ConvTranspose",
                                                  "MaxPool", "AveragePool", "LpPool",      "MaxUnpool"};
  return kTypes;
}

// The rank of input `i` during shape inference, -1 when unknown.
int inferred_rank(pb::InferenceContext& context, size_t i) {
  if (!pb::hasInputShape(context, i)) return -1;
  return context.getInputType(i)->tensor_type().shape().dim_size();
}

// ONNX 1.12's convPoolShapeInference and convTransposeShapeInference take the kernel from the
// weight's dimensions 2... and index the input's spatial dimensions with it; maxUnpoolShapeInference
// reads the indices' dimension 1 without looking.
void check_inferred_ranks(pb::InferenceContext& context, const std::string& type) {
  const int x = inferred_rank(context, 0);
  if (x < 0) return;
  const int weight_input = type == "QLinearConv" ? 3 : is_conv(type) ? 1 : -1;
  if (weight_input >= 0) {
    const int w = inferred_rank(context, static_cast<size_t>(weight_input));
    if (w >= 0 && w != x) fail_shape_inference("the weight has rank ", w, " but the input has rank ", x);
  }
  if (type == "MaxUnpool" && context.getNumInputs() == 2 && inferred_rank(context, 1) < 2) {
    fail_shape_inference("MaxUnpool needs the shape of its indices (rank 2 or more)");
  }
}

}  // namespace

void guard_window_shape_inference() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& type : window_types()) {
      std::set<const pb::OpSchema*> wrapped;
      for (int version = 1; version <= 64; ++version) {
        const pb::OpSchema* schema = pb::OpSchemaRegistry::Schema(type, version, "");
        if (!schema || !wrapped.insert(schema).second) continue;
        pb::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
        if (!original) continue;
        // The registry hands out const schemas; replacing the function is the only change made.
        const_cast<pb::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
            [original, type](pb::InferenceContext& context) {
              check_inferred_ranks(context, type);
              original(context);
            });
      }
    }
  });
}

bool is_window_operator(const pb::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const auto& types = window_types();
  return std::find(types.begin(), types.end(), node.op_type()) != types.end();
}

int window_weight_input(const pb::NodeProto& node) {
  if (!is_conv(node.op_type())) return -1;
  return node.op_type() == "QLinearConv" ? 3 : 1;
}

std::string window_attribute_problem(const pb::NodeProto& node) {
  const std::string& type = node.op_type();
  struct Limit {
    const char* name;
    int64_t least;
  };
  for (const Limit& limit : {Limit{"kernel_shape", 1}, Limit{"strides", 1}, Limit{"dilations", 1}, Limit{"pads", 0},
                             Limit{"output_padding", 0}, Limit{"output_shape", 1}}) {
    if (std::string problem = type_problem(node, limit.name, pb::AttributeProto::INTS); !problem.empty()) return problem;
    auto values = ints(node, limit.name);
    if (!values) continue;
    for (size_t i = 0; i < values->size(); ++i) {
      if (std::string problem = range_problem(limit.name, i, (*values)[i], limit.least); !problem.empty()) {
        return problem;
      }
    }
  }
  if (is_conv(type)) {
    if (std::string problem = type_problem(node, "group", pb::AttributeProto::INT); !problem.empty()) return problem;
    if (const pb::AttributeProto* group = find_attribute(node, "group")) {
      if (group->i() < 1) return "group is " + std::to_string(group->i()) + "; it must be at least 1";
      if (group->i() > kMaxWindowValue) return "group is " + std::to_string(group->i()) + "; above 2^31 - 1 it is implausible";
    }
  }
  if (std::string problem = type_problem(node, "auto_pad", pb::AttributeProto::STRING); !problem.empty()) return problem;
  if (const pb::AttributeProto* auto_pad = find_attribute(node, "auto_pad")) {
    const std::string& value = auto_pad->s();
    if (value != "NOTSET" && value != "SAME_UPPER" && value != "SAME_LOWER" && value != "VALID") {
      return "auto_pad is \"" + value.substr(0, 40) + "\"; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID";
    }
  }
  if (!is_conv(type) && (!ints(node, "kernel_shape") || ints(node, "kernel_shape")->empty())) {
    return "pooling needs a kernel_shape attribute";
  }
  return "";
}

std::string window_shape_problem(const pb::NodeProto& node, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>* w) {
  const std::string& type = node.op_type();
  if (x.size() < 3) {
    return "expects an input of rank 3 or more ([batch, channels, spatial...]), got " + shape_text(x);
  }
  const size_t spatial = x.size() - 2;
  auto kernel = ints(node, "kernel_shape");
  for (const char* name : {"kernel_shape", "strides", "dilations", "output_padding"}) {
    auto values = ints(node, name);
    if (values && values->size() != spatial) {
      return std::string(name) + " " + shape_text(*values) + " has " + std::to_string(values->size()) +
             " values for the input's " + std::to_string(spatial) + " spatial dimensions (input " + shape_text(x) + ")";
    }
  }
  auto pads = ints(node, "pads");
  if (pads && pads->size() != 2 * spatial) {
    return "pads " + shape_text(*pads) + " has " + std::to_string(pads->size()) + " values; the input's " +
           std::to_string(spatial) + " spatial dimensions need " + std::to_string(2 * spatial) + " (begins, then ends)";
  }

  const int64_t group = find_attribute(node, "group") ? find_attribute(node, "group")->i() : 1;
  std::vector<int64_t> window(spatial, 1);
  if (kernel) window = *kernel;
  if (w) {
    if (w->size() != x.size()) {
      return "the weight " + shape_text(*w) + " has rank " + std::to_string(w->size()) + " but the input " + shape_text(x) +
             " has rank " + std::to_string(x.size()) + "; the weight must be [out, in / group, kernel...] of the input's rank";
    }
    std::vector<int64_t> weight_kernel(w->begin() + 2, w->end());
    for (int64_t k : weight_kernel) {
      if (k < 1) return "the weight " + shape_text(*w) + " has a kernel dimension of " + std::to_string(k);
    }
    if (kernel && *kernel != weight_kernel) {
      return "kernel_shape " + shape_text(*kernel) + " does not match the weight's kernel " + shape_text(weight_kernel) +
             " (weight " + shape_text(*w) + ")";
    }
    window = weight_kernel;
    const int64_t channels = x[1];
    if (type == "ConvTranspose") {  // W: [C, M / group, k...]
      if ((*w)[0] != channels) {
        return "the input has " + std::to_string(channels) + " channels but the weight " + shape_text(*w) + " expects " +
               std::to_string((*w)[0]) + " (its first dimension)";
      }
      if (channels % group != 0) {
        return std::to_string(channels) + " input channels are not divisible by group " + std::to_string(group);
      }
    } else {  // W: [M, C / group, k...]
      if (channels % group != 0) {
        return std::to_string(channels) + " input channels are not divisible by group " + std::to_string(group);
      }
      if ((*w)[1] * group != channels) {
        return "the input has " + std::to_string(channels) + " channels but the weight " + shape_text(*w) +
               " with group " + std::to_string(group) + " expects " + std::to_string((*w)[1] * group) +
               " (weight dimension 1 x group)";
      }
      if ((*w)[0] % group != 0) {
        return std::to_string((*w)[0]) + " output channels (weight dimension 0) are not divisible by group " +
               std::to_string(group);
      }
    }
  }

  // Spatial output sizes, as ONNX's convPoolShapeInference and convTransposeShapeInference
  // compute them; an explicit output_shape (ConvTranspose) or size input (MaxUnpool) replaces them.
  if (ints(node, "output_shape") || (type == "MaxUnpool" && node.input_size() >= 3 && !node.input(2).empty())) return "";
  const std::string auto_pad = find_attribute(node, "auto_pad") ? find_attribute(node, "auto_pad")->s() : "NOTSET";
  const bool same = !pads && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER");
  if (same) return "";  // ceil(input / stride) or input x stride: at least 1
  auto strides = ints(node, "strides");
  auto dilations = uses_dilation(type) ? ints(node, "dilations") : std::nullopt;
  auto output_padding = ints(node, "output_padding");
  const bool ceil_mode = find_attribute(node, "ceil_mode") && find_attribute(node, "ceil_mode")->i() == 1;
  for (size_t i = 0; i < spatial; ++i) {
    const double input = static_cast<double>(x[2 + i]);
    if (input < 1) continue;  // an empty or unknown input: ONNX and the cost model see it
    const double stride = strides ? static_cast<double>((*strides)[i]) : 1;
    const double dilation = dilations ? static_cast<double>((*dilations)[i]) : 1;
    const double padding = pads ? static_cast<double>((*pads)[i] + (*pads)[i + spatial]) : 0;
    const double extent = (static_cast<double>(window[i]) - 1) * dilation + 1;
    double output = 0;
    if (type == "ConvTranspose" || type == "MaxUnpool") {
      const double extra = output_padding ? static_cast<double>((*output_padding)[i]) : 0;
      output = stride * (input - 1) + extra + extent - padding;
    } else {
      const double positions = (input + padding - extent) / stride;
      output = 1 + (ceil_mode ? std::ceil(positions) : std::floor(positions));
    }
    if (output < 1) {
      std::ostringstream text;
      text << "the output would have " << static_cast<int64_t>(output) << " elements along spatial axis " << i
           << " (input " << x[2 + i] << ", pads " << padding << ", kernel " << window[i] << ", dilation " << dilation
           << ", stride " << stride << "; input " << shape_text(x) << ")";
      return text.str();
    }
  }
  return "";
}

}  // namespace placesim
