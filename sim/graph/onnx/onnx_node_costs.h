// The costs of one ONNX node as an Op (FLOPs, bytes, parameters, kernel shape) by the zoo's
// conventions (docs/onnx.md lists the formulas); the importer walks the graph. Internal to placesim_onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "sim/graph/onnx/onnx_shapes.h"
#include "sim/graph/op.h"

namespace placesim {

/// What costing a node asks of the importer, which owns the tensors, the parameters counted so
/// far and the errors (each naming the node being costed).
class NodeCostContext {
 public:
  virtual ~NodeCostContext() = default;
  /// The tensor `name` with its shape known and its size plausible; throws InputError otherwise.
  virtual const TensorInfo& tensor(const std::string& name) const = 0;
  /// The tensor `name` as shape inference left it, or nullptr.
  virtual const TensorInfo* find_tensor(const std::string& name) const = 0;
  /// Elements of `name` when it is a trainable parameter not counted before, else 0.
  virtual double claim_parameters(const std::string& name) = 0;
  /// Counts an operator placesim cannot cost; throws InputError in strict mode.
  virtual void unknown_operator(const std::string& type) = 0;
  /// Element size of floating-point tensors (the run's precision).
  virtual double float_bytes() const = 0;
  /// Throws InputError naming the node.
  [[noreturn]] virtual void fail(const std::string& message) const = 0;
};

/// Costs `node` of a standard operator (any domain but ai.placesim) into `op`: kind, type, FLOPs,
/// bytes, parameters, output shape and bytes, kernel shape (2-D Conv, Gemm, MatMul); `outputs` are
/// the tensors the op produces (a MatMul fused with its bias Add: the Add's).
void cost_onnx_node(const ::ONNX_NAMESPACE::NodeProto& node, const std::vector<std::string>& outputs,
                    NodeCostContext& context, Op& op);

/// How the costs an ai.placesim node records scale to this import.
struct PlacesimNodeScale {
  double batch = 1;        ///< the bound batch N over the exported placesim.batch (nodes with batch_scaled)
  double bytes = 1;        ///< the import's element size over the exported placesim.dtype_bytes
  double dtype_bytes = 4;  ///< the import's element size, for nodes that record none
};

/// Reads the costs an ai.placesim node carries as attributes (written by export-onnx) into `op`.
void cost_placesim_node(const ::ONNX_NAMESPACE::NodeProto& node, const PlacesimNodeScale& scale,
                        NodeCostContext& context, Op& op);

}  // namespace placesim
