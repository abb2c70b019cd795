#include "sim/graph/fp8_gemm_roles.h"

#include <memory>
#include <set>
#include <string>

namespace placesim {
namespace {

bool is_gemm(const Op& op) { return op.kind == OpKind::kMatMul && op.kernel && op.kernel->kind == KernelKind::kGemm; }

void set_gemm(OpGraph& graph, OpId v, bool GemmShape::*flag) {
  KernelShape shape = *graph.op(v).kernel;
  shape.gemm.*flag = true;
  graph.mutable_op(v).kernel = std::make_shared<const KernelShape>(shape);
}

/// ONNX operators that end a classifier or language model after its last GEMM.
const std::set<std::string>& model_ends() {
  static const std::set<std::string> ends = {"Softmax", "LogSoftmax", "SoftmaxCrossEntropyLoss",
                                             "NegativeLogLikelihoodLoss", "SparseSoftmaxCrossEntropyWithLogits"};
  return ends;
}

/// The layer norms TE fuses with the linear layer after them (LayerNormLinear, LayerNormMLP).
const std::set<std::string>& layer_norms() {
  static const std::set<std::string> norms = {"LayerNormalization", "SkipLayerNormalization",
                                              "SimplifiedLayerNormalization", "RMSNormalization",
                                              "LayerNorm", "RMSNorm"};  // the last two: placesim's own nodes
  return norms;
}

}  // namespace

void mark_output_layer(OpGraph& graph, OpId logits) {
  OpId v = logits;
  for (int hop = 0; hop < 2; ++hop) {
    const Op& op = graph.op(v);
    if (is_gemm(op)) {
      set_gemm(graph, v, &GemmShape::output_layer);
      return;
    }
    const auto inputs = graph.inputs(v);
    if (op.kind != OpKind::kElementwise || inputs.empty()) return;
    v = inputs.front().op;
  }
}

void infer_fp8_gemm_roles(OpGraph& graph) {
  for (OpId v = 0; v < graph.size(); ++v) {
    if (!is_gemm(graph.op(v))) continue;
    for (const auto& input : graph.inputs(v)) {
      if (input.edge.control) continue;
      if (layer_norms().count(graph.op(input.op).type)) set_gemm(graph, v, &GemmShape::input_from_normalization);
      break;  // the activation is a GEMM's first data input
    }
  }
  for (OpId v = 0; v < graph.size(); ++v) {
    bool read = false;
    for (const auto& output : graph.outputs(v)) read = read || !output.edge.control;
    if (read) continue;  // not an end of the model
    OpId logits = v;
    if (model_ends().count(graph.op(v).type)) {
      for (const auto& input : graph.inputs(v)) {
        if (input.edge.control) continue;
        logits = input.op;
        break;
      }
    }
    mark_output_layer(graph, logits);
  }
}

}  // namespace placesim
