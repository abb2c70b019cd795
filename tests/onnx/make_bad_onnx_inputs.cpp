// Writes the ONNX files of tests/bad_inputs/ (run once; the files are committed). Build by hand:
//   g++ -std=c++20 -DONNX_ML=1 -DONNX_NAMESPACE=onnx tests/onnx/make_bad_onnx_inputs.cpp \
//       -lonnx_proto -lprotobuf -o /tmp/make_bad_onnx_inputs && /tmp/make_bad_onnx_inputs tests/bad_inputs
#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>

namespace {

onnx::ModelProto relu_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("relu");
  auto* input = graph->add_input();
  input->set_name("x");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {1, 3, 8, 8}) input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(dim);
  auto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("x");
  relu->add_output("y");
  graph->add_output()->set_name("y");
  return model;
}

void save(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : ".";
  std::string whole = relu_model().SerializeAsString();
  save(root + "/onnx/truncated.onnx", whole.substr(0, whole.size() - 5));
  save(root + "/onnx/empty.onnx", "");
  save(root + "/onnx/json_not_onnx.onnx", "{\"model\": {\"zoo\": \"resnet50\"}}\n");

  onnx::ModelProto huge = relu_model();  // a Conv whose weight declares 4e15 x 3 x 3 x 3 elements
  auto* conv = huge.mutable_graph()->mutable_node(0);
  conv->set_op_type("Conv");
  conv->set_name("conv");
  conv->add_input("w");
  auto* weight = huge.mutable_graph()->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {int64_t{4000000000000000}, int64_t{3}, int64_t{3}, int64_t{3}}) weight->add_dims(dim);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = weight->add_external_data();
  location->set_key("location");
  location->set_value("absent.bin");
  save(root + "/onnx/huge_weight.onnx", huge.SerializeAsString());

  onnx::ModelProto negative = huge;
  negative.mutable_graph()->mutable_initializer(0)->set_dims(0, -64);
  save(root + "/onnx/negative_weight_dim.onnx", negative.SerializeAsString());

  onnx::ModelProto unsorted = relu_model();  // y = Relu(x); z = Relu(y), written z first
  auto* second = unsorted.mutable_graph()->add_node();
  *second = unsorted.graph().node(0);
  second->set_name("relu_1");
  second->set_input(0, "y");
  second->set_output(0, "z");
  unsorted.mutable_graph()->mutable_node()->SwapElements(0, 1);
  unsorted.mutable_graph()->mutable_output(0)->set_name("z");
  save(root + "/onnx/unsorted_nodes.onnx", unsorted.SerializeAsString());

  onnx::ModelProto custom = relu_model();  // Relu, then an operator nobody knows
  auto* fancy = custom.mutable_graph()->add_node();
  fancy->set_op_type("FancyOp");
  fancy->set_domain("com.example");
  fancy->set_name("fancy");
  fancy->add_input("y");
  fancy->add_output("z");
  auto* opset = custom.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  custom.mutable_graph()->mutable_output(0)->set_name("z");
  save(root + "/scenario/onnx_unknown_operator.onnx", custom.SerializeAsString());
  save(root + "/scenario/onnx_truncated.onnx", whole.substr(0, whole.size() / 2));
  return 0;
}
