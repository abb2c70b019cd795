// The ONNX operators placesim costs, and how (docs/onnx.md lists the same table with formulas).
// Shared by the importer and the exporter; plain data, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "sim/graph/op.h"

namespace placesim {

/// Domain of the nodes placesim writes for ops with no faithful ONNX equivalent (fused-QKV
/// attention, TensorFlow variables); their costs travel as attributes.
inline constexpr const char* kPlacesimOnnxDomain = "ai.placesim";

/// How forward FLOPs are counted (bytes are always inputs + outputs unless kMetadata).
enum class OnnxCost {
  kGemm,              ///< 2 x MACs, from the weight or operand shapes
  kPerOutputElement,  ///< 1 per output element (activations, arithmetic, dropout)
  kPerInputElement,   ///< 1 per input element (reductions, global pooling)
  kNormalization,     ///< 5 per element
  kSoftmax,           ///< 5 per element
  kCrossEntropy,      ///< 6 per logit
  kWindow,            ///< kernel window x output elements (pooling)
  kDataMovement,      ///< 0 FLOPs; inputs + outputs bytes
  kMetadata,          ///< 0 FLOPs, 0 bytes (reshapes and shape queries)
};

struct OnnxOperator {
  const char* type;
  OpKind kind;
  OnnxCost cost;
};

/// Every operator type placesim costs (any domain), in documentation order.
const std::vector<OnnxOperator>& onnx_operators();
/// The entry for `type`, or nullptr for an operator placesim cannot cost.
const OnnxOperator* find_onnx_operator(const std::string& type);

}  // namespace placesim
