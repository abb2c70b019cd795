#include "sim/cluster/transport.h"

namespace placesim {
namespace {

// The links already charge framing: links.json's Ethernet rates are TCP payload rates (1448 of
// 1538 wire bytes per frame) and its InfiniBand and RoCE rates RDMA payload rates, so the
// bundled transports keep wire_efficiency 1 (a user's transport may lower it).

std::vector<Transport> make_bundled() {
  std::vector<Transport> transports;
  {
    Transport grpc;
    grpc.id = "grpc_tcp";
    // TensorFlow 1.x RecvTensor over gRPC: one 128 MB tensor moved worker to worker at
    // 520-569 MB/s on one machine (tensorflow/tensorflow#6116 and #6256, Dec 2016, TF 0.12,
    // benchmark_grpc_recv.py), i.e. limited by the gRPC pipeline, not the network; after the
    // gRPC upgrade of Aug 2017 (TF 1.4) the same test reached ~800 MB/s (#6116, byronyi).
    grpc.stream_bytes_per_second = 545e6;  // midpoint of 520 and 569 MB/s (TF <= 1.3)
    // The tensor's bytes are copied into a gRPC ByteBuffer on send and parsed out of it on
    // receive (tensorflow/core/distributed_runtime/rpc/grpc_tensor_coding.cc, described in #5907).
    grpc.host_copies_per_side = 1;
    // CPU time per message: TensorFlow's own RPC benchmark (core/distributed_runtime/
    // rpcbench_test.cc, results in tensorflow/tensorflow#7466, Feb 2017, before the gRPC fix, 8-byte
    // tensors between tasks on localhost): one send took 126 us of step time, and fanning out 15 or
    // 30 sends at once took 874 and 1,589 us (BM_ShardedProgram/15/1, /30/1), i.e. 53 and 50 us for
    // each further message when they queue for the servers' CPUs: about 50 us of host work per
    // message, split evenly between the sender and the receiver (an assumption: the benchmark
    // times both sides together). A chain of dependent sends costs 83 us per hop (/1/60: 5,010 us
    // for 60), the rest being latency.
    grpc.host_seconds_per_message = 25e-6;
    grpc.source =
        "stream rate: tensorflow/tensorflow#6116 and #6256 (520-569 MB/s for 128 MB tensors, TF 0.12, Dec 2016); "
        "copies: grpc_tensor_coding (#5907); 25 us of CPU per message and side: half the ~50 us per concurrent "
        "8-byte send of TensorFlow's rpcbench_test (#7466, Feb 2017)";
    transports.push_back(grpc);
  }
  {
    Transport tcp;
    tcp.id = "tcp";
    // Kernel TCP sockets (MPI's TCP BTL, Gloo, NCCL's socket transport): one copy between the
    // user buffer and the socket buffer on each side; no per-stream cap beyond the links.
    tcp.host_copies_per_side = 1;
    tcp.source = "one copy between user and socket buffer per side (POSIX send/recv)";
    transports.push_back(tcp);
  }
  {
    Transport rdma;
    rdma.id = "rdma_verbs";
    // InfiniBand or RoCE verbs (MPI over UCX, Gloo's ibverbs, TF's grpc+verbs): the NIC reads
    // and writes registered memory: no host copies, no per-stream cap.
    rdma.source = "zero-copy RDMA: the NIC moves registered memory (IBTA specification vol. 1)";
    transports.push_back(rdma);
  }
  {
    Transport nccl;
    nccl.id = "nccl";
    // NCCL runs its collectives as CUDA kernels, one thread block per channel, on the same SMs
    // as the model's kernels. Share while overlapping: Calculon's processor_usage for an NVLink
    // network (calculon-ai/calculon systems/a100_80g.json: 0.15), an upstream modelling default;
    // of the size measured and counted since (2026-12-05, not fitted): 4 A100 or 4 H100 training
    // GPT and LLaMA with overlapped collectives computed 18.9% slower on average (40.0% at most)
    // than without, i.e. a share of 0.159 (Lee et al. 2025, arXiv 2507.03114, abstract); NCCL's
    // 24 channels on 8 A100 or H100 (NCCL INFO logs) are 24/108 = 0.22 and 24/132 = 0.18 of their
    // SMs, its 12 on a DGX-2's V100s 12/80 = 0.15.
    nccl.gpu_compute_share = 0.15;
    nccl.source =
        "compute share 0.15: Calculon systems/a100_80g.json NVLink processor_usage (a modelling default); measured "
        "since: 18.9% average compute slowdown under overlapped collectives on 4 A100/H100 (arXiv 2507.03114), "
        "share 0.159";
    transports.push_back(nccl);
  }
  {
    Transport nccl_net;
    nccl_net.id = "nccl_ib";
    // NCCL across machines over InfiniBand with GPUDirect RDMA: 2 SMs per network card
    // (NVIDIA/nccl#689, the maintainer: "a PCI system with a single NIC ... 2 SMs", "DGX with 8
    // NICs ... 16 SMs"), so the share is set per cluster (nccl_network_share,
    // sim/planner/framework_transports.cpp); 0.02, Calculon's processor_usage for its InfiniBand
    // network (systems/a100_80g.json), where the cluster does not say its nodes' cards.
    nccl_net.gpu_compute_share = 0.02;
    nccl_net.source =
        "compute share: 2 SMs per network card / the GPU's SMs (NVIDIA/nccl#689); 0.02 (Calculon systems/a100_80g.json "
        "InfiniBand processor_usage) where the cluster does not give its cards";
    transports.push_back(nccl_net);
  }
  {
    Transport nccl_socket;
    nccl_socket.id = "nccl_socket";
    // NCCL across machines over TCP sockets (no RDMA NIC): the socket copies of "tcp" and the
    // kernels' share of the SMs while they overlap.
    nccl_socket.host_copies_per_side = 1;
    nccl_socket.gpu_compute_share = 0.02;
    // NCCL's socket transport moves each channel's data through its proxy threads' sockets and
    // reaches about half the TCP payload rate of the link (links.json's Ethernet rates, 1448 of
    // 1538 wire bytes) in nccl-tests' all-reduce bus bandwidth at large sizes: 32 Gb/s (3.766
    // GB/s of TCP payload), NVIDIA/nccl#209 (April 2019): NCCL 2.4.2 1.85 GB/s with 1 ring and
    // 1.95 with 2 (0.491, 0.518), NCCL 2.3.7 2.06 with 1 ring (0.547; 3.75 with 8 rings set by
    // hand); 25 Gb/s on Azure (2.943 GB/s), NVIDIA/nccl-tests#83 (May 2021, NCCL 2.9.6, 2
    // channels): at most 1.7 GB/s (0.578). The median of the four, 0.53 (a maintainer's
    // explanation there: NCCL's bandwidth is its slowest socket's times the sockets, and a single
    // TCP flow rarely runs at line rate; NVIDIA/nccl#450, 100 Gb/s, 4-6 GB/s of 11.8: less still).
    nccl_socket.link_rate_share = 0.53;
    nccl_socket.source =
        "copies as tcp; compute share as nccl_ib's (2 SMs per network card, NVIDIA/nccl#689); link rate share 0.53: the median "
        "of nccl-tests all-reduce bus bandwidths over TCP at large sizes against the links' TCP payload rate "
        "(NVIDIA/nccl#209, 32 Gb/s, NCCL 2.3.7-2.4.2: 0.491, 0.518, 0.547; NVIDIA/nccl-tests#83, 25 Gb/s, "
        "NCCL 2.9.6: 0.578)";
    transports.push_back(nccl_socket);
  }
  return transports;
}

}  // namespace

const std::vector<Transport>& bundled_transports() {
  static const std::vector<Transport> transports = make_bundled();
  return transports;
}

std::optional<Transport> find_transport(const std::string& id) {
  for (const Transport& transport : bundled_transports()) {
    if (transport.id == id) return transport;
  }
  return std::nullopt;
}

bool is_nccl_transport(const Transport& transport) {
  return transport.id == "nccl" || transport.id == "nccl_ib" || transport.id == "nccl_socket";
}

std::vector<std::string> transport_ids() {
  std::vector<std::string> ids;
  for (const Transport& transport : bundled_transports()) ids.push_back(transport.id);
  return ids;
}

}  // namespace placesim
