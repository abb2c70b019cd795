// Writes the ONNX files of tests/bad_inputs/ (run once; the files are committed). Build by hand:
//   g++ -std=c++20 -DONNX_ML=1 -DONNX_NAMESPACE=onnx tests/onnx/make_bad_onnx_inputs.cpp \
//       -lonnx_proto -lprotobuf -o /tmp/make_bad_onnx_inputs && /tmp/make_bad_onnx_inputs tests/bad_inputs
// With --seeds DIR it writes valid convolution and pooling models instead, part of the ONNX
// fuzzer's seed corpus (tests/fuzz/corpus/onnx/).
#include <onnx/onnx_pb.h>

#include <cctype>
#include <fstream>
#include <initializer_list>
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

void add_ints(onnx::NodeProto* node, const std::string& name, std::initializer_list<int64_t> values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

void add_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

// A weight that declares its shape and keeps its data outside (never read by placesim).
void add_weight(onnx::GraphProto* graph, const std::string& name, std::initializer_list<int64_t> dims) {
  auto* weight = graph->add_initializer();
  weight->set_name(name);
  weight->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) weight->add_dims(dim);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = weight->add_external_data();
  location->set_key("location");
  location->set_value("absent.bin");
}

// x [1, 3, 8, 8] -> Conv "conv" (weight w of `weight_dims`) -> y.
onnx::ModelProto conv_model(std::initializer_list<int64_t> weight_dims) {
  onnx::ModelProto model = relu_model();
  auto* conv = model.mutable_graph()->mutable_node(0);
  conv->set_op_type("Conv");
  conv->set_name("conv");
  conv->add_input("w");
  add_weight(model.mutable_graph(), "w", weight_dims);
  return model;
}

// x [1, 3, 8, 8] -> TYPE "pool" (kernel 2 x 2) -> y.
onnx::ModelProto pool_model(const std::string& type) {
  onnx::ModelProto model = relu_model();
  auto* pool = model.mutable_graph()->mutable_node(0);
  pool->set_op_type(type);
  pool->set_name("pool");
  add_ints(pool, "kernel_shape", {2, 2});
  return model;
}

}  // namespace

// Valid windows with every attribute in use, for the fuzzer to mutate.
void write_seeds(const std::string& root) {
  onnx::ModelProto conv = conv_model({4, 3, 3, 3});
  auto* node = conv.mutable_graph()->mutable_node(0);
  add_ints(node, "strides", {2, 2});
  add_ints(node, "pads", {1, 1, 1, 1});
  add_ints(node, "dilations", {1, 1});
  add_ints(node, "kernel_shape", {3, 3});
  add_int(node, "group", 1);
  save(root + "/conv_strides_pads.onnx", conv.SerializeAsString());
  onnx::ModelProto grouped = conv_model({6, 1, 3, 3});
  grouped.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(6);
  add_int(grouped.mutable_graph()->mutable_node(0), "group", 6);
  save(root + "/conv_depthwise.onnx", grouped.SerializeAsString());
  onnx::ModelProto same = conv_model({4, 3, 3, 3});
  auto* auto_pad = same.mutable_graph()->mutable_node(0)->add_attribute();
  auto_pad->set_name("auto_pad");
  auto_pad->set_type(onnx::AttributeProto::STRING);
  auto_pad->set_s("SAME_UPPER");
  add_ints(same.mutable_graph()->mutable_node(0), "strides", {2, 2});
  save(root + "/conv_auto_pad_same.onnx", same.SerializeAsString());
  onnx::ModelProto transpose = conv_model({3, 4, 3, 3});
  transpose.mutable_graph()->mutable_node(0)->set_op_type("ConvTranspose");
  add_ints(transpose.mutable_graph()->mutable_node(0), "strides", {2, 2});
  add_ints(transpose.mutable_graph()->mutable_node(0), "output_padding", {1, 1});
  save(root + "/conv_transpose.onnx", transpose.SerializeAsString());
  for (const char* type : {"MaxPool", "AveragePool", "LpPool"}) {
    onnx::ModelProto pool = pool_model(type);
    add_ints(pool.mutable_graph()->mutable_node(0), "strides", {2, 2});
    add_ints(pool.mutable_graph()->mutable_node(0), "pads", {0, 0, 1, 1});
    add_int(pool.mutable_graph()->mutable_node(0), "ceil_mode", 1);
    std::string lower = type;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    save(root + "/" + lower + ".onnx", pool.SerializeAsString());
  }
  // Conv -> Relu -> MaxPool -> Flatten -> Gemm: shapes flow from one window into the next.
  onnx::ModelProto chain = conv_model({4, 3, 3, 3});
  auto* graph = chain.mutable_graph();
  graph->mutable_node(0)->set_output(0, "c");
  auto add_node = [&](const std::string& type, std::initializer_list<const char*> inputs, const std::string& output) {
    auto* added = graph->add_node();
    added->set_op_type(type);
    added->set_name(type + "_" + output);
    for (const char* input : inputs) added->add_input(input);
    added->add_output(output);
    return added;
  };
  add_node("Relu", {"c"}, "r");
  auto* pool = add_node("MaxPool", {"r"}, "p");  // [1, 4, 6, 6] -> [1, 4, 3, 3]: 36 features
  add_ints(pool, "kernel_shape", {2, 2});
  add_ints(pool, "strides", {2, 2});
  add_node("Flatten", {"p"}, "f");
  add_weight(graph, "fc", {36, 10});
  add_node("Gemm", {"f", "fc"}, "y");
  save(root + "/conv_pool_gemm.onnx", chain.SerializeAsString());
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--seeds") {
    write_seeds(argv[2]);
    return 0;
  }
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

  // Convolution and pooling attributes that ONNX 1.12's shape inference divides by (a stride of 0:
  // SIGFPE) or turns into nonsense shapes (onnx_window_checks.h).
  onnx::ModelProto stride_zero = conv_model({4, 3, 3, 3});
  add_ints(stride_zero.mutable_graph()->mutable_node(0), "strides", {0, 1});
  save(root + "/onnx/conv_stride_zero.onnx", stride_zero.SerializeAsString());
  save(root + "/scenario/onnx_conv_stride_zero.onnx", stride_zero.SerializeAsString());
  for (const char* type : {"MaxPool", "AveragePool", "LpPool"}) {
    onnx::ModelProto pool = pool_model(type);
    add_ints(pool.mutable_graph()->mutable_node(0), "strides", {1, 0});
    std::string lower = type;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    save(root + "/onnx/" + lower + "_stride_zero.onnx", pool.SerializeAsString());
  }
  onnx::ModelProto dilation = conv_model({4, 3, 3, 3});  // ONNX: 8 x 8 in, 14 x 14 out
  add_ints(dilation.mutable_graph()->mutable_node(0), "dilations", {-2, -2});
  save(root + "/onnx/conv_negative_dilation.onnx", dilation.SerializeAsString());
  onnx::ModelProto kernel_zero = conv_model({4, 3, 0, 3});
  add_ints(kernel_zero.mutable_graph()->mutable_node(0), "kernel_shape", {0, 3});
  save(root + "/onnx/conv_kernel_shape_zero.onnx", kernel_zero.SerializeAsString());
  onnx::ModelProto negative_kernel = pool_model("MaxPool");
  negative_kernel.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_ints(0, -3);
  save(root + "/onnx/maxpool_negative_kernel.onnx", negative_kernel.SerializeAsString());
  save(root + "/onnx/conv_rank1_weight.onnx", conv_model({4}).SerializeAsString());
  onnx::ModelProto group_zero = conv_model({4, 3, 3, 3});  // ONNX: taken as group 1
  add_int(group_zero.mutable_graph()->mutable_node(0), "group", 0);
  save(root + "/onnx/conv_group_zero.onnx", group_zero.SerializeAsString());
  onnx::ModelProto grouped = conv_model({4, 1, 3, 3});  // 3 channels in 2 groups
  add_int(grouped.mutable_graph()->mutable_node(0), "group", 2);
  save(root + "/onnx/conv_channels_not_divisible_by_group.onnx", grouped.SerializeAsString());
  save(root + "/onnx/conv_weight_channels_mismatch.onnx", conv_model({4, 2, 3, 3}).SerializeAsString());
  // A 9 x 9 kernel on the 8 x 8 input without padding: floor((8 - 9) / 1) + 1 = 0 outputs.
  save(root + "/onnx/conv_output_size_zero.onnx", conv_model({4, 3, 9, 9}).SerializeAsString());
  // Found by the ONNX fuzzer: a weight of higher rank than an input known only during inference
  // (here a Relu's output [1, 3, 8]) made ONNX's convPoolShapeInference read past the input's shape.
  onnx::ModelProto deep = conv_model({4, 3, 3, 3});
  deep.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->RemoveLast();
  auto* relu = deep.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("x");
  relu->add_output("r");
  deep.mutable_graph()->mutable_node()->SwapElements(0, 1);
  deep.mutable_graph()->mutable_node(1)->set_input(0, "r");
  save(root + "/onnx/conv_weight_rank_above_inferred_input.onnx", deep.SerializeAsString());
  // Found by the ONNX fuzzer: a Scan without its required num_scan_inputs made ONNX's Scan shape
  // inference read through a null attribute (SIGSEGV).
  onnx::ModelProto scan = relu_model();
  auto* scan_node = scan.mutable_graph()->mutable_node(0);
  scan_node->set_op_type("Scan");
  scan_node->set_name("scan");
  auto* body = scan_node->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  auto* body_graph = body->mutable_g();
  body_graph->set_name("body");
  auto* body_input = body_graph->add_input();
  body_input->set_name("row");
  body_input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* identity = body_graph->add_node();
  identity->set_op_type("Identity");
  identity->add_input("row");
  identity->add_output("row_out");
  body_graph->add_output()->set_name("row_out");
  save(root + "/onnx/scan_without_num_scan_inputs.onnx", scan.SerializeAsString());
  // Found by the ONNX fuzzer: STFT of a rank-0 signal made ONNX's STFT shape inference read past
  // the signal's shape (SIGSEGV); shape inference now runs in a child process.
  onnx::ModelProto stft = relu_model();
  stft.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->clear_dim();
  auto* stft_node = stft.mutable_graph()->mutable_node(0);
  stft_node->set_op_type("STFT");
  stft_node->set_name("stft");
  stft_node->add_input("step");
  auto* step = stft.mutable_graph()->add_initializer();
  step->set_name("step");
  step->set_data_type(onnx::TensorProto::INT64);
  step->add_int64_data(8);
  save(root + "/onnx/stft_of_rank0_signal.onnx", stft.SerializeAsString());
  onnx::ModelProto negative_pads = conv_model({4, 3, 3, 3});
  add_ints(negative_pads.mutable_graph()->mutable_node(0), "pads", {-1, 0, 0, 0});
  save(root + "/onnx/conv_negative_pads.onnx", negative_pads.SerializeAsString());
  return 0;
}
