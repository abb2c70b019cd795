// tf_add_variables: the graph of TensorFlow's seed example
//   a = tf.Variable(tf.ones(shape)); b = tf.Variable(tf.ones(shape)); c = a + b
//   init = tf.global_variables_initializer()
// as TensorFlow 1.x names and wires it (GraphDef of the session that runs `init` and `c`).
// It is an inference graph: no loss and no backward work, and batch_size does not apply (the
// variables' shape is the whole tensor).
#include <string>
#include <vector>

#include "models/generators.h"

namespace placesim {
namespace {

// Largest accepted tensor (elements): far beyond any device's memory, far below double's exact range.
constexpr double kMaxElements = 1e13;

struct SeedTensor {
  std::vector<int64_t> shape;
  double elements = 1;
};

SeedTensor read_shape(const JsonReader& parameters) {
  SeedTensor tensor{{1024, 1024}, 1024.0 * 1024.0};
  auto shape = parameters.find("shape");
  if (!shape) return tensor;
  tensor.shape.clear();
  tensor.elements = 1;
  for (const JsonReader& dimension : shape->elements()) {
    tensor.shape.push_back(dimension.as_integer(1));
    tensor.elements *= static_cast<double>(tensor.shape.back());
  }
  if (tensor.elements > kMaxElements) shape->fail("the tensor has more than 1e13 elements");
  return tensor;
}

}  // namespace

OpGraph build_tf_add_variables(const JsonReader& parameters, int64_t /*batch_size*/, double dtype_bytes) {
  parameters.reject_unknown_keys({"shape"});
  const SeedTensor tensor = read_shape(parameters);
  const double tensor_bytes = tensor.elements * dtype_bytes;

  OpGraph graph("tf_add_variables");
  auto add = [&](const std::string& name, const std::string& type, OpKind kind, const std::string& layer,
                 bool outputs_tensor) {
    Op op;
    op.name = name;
    op.type = type;
    op.kind = kind;
    op.layer = layer;
    op.dtype_bytes = dtype_bytes;
    if (outputs_tensor) {
      op.output_shape = tensor.shape;
      op.output_bytes = tensor_bytes;
    }
    return graph.add_op(std::move(op));
  };

  // Variables own the parameters; reading one (Identity) is a reference in TF, not a copy.
  const OpId a = add("a", "VariableV2", OpKind::kVariable, "a", true);
  graph.op(a).parameter_count = tensor.elements;
  const OpId a_read = add("a/read", "Identity", OpKind::kDataMovement, "a", true);
  graph.op(a_read).colocate_with = "a";
  // Assign reads the initial value and writes the variable.
  const OpId a_assign = add("a/Assign", "Assign", OpKind::kDataMovement, "a", false);
  graph.op(a_assign).colocate_with = "a";
  graph.op(a_assign).forward_bytes = 2 * tensor_bytes;

  const OpId b = add("b", "VariableV2", OpKind::kVariable, "b", true);
  graph.op(b).parameter_count = tensor.elements;
  const OpId b_read = add("b/read", "Identity", OpKind::kDataMovement, "b", true);
  graph.op(b_read).colocate_with = "b";
  const OpId b_assign = add("b/Assign", "Assign", OpKind::kDataMovement, "b", false);
  graph.op(b_assign).colocate_with = "b";
  graph.op(b_assign).forward_bytes = 2 * tensor_bytes;

  const OpId initial_a = add("Const", "Const", OpKind::kVariable, "a", true);
  const OpId initial_b = add("Const_1", "Const", OpKind::kVariable, "b", true);

  // c = a + b: one add per element; reads two tensors and writes one.
  const OpId sum = add("add", "Add", OpKind::kElementwise, "add", true);
  graph.op(sum).forward_flops = tensor.elements;
  graph.op(sum).forward_bytes = 3 * tensor_bytes;

  const OpId init = add("init", "NoOp", OpKind::kNoOp, "init", false);

  graph.add_edge(initial_a, a_assign);
  graph.add_edge(a, a_assign);
  graph.add_edge(a, a_read);
  graph.add_edge(initial_b, b_assign);
  graph.add_edge(b, b_assign);
  graph.add_edge(b, b_read);
  graph.add_edge(a_read, sum);
  graph.add_edge(b_read, sum);
  graph.add_control_edge(a_assign, init);
  graph.add_control_edge(b_assign, init);
  return graph;
}

}  // namespace placesim
