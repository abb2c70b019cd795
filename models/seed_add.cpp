// tf_add_variables: the graph of TensorFlow's seed example
//   a = tf.Variable(tf.constant(1.0, shape=shape), name="a")   # initial value "Const"
//   b = tf.Variable(tf.constant(2.0, shape=shape), name="b")   # initial value "Const_1"
//   c = a + b; init = tf.global_variables_initializer()
// as TensorFlow 1.x names and wires it (GraphDef of the session that runs `init` and `c`).
// It is an inference graph: no loss and no backward work, and batch_size does not apply (the
// variables' shape is the whole tensor).
#include <string>
#include <utility>
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

  // Ops in the order TensorFlow 1.x creates them, which is their GraphDef order and so decides
  // the placement log's order (sim/placement/placement_log.h): tf.Variable converts its initial
  // value first (Const), then makes the VariableV2, its Assign and its read (variables.py,
  // _init_from_args); the add; global_variables_initializer's NoOp last. Each op's inputs are
  // added in TensorFlow's input order (Assign(ref, value), add(x, y), init(^a/Assign, ^b/Assign)).
  // Variables own the parameters; reading one (Identity) is a reference in TF, not a copy.
  auto variable = [&](const std::string& name, const std::string& initial_value) {
    const OpId value = add(initial_value, "Const", OpKind::kVariable, name, true);
    const OpId var = add(name, "VariableV2", OpKind::kVariable, name, true);
    graph.mutable_op(var).parameter_count = tensor.elements;
    // Assign reads the initial value and writes the variable.
    const OpId assign = add(name + "/Assign", "Assign", OpKind::kDataMovement, name, false);
    graph.mutable_op(assign).colocate_with = name;
    graph.mutable_op(assign).forward_bytes = 2 * tensor_bytes;
    const OpId read = add(name + "/read", "Identity", OpKind::kDataMovement, name, true);
    graph.mutable_op(read).colocate_with = name;
    graph.add_edge(var, assign);
    graph.add_edge(value, assign);
    graph.add_edge(var, read);
    return std::pair{assign, read};
  };
  const auto [a_assign, a_read] = variable("a", "Const");
  const auto [b_assign, b_read] = variable("b", "Const_1");

  // c = a + b: one add per element; reads two tensors and writes one.
  const OpId sum = add("add", "Add", OpKind::kElementwise, "add", true);
  graph.mutable_op(sum).forward_flops = tensor.elements;
  graph.mutable_op(sum).forward_bytes = 3 * tensor_bytes;
  graph.add_edge(a_read, sum);
  graph.add_edge(b_read, sum);

  const OpId init = add("init", "NoOp", OpKind::kNoOp, "init", false);
  graph.add_control_edge(a_assign, init);
  graph.add_control_edge(b_assign, init);
  return graph;
}

}  // namespace placesim
