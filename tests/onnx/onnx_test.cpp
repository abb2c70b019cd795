// Specification of ONNX import and export (docs/onnx.md): every zoo model survives a round trip
// through ONNX with the same totals; real ONNX files from Debian's libonnx-testdata import with
// FLOPs derived here by hand; broken files are InputErrors, never crashes.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "models/zoo.h"
#include "sim/core/input_error.h"
#include "sim/graph/onnx/onnx_model.h"

namespace placesim {
namespace {

constexpr double kFloat32Bytes = 4;
const std::filesystem::path kTestData = "/usr/share/libonnx-testdata/data";

#define SKIP_WITHOUT_ONNX() \
  if (!onnx_support_available()) GTEST_SKIP() << "built without libonnx-dev (see scripts/install_deps.sh)"
#define SKIP_WITHOUT_TESTDATA()                                                                             \
  SKIP_WITHOUT_ONNX();                                                                                      \
  if (!std::filesystem::is_directory(kTestData))                                                            \
  GTEST_SKIP() << kTestData << " is missing: install Debian's libonnx-testdata to check real ONNX files"

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("placesim_onnx_test_" + std::to_string(::getpid()) + "_" + name);
}

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

OpGraph import(const std::filesystem::path& path, int64_t batch = 1, double dtype_bytes = kFloat32Bytes) {
  OnnxImportOptions options;
  options.default_batch = batch;
  options.dtype_bytes = dtype_bytes;
  return import_onnx_model(path, options);
}

OpGraph zoo(const std::string& name, int64_t batch) {
  static const Json kDefaults = Json::object();
  return build_zoo_model(name, JsonReader(kDefaults, "test"), batch, kFloat32Bytes);
}

OpGraph round_trip(const OpGraph& graph, int64_t import_batch) {
  std::filesystem::path path = temp_file(graph.name() + ".onnx");
  write(path, export_onnx_model(graph));
  OpGraph imported = import(path, import_batch);
  std::filesystem::remove(path);
  return imported;
}

std::string import_error(const std::filesystem::path& path, const OnnxImportOptions& options = {}) {
  try {
    import_onnx_model(path, options);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no InputError)";
}

// --- round trips -----------------------------------------------------------------------------

class ZooRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooRoundTrip, KeepsOpsFlopsParametersAndActivations) {
  SKIP_WITHOUT_ONNX();
  const int64_t batch = 2;
  OpGraph original = zoo(GetParam(), batch);
  OpGraph imported = round_trip(original, batch);
  GraphTotals expected = original.totals(), actual = imported.totals();
  EXPECT_EQ(actual.ops, expected.ops);
  EXPECT_NEAR(actual.forward_flops, expected.forward_flops, 1e-9 * expected.forward_flops);
  EXPECT_NEAR(actual.backward_flops, expected.backward_flops, 1e-9 * expected.backward_flops);
  EXPECT_NEAR(actual.parameter_count, expected.parameter_count, 1e-9 * expected.parameter_count);
  EXPECT_NEAR(actual.activation_bytes, expected.activation_bytes, 1e-9 * expected.activation_bytes);
  for (OpId id = 0; id < original.size(); ++id) {
    const Op& op = original.op(id);
    OpId twin = imported.find(op.name);
    ASSERT_NE(twin, imported.size()) << op.name;
    EXPECT_NEAR(imported.op(twin).forward_flops, op.forward_flops, 1e-9 * op.forward_flops) << op.name;
    EXPECT_NEAR(imported.op(twin).forward_bytes, op.forward_bytes, 1e-9 * op.forward_bytes) << op.name;
    EXPECT_NEAR(imported.op(twin).backward_bytes, op.backward_bytes, 1e-9 * op.backward_bytes) << op.name;
    EXPECT_NEAR(imported.op(twin).batch_statistics_bytes, op.batch_statistics_bytes, 1e-9 * op.batch_statistics_bytes)
        << op.name;  // batch norms as standard BatchNormalization nodes, the rest as placesim's
    EXPECT_NEAR(imported.op(twin).gradient_sum_bytes, op.gradient_sum_bytes, 1e-9 * op.gradient_sum_bytes) << op.name;
    EXPECT_NEAR(imported.op(twin).parameter_count, op.parameter_count, 1e-9 * op.parameter_count) << op.name;
    EXPECT_EQ(imported.op(twin).kind, op.kind) << op.name;
    // Kernel shapes too: standard nodes derive theirs, placesim's carry them.
    EXPECT_EQ(imported.op(twin).kernel != nullptr, op.kernel != nullptr) << op.name;
    if (op.kernel && imported.op(twin).kernel) {
      EXPECT_TRUE(*imported.op(twin).kernel == *op.kernel)
          << op.name << ": " << imported.op(twin).kernel->describe() << " vs " << op.kernel->describe();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryZooModel, ZooRoundTrip, ::testing::ValuesIn(zoo_model_names()));

// The export has a symbolic batch "N": importing at another batch scales FLOPs and activations
// linearly (the zoo's convention) and leaves the parameters alone.
TEST(OnnxRoundTrip, ImportsAtAnotherBatchSize) {
  SKIP_WITHOUT_ONNX();
  for (const char* name : {"resnet50", "gpt"}) {
    SCOPED_TRACE(name);
    OpGraph imported = round_trip(zoo(name, 2), 6);
    GraphTotals expected = zoo(name, 6).totals(), actual = imported.totals();
    EXPECT_NEAR(actual.forward_flops, expected.forward_flops, 1e-9 * expected.forward_flops);
    EXPECT_NEAR(actual.parameter_count, expected.parameter_count, 1e-9 * expected.parameter_count);
    EXPECT_NEAR(actual.activation_bytes, expected.activation_bytes, 1e-9 * expected.activation_bytes);
    // Every kernel shape is the batch-6 model's, those placesim's nodes carry scaled with it.
    const OpGraph at_six = zoo(name, 6);
    for (OpId id = 0; id < at_six.size(); ++id) {
      const Op& op = at_six.op(id);
      const Op& twin = imported.op(imported.find(op.name));
      ASSERT_EQ(twin.kernel != nullptr, op.kernel != nullptr) << op.name;
      if (op.kernel) EXPECT_TRUE(*twin.kernel == *op.kernel) << op.name << ": " << twin.kernel->describe();
    }
  }
}

// A file exported at batch 32 records it ("placesim.batch"): an import that prefers the file's
// batch gets the zoo's graph at 32 (FLOPs 32/1 of batch 1's, issue 24); one that does not (the
// caller gave a batch) gets the caller's.
TEST(OnnxRoundTrip, ImportsAtTheExportedBatchUnlessTheCallerGivesOne) {
  SKIP_WITHOUT_ONNX();
  std::filesystem::path path = temp_file("mlp_batch32.onnx");
  write(path, export_onnx_model(zoo("mlp", 32)));
  OnnxImportOptions options;
  options.default_batch = 1;
  options.batch_from_metadata = true;
  GraphTotals at_exported = import_onnx_model(path, options).totals();
  GraphTotals expected = zoo("mlp", 32).totals(), batch_one = zoo("mlp", 1).totals();
  EXPECT_NEAR(at_exported.forward_flops, expected.forward_flops, 1e-9 * expected.forward_flops);
  EXPECT_NEAR(at_exported.forward_flops, 32 * batch_one.forward_flops, 1e-9 * expected.forward_flops);
  EXPECT_NEAR(at_exported.activation_bytes, expected.activation_bytes, 1e-9 * expected.activation_bytes);
  options.batch_from_metadata = false;
  options.default_batch = 4;
  GraphTotals at_given = import_onnx_model(path, options).totals();
  EXPECT_NEAR(at_given.forward_flops, 4 * batch_one.forward_flops, 1e-9 * expected.forward_flops);
  std::filesystem::remove(path);
}

// Convolutions come back with the zoo's kernel shapes (n, c, h, w, k, r, s, strides, padding),
// so a device's kernel model prices an imported ResNet-50 as it prices the zoo's.
TEST(OnnxRoundTrip, ConvolutionsKeepTheirKernelShapes) {
  SKIP_WITHOUT_ONNX();
  OpGraph original = zoo("resnet50", 2);
  OpGraph imported = round_trip(original, 2);
  int convolutions = 0;
  for (OpId id = 0; id < original.size(); ++id) {
    const Op& op = original.op(id);
    if (!op.kernel || op.kernel->kind != KernelKind::kConv2d) continue;
    const Op& twin = imported.op(imported.find(op.name));
    ASSERT_TRUE(twin.kernel) << op.name;
    EXPECT_TRUE(*twin.kernel == *op.kernel) << op.name << ": " << twin.kernel->describe() << " vs " << op.kernel->describe();
    ++convolutions;
  }
  EXPECT_EQ(convolutions, 53);  // ResNet-50: the stem, 16 blocks x 3, and 4 projection shortcuts
}

// Transformer Engine's FP8 roles survive the round trip, re-inferred on import where the file's
// operators do not carry them (sim/graph/fp8_gemm_roles.h): a GEMM fed by a layer norm reads its
// input from normalization; the GEMM behind the loss (or the graph's end) is the output layer.
TEST(OnnxRoundTrip, GemmsKeepTheirFp8Roles) {
  SKIP_WITHOUT_ONNX();
  for (const std::string name : {"resnet50", "gpt", "bert_large", "llama3_8b"}) {
    OpGraph original = zoo(name, 1);
    OpGraph imported = round_trip(original, 1);
    int normalized = 0, output_layers = 0;
    for (OpId id = 0; id < original.size(); ++id) {
      const Op& op = original.op(id);
      if (!op.kernel || op.kernel->kind != KernelKind::kGemm) continue;
      normalized += op.kernel->gemm.input_from_normalization;
      output_layers += op.kernel->gemm.output_layer;
      const Op& twin = imported.op(imported.find(op.name));
      ASSERT_TRUE(twin.kernel) << name << " " << op.name;
      EXPECT_EQ(twin.kernel->gemm.input_from_normalization, op.kernel->gemm.input_from_normalization) << name << " " << op.name;
      EXPECT_EQ(twin.kernel->gemm.output_layer, op.kernel->gemm.output_layer) << name << " " << op.name;
    }
    EXPECT_EQ(output_layers, name == "bert_large" ? 2 : 1) << name;  // BERT: the masked-LM and next-sentence heads
    if (name != "resnet50") EXPECT_GT(normalized, 0) << name;
  }
}

// An ONNX file is an input file like any other: a named pipe is refused before it is opened
// (it would block), not reported as missing.
TEST(OnnxErrors, ANamedPipeIsRefusedWithoutBlocking) {
  SKIP_WITHOUT_ONNX();
  std::filesystem::path fifo = temp_file("pipe.onnx");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string message = import_error(fifo);
  std::filesystem::remove(fifo);
  EXPECT_NE(message.find("named pipe"), std::string::npos) << message;
}

// Only the ops ONNX has no faithful node for travel as ai.placesim nodes.
TEST(OnnxExport, UsesStandardOperatorsForCnns) {
  SKIP_WITHOUT_ONNX();
  std::string bytes = export_onnx_model(zoo("inception_v3", 1));
  EXPECT_EQ(bytes.find("ai.placesim\x1a"), std::string::npos);  // no node in the placesim domain
  EXPECT_NE(bytes.find("Conv"), std::string::npos);
  EXPECT_NE(bytes.find("placesim-weights-not-exported.bin"), std::string::npos);  // weights are not written
  EXPECT_LT(bytes.size(), 200u * 1024u);
}

// --- real ONNX files (libonnx-testdata) --------------------------------------------------------

struct Expected {
  const char* model;
  const char* op;
  double macs;  // forward FLOPs / 2 of conv and matmul ops; FLOPs of the others
  double parameters;
};

double flops_of(const OpGraph& graph, const std::string& type) {
  double flops = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).type == type) flops += graph.op(id).forward_flops;
  }
  return flops;
}

TEST(OnnxTestData, PytorchConvertedModelsMatchHandComputation) {
  SKIP_WITHOUT_TESTDATA();
  const Expected cases[] = {
      // Conv2d(3, 4, kernel (3, 2)) on [2, 3, 7, 5] -> [2, 4, 5, 4]: 160 outputs x 3 x 3 x 2 MACs;
      // weights 4 x 3 x 3 x 2 + 4 biases.
      {"pytorch-converted/test_Conv2d", "Conv", 2.0 * 160 * 3 * 3 * 2, 4 * 3 * 3 * 2 + 4},
      // Linear(10, 8) on [4, 10]: 4 x 10 x 8 MACs; 80 weights + 8 biases.
      {"pytorch-converted/test_Linear", "Gemm", 2.0 * 4 * 10 * 8, 10 * 8 + 8},
      // ConvTranspose2d(3, 4, 3, stride (3, 2)) on [1, 3, 7, 6]: every input element scatters
      // through 4 x 3 x 3 weights: 126 x 36 MACs; weights 3 x 4 x 3 x 3 + 4 biases.
      {"pytorch-converted/test_ConvTranspose2d", "ConvTranspose", 2.0 * 126 * 4 * 3 * 3, 3 * 4 * 3 * 3 + 4},
      // MaxPool2d(3, stride 2, padding 1) on [1, 3, 7, 7] -> [1, 3, 4, 4]: 48 outputs x 9.
      {"pytorch-converted/test_MaxPool2d", "MaxPool", 48.0 * 9, 0},
      // BatchNorm2d(3) on [2, 3, 6, 6]: 5 FLOPs per element; gamma + beta.
      {"pytorch-converted/test_BatchNorm2d_eval", "BatchNormalization", 5.0 * 2 * 3 * 6 * 6, 2 * 3},
      // Embedding(4, 3) looked up by [1, 4] ids: a copy (0 FLOPs); 12 weights.
      {"pytorch-converted/test_Embedding", "Gather", 0, 4 * 3},
      // Gemm with transA: A [6, 3] is read as [3, 6], B [6, 4]: 3 x 6 x 4 MACs.
      {"node/test_gemm_transposeA", "Gemm", 2.0 * 3 * 6 * 4, 0},
      // Einsum "bij,bjk->bik" on [5, 2, 3] and [5, 3, 4]: 5 x 2 x 4 outputs x 3.
      {"node/test_einsum_batch_matmul", "Einsum", 2.0 * 5 * 2 * 4 * 3, 0},
      // 3x3 convolution with padding 1 on [1, 1, 5, 5]: 25 outputs x 9 (W is an input, not a weight).
      {"node/test_basic_conv_with_padding", "Conv", 2.0 * 25 * 9, 0},
  };
  for (const Expected& expected : cases) {
    SCOPED_TRACE(expected.model);
    OpGraph graph = import(kTestData / expected.model / "model.onnx");
    EXPECT_DOUBLE_EQ(flops_of(graph, expected.op), expected.macs);
    EXPECT_DOUBLE_EQ(graph.totals().parameter_count, expected.parameters);
  }
}

// Every PyTorch-converted model imports; the node and simple tests (one operator each, often
// with shapes that depend on input values) import or fail with an InputError, never anything else.
TEST(OnnxTestData, EveryModelImportsOrIsAnInputError) {
  SKIP_WITHOUT_TESTDATA();
  int imported = 0, refused = 0;
  for (const char* folder : {"pytorch-converted", "pytorch-operator", "simple", "node"}) {
    if (!std::filesystem::is_directory(kTestData / folder)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(kTestData / folder)) {
      std::filesystem::path model = entry.path() / "model.onnx";
      if (!std::filesystem::is_regular_file(model)) continue;
      try {
        import(model);
        ++imported;
      } catch (const InputError& error) {
        EXPECT_EQ(std::string(folder).rfind("pytorch", 0), std::string::npos) << model << ": " << error.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(imported, 800) << refused << " refused";
}

// --- broken files ------------------------------------------------------------------------------

TEST(OnnxErrors, TruncatedEmptyGarbageAndHugeFilesAreInputErrors) {
  SKIP_WITHOUT_ONNX();
  std::string model = export_onnx_model(zoo("resnet50", 1));
  std::filesystem::path path = temp_file("broken.onnx");
  for (size_t cut : {model.size() / 2, model.size() - 3, size_t{7}}) {
    write(path, model.substr(0, cut));
    EXPECT_NE(import_error(path).find(path.string() + ": /"), std::string::npos) << cut;
  }
  write(path, "");
  EXPECT_NE(import_error(path).find("the file is empty"), std::string::npos);
  write(path, "{\"model\": \"this is JSON, not ONNX\"}\n");
  EXPECT_NE(import_error(path).find("not"), std::string::npos);
  // A sparse file past protobuf's 2 GiB limit is refused before anything is read.
  { std::ofstream create(path, std::ios::binary | std::ios::trunc); }
  std::filesystem::resize_file(path, (std::uintmax_t{1} << 31) + 16);
  EXPECT_NE(import_error(path).find("2 GiB"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_NE(import_error(path).find("no such file"), std::string::npos);
}

TEST(OnnxErrors, InputShapesAreCheckedAgainstTheModel) {
  SKIP_WITHOUT_ONNX();
  std::filesystem::path path = temp_file("mlp.onnx");
  write(path, export_onnx_model(zoo("mlp", 1)));
  OnnxImportOptions options;
  options.input_shapes_file = "scenario.json";
  options.input_shapes_path = "/model/inputs";
  options.input_shapes["features"] = {8, 784};
  EXPECT_NE(import_error(path, options).find("scenario.json: /model/inputs/features: the model has no input"),
            std::string::npos);
  options.input_shapes.clear();
  options.input_shapes["input/features"] = {8, 784, 1};
  EXPECT_NE(import_error(path, options).find("/model/inputs/input~1features: input \"input/features\" has rank 2"),
            std::string::npos);
  options.input_shapes.clear();
  EXPECT_NE(import_error(path, options).find("symbolic dimension \"N\""), std::string::npos);  // no batch given
  options.input_shapes["input/features"] = {8, 784};
  OpGraph graph = import_onnx_model(path, options);  // "N" = 8 binds the labels too
  EXPECT_EQ(graph.op(graph.find("input/labels")).output_shape, std::vector<int64_t>{8});
  std::filesystem::remove(path);
}

// --- convolution and pooling windows (sim/graph/onnx/onnx_window_checks.h) ----------------------

// The ONNX fuzzer's seed models (tests/onnx/make_bad_onnx_inputs.cpp --seeds): x [1, 3, 8, 8].
const std::filesystem::path kWindowSeeds = std::filesystem::path(PLACESIM_SOURCE_DIR) / "tests/fuzz/corpus/onnx";

// A copy: the graphs below are temporaries.
Op only_op_of_type(const OpGraph& graph, const std::string& type) {
  for (OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).type == type) return graph.op(id);
  }
  throw std::runtime_error("no " + type + " op");
}

TEST(OnnxWindows, ValidConvolutionsAndPoolsImportWithHandDerivedShapes) {
  SKIP_WITHOUT_ONNX();
  // Conv, w [4, 3, 3, 3], strides 2, pads 1: floor((8 + 2 - 3) / 2) + 1 = 4; 2 x 64 outputs x 27 MACs.
  const Op conv = only_op_of_type(import(kWindowSeeds / "conv_strides_pads.onnx"), "Conv");
  EXPECT_EQ(conv.output_shape, (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_DOUBLE_EQ(conv.forward_flops, 2.0 * 64 * 27);
  // Depthwise: x [1, 6, 8, 8], w [6, 1, 3, 3], group 6: 6 x 6 x 6 outputs x 9 MACs.
  const Op depthwise = only_op_of_type(import(kWindowSeeds / "conv_depthwise.onnx"), "Conv");
  EXPECT_EQ(depthwise.output_shape, (std::vector<int64_t>{1, 6, 6, 6}));
  EXPECT_DOUBLE_EQ(depthwise.forward_flops, 2.0 * 216 * 9);
  // SAME_UPPER, stride 2: ceil(8 / 2) = 4.
  EXPECT_EQ(only_op_of_type(import(kWindowSeeds / "conv_auto_pad_same.onnx"), "Conv").output_shape,
            (std::vector<int64_t>{1, 4, 4, 4}));
  // ConvTranspose, w [3, 4, 3, 3], strides 2, output_padding 1: 2 x (8 - 1) + 1 + 3 = 18; 2 x 192 inputs x 36.
  const Op transpose = only_op_of_type(import(kWindowSeeds / "conv_transpose.onnx"), "ConvTranspose");
  EXPECT_EQ(transpose.output_shape, (std::vector<int64_t>{1, 4, 18, 18}));
  EXPECT_DOUBLE_EQ(transpose.forward_flops, 2.0 * 192 * 36);
  // MaxPool 2 x 2, strides 2, pads (0, 0, 1, 1), ceil_mode: 1 + ceil((8 + 1 - 2) / 2) = 5; 75 outputs x 4.
  const Op pool = only_op_of_type(import(kWindowSeeds / "maxpool.onnx"), "MaxPool");
  EXPECT_EQ(pool.output_shape, (std::vector<int64_t>{1, 3, 5, 5}));
  EXPECT_DOUBLE_EQ(pool.forward_flops, 75.0 * 4);
  // Conv [1, 4, 6, 6] -> MaxPool 2 x 2 stride 2 [1, 4, 3, 3] -> Flatten 36 -> Gemm 10.
  EXPECT_EQ(only_op_of_type(import(kWindowSeeds / "conv_pool_gemm.onnx"), "Gemm").output_shape,
            (std::vector<int64_t>{1, 10}));
}

TEST(OnnxWindows, BytesInMemoryImportAsTheFileDoes) {
  SKIP_WITHOUT_ONNX();
  std::ifstream in(kWindowSeeds / "conv_strides_pads.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  OnnxImportOptions options;
  options.default_batch = 1;
  EXPECT_DOUBLE_EQ(only_op_of_type(import_onnx_bytes(bytes, "conv.onnx", options), "Conv").forward_flops, 2.0 * 64 * 27);
  try {
    import_onnx_bytes(bytes.substr(0, bytes.size() / 2), "conv.onnx", options);
    ADD_FAILURE() << "a truncated model imported";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), "conv.onnx");
    EXPECT_EQ(error.json_path(), "/");
  }
}

}  // namespace
}  // namespace placesim
