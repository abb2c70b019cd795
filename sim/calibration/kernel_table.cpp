#include "sim/calibration/kernel_table.h"

#include <cmath>
#include <sstream>

#include "sim/core/csv_fields.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim {
namespace {

const std::vector<std::string> kColumns = {"device", "op", "shape", "precision", "algorithm", "seconds", "source"};

class RowReader {
 public:
  RowReader(std::string file, int64_t line) : file_(std::move(file)), line_(line) {}
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    throw InputError(file_, "line " + std::to_string(line_) + ", column " + column, message);
  }
  std::map<std::string, std::string> shape_fields(const std::string& text) const {
    std::map<std::string, std::string> fields;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ';')) {
      size_t equals = item.find('=');
      if (equals == std::string::npos || equals == 0) fail("shape", "expected key=value, got \"" + item + "\"");
      fields[item.substr(0, equals)] = item.substr(equals + 1);
    }
    return fields;
  }
  int64_t dimension(const std::map<std::string, std::string>& fields, const std::string& key, int64_t fallback,
                    int64_t min_value, long long max_value = 1ll << 31) const {
    auto it = fields.find(key);
    if (it == fields.end()) {
      if (fallback < min_value) fail("shape", "missing \"" + key + "\"");
      return fallback;
    }
    char* end = nullptr;
    errno = 0;
    long long value = std::strtoll(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || errno != 0 || value < min_value || value > max_value) {
      fail("shape", "\"" + key + "\" must be an integer from " + std::to_string(min_value) + " to " + std::to_string(max_value) + ", got \"" +
                        it->second + "\"");
    }
    return value;
  }

 private:
  std::string file_;
  int64_t line_;
};

}  // namespace

std::optional<ConvAlgorithm> conv_algorithm_family(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find("WINOGRAD_NONFUSED") != std::string::npos) return ConvAlgorithm::kWinogradNonfused;
  if (name.find("WINOGRAD") != std::string::npos) return ConvAlgorithm::kWinogradFused;
  if (name.find("FFT") != std::string::npos) return ConvAlgorithm::kFft;
  if (name.find("GEMM") != std::string::npos || name.find("DIRECT") != std::string::npos ||
      name.find("ALGO_") != std::string::npos) {
    return ConvAlgorithm::kImplicitGemm;
  }
  return std::nullopt;
}

namespace {

bool is_attention_op(const std::string& op) { return op == "attention_fwd" || op == "attention_bwd"; }

/// `attention`: the fused attention rows only (read_attention_table), else every other row.
KernelTable read_table(const std::filesystem::path& path, const std::string& device, bool attention) {
  const std::string file = path.string();
  std::stringstream text(read_input_file(path));
  KernelTable table;
  std::string line;
  int64_t number = 0;
  while (std::getline(text, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (split_csv_fields(line, kColumns.size()) != kColumns) {
        throw InputError(file, "line 1", "expected the header device,op,shape,precision,algorithm,seconds,source");
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> fields = split_csv_fields(line, kColumns.size());
    RowReader row(file, number);
    if (fields.size() != kColumns.size()) row.fail("source", "expected 7 columns, got " + std::to_string(fields.size()));
    KernelMeasurement m;
    m.device = fields[0];
    if (!device.empty() && m.device != device) continue;
    m.op = fields[1];
    m.file = file;
    m.line = number;
    m.source = fields[6];
    auto precision = parse_precision(fields[3]);
    if (!precision) row.fail("precision", "unknown precision \"" + fields[3] + "\"");
    m.precision = *precision;
    char* end = nullptr;
    m.seconds = std::strtod(fields[5].c_str(), &end);
    if (fields[5].empty() || *end != '\0' || !std::isfinite(m.seconds) || m.seconds <= 0 || m.seconds > 1e4) {
      row.fail("seconds", "expected a positive time in seconds, got \"" + fields[5] + "\"");
    }
    auto shape = row.shape_fields(fields[2]);
    if (is_attention_op(m.op) != attention) {
      ++table.skipped[m.op + (attention ? ": not a fused attention kernel" : ": a fused attention kernel (calibrate --attention-kernels)")];
      continue;
    }
    if (attention) {
      AttentionShape a;
      const int64_t heads = row.dimension(shape, "heads", 0, 1);
      a.batch = row.dimension(shape, "batch", 1, 1) * heads;
      a.queries = a.keys = row.dimension(shape, "seq", 0, 1);
      a.head_dim = row.dimension(shape, "head_dim", 0, 1);
      a.causal = row.dimension(shape, "causal", 0, 0, 1) != 0;
      m.shape = KernelShape::of_attention(a);
      m.pass = m.op == "attention_fwd" ? kForwardPass : kBackwardDataPass;
      m.implementation = fields[4];
    } else if (m.op == "gemm" || m.op == "bmm" || m.op == "linear") {
      GemmShape gemm;
      gemm.batch = row.dimension(shape, "batch", 1, 1);
      gemm.m = row.dimension(shape, "m", 0, 1);
      gemm.n = row.dimension(shape, "n", 0, 1);
      gemm.k = row.dimension(shape, "k", 0, 1);
      gemm.transpose_a = row.dimension(shape, "ta", 0, 0) != 0;
      gemm.transpose_b = row.dimension(shape, "tb", 0, 0) != 0;
      m.shape = KernelShape::of_gemm(gemm);
    } else if (m.op == "conv_fwd" || m.op == "conv_bwd_data" || m.op == "conv_bwd_filter") {
      Conv2dShape conv;
      conv.n = row.dimension(shape, "n", 0, 1);
      conv.c = row.dimension(shape, "c", 0, 1);
      conv.h = row.dimension(shape, "h", 0, 1);
      conv.w = row.dimension(shape, "w", 0, 1);
      conv.k = row.dimension(shape, "k", 0, 1);
      conv.r = row.dimension(shape, "r", 0, 1);
      conv.s = row.dimension(shape, "s", 0, 1);
      conv.pad_h = row.dimension(shape, "pad_h", 0, 0);
      conv.pad_w = row.dimension(shape, "pad_w", 0, 0);
      conv.stride_h = row.dimension(shape, "stride_h", 1, 1);
      conv.stride_w = row.dimension(shape, "stride_w", 1, 1);
      conv.dilation_h = row.dimension(shape, "dil_h", 1, 1);
      conv.dilation_w = row.dimension(shape, "dil_w", 1, 1);
      conv.groups = row.dimension(shape, "groups", 1, 1);
      if (conv.c % conv.groups != 0 || conv.k % conv.groups != 0 || conv.p() < 1 || conv.q() < 1) {
        row.fail("shape", "not a valid convolution: \"" + fields[2] + "\"");
      }
      m.shape = KernelShape::of_conv(conv);
      m.pass = m.op == "conv_fwd" ? kForwardPass : m.op == "conv_bwd_data" ? kBackwardDataPass : kBackwardFilterPass;
      m.algorithm = conv_algorithm_family(fields[4]);
    } else if (m.op == "pooling") {
      // Window r x s over an n x c x h x w input: reads output x window elements, moves the
      // input and the output once (hardware_profiles/kernels/README.md).
      const int64_t n = row.dimension(shape, "n", 0, 1), c = row.dimension(shape, "c", 0, 1);
      const int64_t h = row.dimension(shape, "h", 0, 1), w = row.dimension(shape, "w", 0, 1);
      const int64_t r = row.dimension(shape, "r", 0, 1), s = row.dimension(shape, "s", 0, 1);
      const int64_t pad_h = row.dimension(shape, "pad_h", 0, 0), pad_w = row.dimension(shape, "pad_w", 0, 0);
      const int64_t stride_h = row.dimension(shape, "stride_h", 1, 1), stride_w = row.dimension(shape, "stride_w", 1, 1);
      const int64_t p = (h + 2 * pad_h - r) / stride_h + 1, q = (w + 2 * pad_w - s) / stride_w + 1;
      if (h + 2 * pad_h < r || w + 2 * pad_w < s || p < 1 || q < 1) {
        row.fail("shape", "not a valid pooling window: \"" + fields[2] + "\"");
      }
      const double outputs = static_cast<double>(n) * static_cast<double>(c) * static_cast<double>(p * q);
      const double inputs = static_cast<double>(n) * static_cast<double>(c) * static_cast<double>(h * w);
      m.window_reads = outputs * static_cast<double>(r * s);
      m.memory_bytes = element_bytes(m.precision) * (inputs + outputs);
      m.shape_text = fields[2];
    } else if (m.op == "elementwise" || m.op == "softmax" || m.op == "layernorm") {
      const double elements = static_cast<double>(row.dimension(shape, "elements", 0, 1, 1ll << 40));
      const double tensors = m.op == "elementwise" ? static_cast<double>(row.dimension(shape, "tensor_inputs", 1, 1)) + 1 : 2;
      m.memory_bytes = element_bytes(m.precision) * elements * tensors;
      m.shape_text = fields[2];
    } else {
      ++table.skipped[m.op + ": neither a GEMM, a convolution nor a memory-bound op"];
      continue;
    }
    table.rows.push_back(std::move(m));
  }
  return table;
}

}  // namespace

KernelTable read_kernel_table(const std::filesystem::path& path, const std::string& device) {
  return read_table(path, device, false);
}

KernelTable read_attention_table(const std::filesystem::path& path, const std::string& device) {
  return read_table(path, device, true);
}

}  // namespace placesim
