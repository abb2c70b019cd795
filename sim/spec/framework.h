// Framework: the training framework a data-parallel strategy runs under, which decides the
// transports its messages take (docs/communication.md, "Transports"): TensorFlow 1.x sends
// parameter-server traffic between machines as gRPC messages and all-reduces with NCCL inside
// a machine; Horovod, PyTorch DDP and Megatron-LM all-reduce with NCCL, across machines over
// InfiniBand/RoCE (GPUDirect RDMA) or TCP sockets. "links" charges the links only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/transport.h"
#include "sim/spec/nccl_version.h"

namespace placesim {

enum class Framework { kLinksOnly, kTensorFlow1, kHorovod, kPyTorchDdp, kMegatron };

std::string to_string(Framework framework);  ///< "links", "tensorflow-1", "horovod", "pytorch-ddp", "megatron"
std::optional<Framework> parse_framework(const std::string& text);
std::vector<std::string> framework_names();
/// Whether the framework has parameter servers (TensorFlow 1.x and "links" do).
bool has_parameter_servers(Framework framework);

/// How a strategy's messages move: its framework's transports, or `transport` for every
/// message and collective that crosses machines.
struct CommunicationOptions {
  Framework framework = Framework::kLinksOnly;
  std::optional<Transport> transport;  ///< overrides the framework's choice between machines
  /// The NCCL release of its NCCL collectives: the algorithms `auto` picks among.
  NcclVersion nccl_version{};
  /// Data-parallel gradient collectives of one device in flight at once: the k-th waits for the
  /// (k - c)-th to end. 1: one communication stream (NCCL under PyTorch DDP, Horovod, Megatron,
  /// TensorFlow 1.x); Caffe2's Gloo all-reduces ran up to 4 (data_parallel_model.py,
  /// max_concurrent_distributed_ops = 4; Goyal et al. 2017, section 4.2).
  int64_t concurrent_collectives = 1;
};

}  // namespace placesim
