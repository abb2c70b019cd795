// The CUDA executor (compiled only when CMake finds nvcc; its GPU buffers and kernels are
// cuda_gpu.h, its calibration cuda_calibration.cu, its NCCL groups cuda_nccl_group.h). One compute
// stream per GPU (cuBLAS sgemm, a triad kernel, a multiply-add kernel), one copy stream per
// device pair (cudaMemcpyPeerAsync between GPUs, cudaMemcpyAsync from/to pinned host memory),
// CUDA events around every task, host callbacks (cudaLaunchHostFunc) to tell the dispatch loop a
// task has finished. CPU devices of the plan run as the CPU executor's worker threads.
// All-reduces run as NCCL all-reduces (one communicator per GPU of the group, on streams of their
// own) when CMake found NCCL (PLACESIM_WITH_NCCL).
// A plan over several hosts runs as one MPI rank per host (real_backend/hosts/host_roles.h):
// each rank runs its own tasks; a cross-host transfer is staged through pinned host memory and
// sent with MPI by a thread per (peer, direction), in the plan's topological order on both ends;
// an all-reduce whose group spans hosts runs on communicators made by ncclCommInitRank from a
// unique id the rank of its first member sends to the others over MPI; rank 0 merges the timeline.
#include "real_backend/cuda/cuda_executor.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <queue>
#include <set>

#include "real_backend/cuda/cuda_gpu.h"
#include "real_backend/cuda/cuda_module_functions.h"
#include "real_backend/cuda/cuda_nccl_group.h"
#include "real_backend/cuda/cuda_status.h"
#include "real_backend/cuda/in_order_release.h"
#include "real_backend/runtime/cpu_kernels.h"
#include "real_backend/hosts/host_group.h"
#include "real_backend/hosts/host_roles.h"
#include "real_backend/runtime/scheduler.h"
#include "real_backend/runtime/worker_thread.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

constexpr size_t kMessageBytes = 64u << 20;  // largest MPI message of a cross-host transfer

/// A copy channel between two devices of the plan.
struct Channel {
  int stream_device = -1;  // -1: host-only (CPU to CPU), on a worker thread
  cudaStream_t stream = nullptr;
  void* from = nullptr;  // source buffer (device memory or pinned host)
  void* to = nullptr;
  bool from_host = false, to_host = false;
  int from_device = -1, to_device = -1;
  size_t size = 0, offset = 0;
  std::unique_ptr<WorkerThread> host_thread;
  std::unique_ptr<CopyBuffers> host_buffers;
};

/// The transfers between this host and one other, in one direction: staged through a pinned
/// host buffer (GPU -> host copy, then MPI; or MPI, then host -> GPU copy) by one thread that
/// runs them in the plan's topological order (the peer's thread runs the same order).
struct RemoteChannel {
  int peer = -1;
  bool sends = false;
  InOrderRelease jobs;
  double largest_bytes = 0;
  void* pinned = nullptr;  // cudaMallocHost, `size` bytes
  size_t size = 0;
  struct Staging {
    cudaStream_t stream = nullptr;
    void* buffer = nullptr;  // on the GPU, `size` bytes
  };
  std::map<int, Staging> staging;  // per local GPU ordinal that sends or receives
  std::unique_ptr<WorkerThread> thread;
};

struct TaskEvents {
  cudaEvent_t start = nullptr, end = nullptr;
  int device = -1;  // which GPU's clock; -1 = host-timed
};

struct Callback {
  CompletionQueue* queue = nullptr;
  TaskId task = 0;
};

void CUDART_CB on_task_done(void* data) {
  auto* callback = static_cast<Callback*>(data);
  callback->queue->push({callback->task, NAN});
}

class CudaExecutor final : public Executor, private TaskLauncher {
 public:
  CudaExecutor(ExecutionOptions options, int device_count) : Executor(std::move(options)), device_count_(device_count) {}
  ~CudaExecutor() override { release(); }

  std::string source() const override { return "measured/cuda"; }

  void check_plan(const ExecutionPlan& plan, const Cluster& cluster) const override {
    const std::string where = "plan \"" + plan.name + "\"";
    // MPI tags: a cross-host transfer's is its task id; an all-reduce group spanning hosts sends
    // its NCCL unique id with the tag after the plan's tasks plus the group's index.
    HostGroup* group = checked_host_group(plan, cluster, int64_t(plan.tasks.size() + spanning_groups(plan, cluster).size()));
    const int rank = group ? group->rank() : 0;
    const std::vector<Role> roles = task_roles(plan, cluster, rank);
    for (const Task& task : plan.tasks) {
      if (roles[task.id] == Role::kRemote) continue;
      const std::string path = "/tasks/" + std::to_string(task.id);
      if (task.kind == TaskKind::kCollective) {
        check_collective(task, cluster, where, path, rank);
        continue;
      }
      for (DeviceId id : {task.device, task.source}) {
        const ClusterDevice& device = cluster.device(id);
        if (device.node != rank) continue;  // the other end of a cross-host transfer: its host checks it
        if (device.spec.kind == DeviceKind::kTpu) {
          throw InputError(where, path, "task \"" + task.name + "\" uses a TPU, which the cuda backend cannot run");
        }
        if (device.spec.kind == DeviceKind::kGpu && !options_.share_gpus && device.name.index.value_or(0) >= device_count_) {
          throw InputError(where, path, "task \"" + task.name + "\" runs on " + device.name.canonical() +
                                            " but this machine has " + std::to_string(device_count_) +
                                            " CUDA GPU(s) (--share-gpus runs plan GPU k on GPU k mod " +
                                            std::to_string(device_count_) + ")");
        }
      }
    }
  }

  /// The member lists of the plan's all-reduces whose groups span hosts, each with its index
  /// (the same on every rank: the map orders them).
  static std::map<std::vector<DeviceId>, int> spanning_groups(const ExecutionPlan& plan, const Cluster& cluster) {
    std::map<std::vector<DeviceId>, int> groups;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCollective && task.group.size() > 1 && task_nodes(task, cluster).size() > 1) {
        groups.emplace(task.group, 0);
      }
    }
    int index = 0;
    for (auto& [members, value] : groups) value = index++;
    return groups;
  }

  /// An all-reduce runs on NCCL: every member a GPU, one GPU per rank; this host checks its own.
  void check_collective(const Task& task, const Cluster& cluster, const std::string& where, const std::string& path,
                        int rank) const {
#ifndef PLACESIM_WITH_NCCL
    (void)cluster;
    (void)rank;
    throw InputError(where, path, "task \"" + task.name + "\" is an all-reduce, and this placesim was built without "
                                                           "NCCL (CMake did not find nccl.h and libnccl)");
#else
    std::set<int> ordinals;
    size_t local = 0;
    for (DeviceId id : task.group) {
      const ClusterDevice& device = cluster.device(id);
      if (device.spec.kind != DeviceKind::kGpu) {
        throw InputError(where, path, "task \"" + task.name + "\" all-reduces over " + device.name.canonical() +
                                          ": the cuda backend runs all-reduces with NCCL between GPUs only");
      }
      if (device.node != rank) continue;
      ++local;
      if (device.name.index.value_or(0) >= device_count_ && !options_.share_gpus) {
        throw InputError(where, path, "task \"" + task.name + "\" all-reduces over " + device.name.canonical() +
                                          " but this machine has " + std::to_string(device_count_) + " CUDA GPU(s)");
      }
      ordinals.insert(ordinal(device));
    }
    if (ordinals.size() != local) {
      throw InputError(where, path, "task \"" + task.name + "\" all-reduces over " + std::to_string(local) +
                                        " GPUs of this machine but they map to " + std::to_string(ordinals.size()) +
                                        " GPU(s); NCCL needs one GPU per rank (--share-gpus cannot fold a group)");
    }
#endif
  }

  void prepare(const ExecutionPlan& plan, const Cluster& cluster) override {
    release();
    plan_ = &plan;
    cluster_ = &cluster;
    work_.assign(plan.tasks.size(), ComputeWork{});
    events_.assign(plan.tasks.size(), TaskEvents{});
    callbacks_.assign(plan.tasks.size(), Callback{});
    group_ = host_count(cluster, plan) > 1 ? host_group() : nullptr;
    rank_ = group_ ? group_->rank() : 0;
    role_ = task_roles(plan, cluster, rank_);
    runs_here_.assign(plan.tasks.size(), false);
    spans_hosts_.assign(plan.tasks.size(), false);
    remote_channel_of_.assign(plan.tasks.size(), -1);
    const std::map<std::vector<DeviceId>, int> spanning = spanning_groups(plan, cluster);
    const std::vector<size_t> position = topological_positions(plan);
    std::map<DeviceId, size_t> gemm_elements;
    std::map<std::pair<DeviceId, DeviceId>, double> largest;
    std::map<std::pair<int, bool>, int> remote_index;  // (peer rank, sends) -> index in remote_channels_
    for (const Task& task : plan.tasks) {
      const Role role = role_[task.id];
      if (role == Role::kRemote) continue;
      runs_here_[task.id] = true;
      if (role == Role::kSend || role == Role::kReceive) {
        const int peer = cluster.device(role == Role::kSend ? task.device : task.source).node;
        auto [it, added] = remote_index.emplace(std::pair{peer, role == Role::kSend}, int(remote_channels_.size()));
        if (added) {
          remote_channels_.push_back(std::make_unique<RemoteChannel>());
          remote_channels_.back()->peer = peer;
          remote_channels_.back()->sends = role == Role::kSend;
        }
        RemoteChannel& channel = *remote_channels_[it->second];
        channel.jobs.add(task.id);
        channel.largest_bytes = std::max(channel.largest_bytes, task.bytes);
        const ClusterDevice& local = cluster.device(role == Role::kSend ? task.source : task.device);
        if (local.spec.kind == DeviceKind::kGpu) channel.staging[ordinal(local)];
        remote_channel_of_[task.id] = it->second;
        continue;
      }
      if (task.kind == TaskKind::kCompute) {
        work_[task.id] = compute_work(task, plan.precision, cluster.device(task.device));
        const GemmShape& g = work_[task.id].gemm;
        size_t& elements = gemm_elements[task.device];
        elements = std::max({elements, size_t(g.m * g.k), size_t(g.k * g.n), size_t(g.m * g.n)});
      } else if (task.kind == TaskKind::kCollective) {
        spans_hosts_[task.id] = role == Role::kShared;
#ifdef PLACESIM_WITH_NCCL
        // An all-reduce over several hosts runs even with 0 bytes (1 float): it carries the
        // dependencies between them.
        if (task.group.size() > 1 && (task.bytes > 0 || spans_hosts_[task.id])) {
          NcclGroup& group = nccl_groups_[task.group];
          // All-gathers and reduce-scatters move whole parts of elements / N: at least one each.
          // An all-to-all runs out of place: its parts to send, then those it receives.
          const size_t floats = std::max(size_t(std::ceil(task.bytes / sizeof(float))), task.group.size());
          group.elements = std::max(group.elements, task.collective == CollectiveKind::kAllToAll ? 2 * floats : floats);
          group.spans_hosts = spans_hosts_[task.id];
          if (group.spans_hosts) group.id_tag = int(plan.tasks.size()) + spanning.at(task.group);
          if (group_) collectives_in_order_.add(task.id);
        }
#endif
      } else if (task.bytes > 0) {
        double& bytes = largest[{task.source, task.device}];
        bytes = std::max(bytes, task.bytes);
      }
    }
    unsigned next_cpu = 0;
    for (const auto& [id, elements] : gemm_elements) {
      const ClusterDevice& device = cluster.device(id);
      if (device.spec.kind == DeviceKind::kGpu) {
        Gpu& gpu = gpus_[id];
        gpu.ordinal = ordinal(device);
        gpu_allocate(gpu, elements);
      } else {
        auto& host = hosts_[id];
        host.first = std::make_unique<WorkerThread>(options_.pin_threads ? std::optional<unsigned>(next_cpu++ % usable_cpus())
                                                                         : std::nullopt);
        host.first->run_and_wait([&host] { host.second = std::make_unique<Workspace>(); });
        for (const Task& task : plan.tasks) {
          if (task.kind == TaskKind::kCompute && task.device == id && work_[task.id].kind == WorkKind::kGemm) {
            host.first->run_and_wait([&] { host.second->reserve(work_[task.id].gemm); });
          }
        }
      }
    }
    for (const auto& [pair, bytes] : largest) open_channel(pair.first, pair.second, bytes);
    for (auto& channel : remote_channels_) open_remote_channel(*channel, position);
#ifdef PLACESIM_WITH_NCCL
    // Every rank opens its groups in the map's order, the same on all: a group's ranks meet in
    // ncclCommInitRank without waiting for one another's other groups.
    for (auto& [members, group] : nccl_groups_) open_nccl_group(members, group);
    collectives_in_order_.seal(position);
#endif
    for (const Task& task : plan.tasks) {
      if (!runs_here_[task.id] || remote_channel_of_[task.id] >= 0) continue;  // host-timed
      int device = timing_device(task);
      if (device < 0) continue;
      check(cudaSetDevice(device), "cudaSetDevice");
      events_[task.id].device = device;
      check(cudaEventCreate(&events_[task.id].start), "cudaEventCreate");
      check(cudaEventCreate(&events_[task.id].end), "cudaEventCreate");
    }
    enqueue_ahead_ = options_.dispatch != GpuDispatch::kLoop && !group_ && can_enqueue_ahead(plan);
  }

  Timeline run_once() override {
    if (enqueue_ahead_) return run_enqueued_once();
    if (!group_) return run_plan_once(*plan_, cluster_->devices().size(), *this, source());
    for (auto& channel : remote_channels_) channel->jobs.reset();
    collectives_in_order_.reset();
    // Every host starts the run together; each run's clock starts at the barrier's exit.
    group_->barrier();
    Timeline timeline = run_plan_once(*plan_, cluster_->devices().size(), *this, source(), &runs_here_);
    {
      std::lock_guard<std::mutex> lock(remote_error_mutex_);
      if (!remote_error_.empty()) throw std::runtime_error(remote_error_);
    }
    merge_on_root(timeline, role_, spans_hosts_, *group_);
    return timeline;
  }

  void release() override {
    // The remote channels' threads first: they use the streams and buffers freed below.
    for (auto& channel : remote_channels_) channel->thread.reset();
    for (auto& channel : remote_channels_) {
      for (auto& [gpu, staging] : channel->staging) {
        cudaSetDevice(gpu);
        if (staging.stream) cudaStreamDestroy(staging.stream);
        if (staging.buffer) cudaFree(staging.buffer);
      }
      if (channel->pinned) cudaFreeHost(channel->pinned);
    }
    remote_channels_.clear();
    remote_channel_of_.clear();
    collectives_in_order_ = InOrderRelease{};
    remote_error_.clear();
    for (auto& [pair, channel] : channels_) {
      if (channel.stream) {
        cudaSetDevice(channel.stream_device);
        cudaStreamSynchronize(channel.stream);
        cudaStreamDestroy(channel.stream);
      }
      for (auto [pointer, host] : {std::pair{channel.from, channel.from_host}, std::pair{channel.to, channel.to_host}}) {
        if (!pointer || channel.stream_device < 0) continue;
        if (host) cudaFreeHost(pointer);
        else cudaFree(pointer);
      }
    }
    channels_.clear();
#ifdef PLACESIM_WITH_NCCL
    for (auto& [members, group] : nccl_groups_) close_nccl_group(&group);
    nccl_groups_.clear();
#endif
    for (auto& [id, gpu] : gpus_) gpu_free(gpu);
    gpus_.clear();
    hosts_.clear();
    for (auto& events : events_) {
      if (events.device < 0) continue;
      cudaSetDevice(events.device);
      cudaEventDestroy(events.start);
      cudaEventDestroy(events.end);
    }
    events_.clear();
    plan_ = nullptr;
  }

 private:
  int ordinal(const ClusterDevice& device) const { return device.name.index.value_or(0) % device_count_; }

  /// The GPU whose events time this task, or -1 for host-timed tasks.
  int timing_device(const Task& task) const {
    if (task.kind == TaskKind::kCompute) {
      auto it = gpus_.find(task.device);
      return it == gpus_.end() ? -1 : it->second.ordinal;
    }
#ifdef PLACESIM_WITH_NCCL
    if (task.kind == TaskKind::kCollective) {
      auto group = nccl_groups_.find(task.group);
      return group == nccl_groups_.end() ? -1 : group->second.ordinals.front();
    }
#endif
    if (task.kind == TaskKind::kCollective) return -1;
    auto it = channels_.find({task.source, task.device});
    return it == channels_.end() ? -1 : it->second.stream_device;
  }

#ifdef PLACESIM_WITH_NCCL
  /// The group's members on this host (cuda_nccl_group.h), then its communicators and buffers.
  void open_nccl_group(const std::vector<DeviceId>& members, NcclGroup& group) {
    NcclMembers where;
    where.group_size = int(members.size());
    where.root_host = cluster_->device(members.front()).node;
    where.this_host = rank_;
    for (size_t i = 0; i < members.size(); ++i) {
      const ClusterDevice& device = cluster_->device(members[i]);
      where.hosts.insert(device.node);
      if (device.node != rank_) continue;
      where.ordinals.push_back(ordinal(device));
      where.ranks.push_back(int(i));  // in the communicator: the member's index in the group
    }
    placesim::real::open_nccl_group(where, group_, &group);
  }

  void enqueue_collective(const Task& task) {
    enqueue_nccl_collective(nccl_groups_.at(task.group), task.collective, task.bytes, task.group.size(),
                            events_[task.id].start);
  }
#endif

  void* host_or_device_buffer(DeviceId id, size_t size, bool* host) {
    const ClusterDevice& device = cluster_->device(id);
    void* pointer = nullptr;
    *host = device.spec.kind != DeviceKind::kGpu;
    if (*host) {
      check(cudaMallocHost(&pointer, size), "pinned host buffer");
    } else {
      check(cudaSetDevice(ordinal(device)), "cudaSetDevice");
      check(cudaMalloc(&pointer, size), "transfer buffer");
    }
    return pointer;
  }

  void open_channel(DeviceId from, DeviceId to, double bytes) {
    Channel& channel = channels_[{from, to}];
    const ClusterDevice& source = cluster_->device(from);
    const ClusterDevice& target = cluster_->device(to);
    channel.size = size_t(std::clamp(bytes, 1.0, double(256u << 20)));
    if (source.spec.kind != DeviceKind::kGpu && target.spec.kind != DeviceKind::kGpu) {
      channel.host_thread = std::make_unique<WorkerThread>(std::nullopt);
      channel.host_thread->run_and_wait([&channel, bytes] { channel.host_buffers = std::make_unique<CopyBuffers>(bytes); });
      return;
    }
    channel.from = host_or_device_buffer(from, channel.size, &channel.from_host);
    channel.to = host_or_device_buffer(to, channel.size, &channel.to_host);
    channel.from_device = channel.from_host ? -1 : ordinal(source);
    channel.to_device = channel.to_host ? -1 : ordinal(target);
    channel.stream_device = channel.from_host ? channel.to_device : channel.from_device;
    check(cudaSetDevice(channel.stream_device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&channel.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (!channel.from_host && !channel.to_host && channel.from_device != channel.to_device) {
      int can_access = 0;
      cudaDeviceCanAccessPeer(&can_access, channel.from_device, channel.to_device);
      if (can_access) {
        cudaError_t status = cudaDeviceEnablePeerAccess(channel.to_device, 0);
        if (status != cudaErrorPeerAccessAlreadyEnabled) check(status, "cudaDeviceEnablePeerAccess");
        cudaGetLastError();
      }
    }
  }

  /// Pinned host memory, a staging stream and buffer per local GPU, the jobs' order, the thread.
  void open_remote_channel(RemoteChannel& channel, const std::vector<size_t>& position) {
    channel.jobs.seal(position);
    channel.size = size_t(std::clamp(channel.largest_bytes, 1.0, double(kMessageBytes)));
    check(cudaMallocHost(&channel.pinned, channel.size), "pinned host buffer");
    for (auto& [gpu, staging] : channel.staging) {
      check(cudaSetDevice(gpu), "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&staging.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaMalloc(&staging.buffer, channel.size), "transfer buffer");
    }
    channel.thread = std::make_unique<WorkerThread>(std::nullopt);
  }

  /// One cross-host transfer, on its channel's thread: chunks of at most the pinned buffer,
  /// each copied off the GPU and sent, or received and copied onto the GPU (a CPU end sends or
  /// receives the pinned buffer itself). At least one message, even for 0 bytes. The MPI tag is
  /// the task id; messages of one tag between two ranks arrive in order.
  void move_remote(RemoteChannel& channel, const Task& task) {
    const ClusterDevice& local = cluster_->device(channel.sends ? task.source : task.device);
    RemoteChannel::Staging* staging = nullptr;
    if (local.spec.kind == DeviceKind::kGpu) {
      staging = &channel.staging.at(ordinal(local));
      check(cudaSetDevice(ordinal(local)), "cudaSetDevice");
    }
    const int tag = int(task.id);
    size_t remaining = size_t(std::llround(std::max(0.0, task.bytes)));
    do {
      const size_t chunk = std::min(remaining, channel.size);
      if (channel.sends) {
        if (staging && chunk > 0) {
          check(cudaMemcpyAsync(channel.pinned, staging->buffer, chunk, cudaMemcpyDeviceToHost, staging->stream),
                "cudaMemcpyAsync");
          check(cudaStreamSynchronize(staging->stream), "cudaStreamSynchronize");
        }
        group_->send(channel.peer, tag, channel.pinned, chunk);
      } else {
        group_->receive(channel.peer, tag, channel.pinned, chunk);
        if (staging && chunk > 0) {
          check(cudaMemcpyAsync(staging->buffer, channel.pinned, chunk, cudaMemcpyHostToDevice, staging->stream),
                "cudaMemcpyAsync");
          check(cudaStreamSynchronize(staging->stream), "cudaStreamSynchronize");
        }
      }
      remaining -= chunk;
    } while (remaining > 0);
  }

  void begin_run(double origin_seconds) override {
    origin_ = origin_seconds;
    for (auto& [id, gpu] : gpus_) {
      check(cudaSetDevice(gpu.ordinal), "cudaSetDevice");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      // The device is idle, so the origin event completes as soon as it is recorded.
      gpu.origin_seconds = monotonic_seconds() - origin_;
      check(cudaEventRecord(gpu.origin, gpu.compute), "cudaEventRecord");
    }
    for (auto& [pair, channel] : channels_) {
      if (channel.stream_device >= 0) give_origin(channel.stream_device, channel.stream);
    }
#ifdef PLACESIM_WITH_NCCL
    for (auto& [members, group] : nccl_groups_) give_origin(group.ordinals.front(), group.streams.front());
#endif
  }

  /// An origin event on `stream` of a GPU that computes nothing (its tasks are copies or
  /// all-reduces), so that their events can be read on the run's clock.
  void give_origin(int stream_device, cudaStream_t stream) {
    if (gpu_for_ordinal(stream_device)) return;
    Gpu& gpu = copy_only_origins_[stream_device];
    gpu.ordinal = stream_device;
    check(cudaSetDevice(gpu.ordinal), "cudaSetDevice");
    if (!gpu.origin) check(cudaEventCreate(&gpu.origin), "cudaEventCreate");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    gpu.origin_seconds = monotonic_seconds() - origin_;
    check(cudaEventRecord(gpu.origin, stream), "cudaEventRecord");
  }

  const Gpu* gpu_for_ordinal(int ordinal) const {
    for (const auto& [id, gpu] : gpus_) {
      if (gpu.ordinal == ordinal) return &gpu;
    }
    auto it = copy_only_origins_.find(ordinal);
    return it == copy_only_origins_.end() ? nullptr : &it->second;
  }

  bool is_empty(const Task& task) const override {
    // A cross-host transfer always sends a message, even of 0 bytes: it carries the dependency.
    if (!remote_channel_of_.empty() && remote_channel_of_[task.id] >= 0) return false;
    if (task.kind == TaskKind::kCompute) return work_[task.id].kind == WorkKind::kNone;
    if (task.kind == TaskKind::kCollective) return task.group.size() < 2 || !(task.bytes > 0 || spans_hosts_[task.id]);
    return !(task.bytes > 0) || task.source == task.device;
  }

  void start_compute(const Task& task, CompletionQueue& done) override {
    auto gpu = gpus_.find(task.device);
    if (gpu == gpus_.end()) {
      auto& host = hosts_.at(task.device);
      Workspace* workspace = host.second.get();
      const ComputeWork* work = &work_[task.id];
      host.first->submit([workspace, work, id = task.id, &done, origin = origin_] {
        workspace->run(*work);
        done.push({id, monotonic_seconds() - origin});
      });
      return;
    }
    Gpu& g = gpu->second;
    check(cudaSetDevice(g.ordinal), "cudaSetDevice");
    check(cudaEventRecord(events_[task.id].start, g.compute), "cudaEventRecord");
    gpu_enqueue(g, work_[task.id]);
    enqueue_completion(task.id, g.compute, done);
  }

  void start_transfer(const Task& task, CompletionQueue& done) override {
#ifdef PLACESIM_WITH_NCCL
    if (task.kind == TaskKind::kCollective) {
      auto issue = [this, &done](TaskId id) {
        const Task& ready = plan_->tasks[id];
        enqueue_collective(ready);
        enqueue_completion(id, nccl_groups_.at(ready.group).streams.front(), done);
      };
      // On several hosts, every rank issues its all-reduces in the plan's topological order.
      if (group_) collectives_in_order_.mark_ready(task.id, issue);
      else issue(task.id);
      return;
    }
#endif
    if (remote_channel_of_[task.id] >= 0) {
      RemoteChannel& channel = *remote_channels_[remote_channel_of_[task.id]];
      channel.jobs.mark_ready(task.id, [this, &channel, &done](TaskId id) {
        channel.thread->submit([this, &channel, &done, id, origin = origin_] {
          try {
            move_remote(channel, plan_->tasks[id]);
          } catch (const std::exception& error) {
            std::lock_guard<std::mutex> lock(remote_error_mutex_);
            if (remote_error_.empty()) remote_error_ = "transfer \"" + plan_->tasks[id].name + "\": " + error.what();
          }
          done.push({id, monotonic_seconds() - origin});
        });
      });
      return;
    }
    Channel& channel = channels_.at({task.source, task.device});
    if (channel.stream_device < 0) {
      CopyBuffers* buffers = channel.host_buffers.get();
      channel.host_thread->submit([buffers, bytes = task.bytes, id = task.id, &done, origin = origin_] {
        buffers->copy(bytes);
        done.push({id, monotonic_seconds() - origin});
      });
      return;
    }
    check(cudaSetDevice(channel.stream_device), "cudaSetDevice");
    check(cudaEventRecord(events_[task.id].start, channel.stream), "cudaEventRecord");
    enqueue_copy(channel, task.bytes);
    enqueue_completion(task.id, channel.stream, done);
  }

  /// Enqueues `bytes` of copies on the channel's stream, continuing around its buffers.
  static void enqueue_copy(Channel& channel, double bytes) {
    size_t remaining = size_t(std::llround(bytes));
    while (remaining > 0) {
      size_t chunk = std::min(remaining, channel.size - channel.offset);
      char* to = static_cast<char*>(channel.to) + channel.offset;
      const char* from = static_cast<const char*>(channel.from) + channel.offset;
      if (!channel.from_host && !channel.to_host) {
        check(cudaMemcpyPeerAsync(to, channel.to_device, from, channel.from_device, chunk, channel.stream),
              "cudaMemcpyPeerAsync");
      } else {
        check(cudaMemcpyAsync(to, from, chunk, cudaMemcpyDefault, channel.stream), "cudaMemcpyAsync");
      }
      remaining -= chunk;
      channel.offset = (channel.offset + chunk) % channel.size;
    }
  }

  /// True when every task with work runs on a GPU stream (GPU compute, copies touching a GPU):
  /// the whole plan can then be enqueued ahead, as a framework's executor does.
  bool can_enqueue_ahead(const ExecutionPlan& plan) const {
    for (const Task& task : plan.tasks) {
      if (is_empty(task)) continue;
      // Every member of an all-reduce would have to wait for its own deps: dispatched by the loop.
      if (task.kind == TaskKind::kCollective) return false;
      if (task.kind == TaskKind::kCompute ? !gpus_.count(task.device)
                                          : channels_.at({task.source, task.device}).stream_device < 0) {
        return false;
      }
    }
    return true;
  }

  /// The stream a non-empty task runs on (compute stream of its GPU, or its pair's copy stream).
  cudaStream_t stream_of(const Task& task) {
    if (task.kind == TaskKind::kCompute) return gpus_.at(task.device).compute;
    return channels_.at({task.source, task.device}).stream;
  }

  /// One execution with every task enqueued ahead: tasks are taken in a topological order (the
  /// ready task with the lowest id first, as the engine breaks ties); each waits for its deps'
  /// end events on other streams (cudaStreamWaitEvent; same-stream order needs no wait), then
  /// records a start event, its work and an end event. The host never waits between tasks, so
  /// the GPU runs them back to back; only the launch cost of each call remains. Empty tasks
  /// (variables, NoOps) end when their last dep ends.
  Timeline run_enqueued_once() {
    const ExecutionPlan& plan = *plan_;
    const size_t n = plan.tasks.size();
    Timeline timeline;
    timeline.source = source();
    timeline.tasks.resize(n);
    SuccessorLists successors = plan.successors();
    std::vector<size_t> unfinished_deps(n);
    std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>> ready;
    for (TaskId id = 0; id < n; ++id) {
      unfinished_deps[id] = plan.tasks[id].deps.size();
      if (unfinished_deps[id] == 0) ready.push(id);
    }
    // For each task, the non-empty tasks whose end events mark its completion.
    std::vector<std::vector<TaskId>> completed_by(n);
    std::vector<cudaStream_t> streams(n, nullptr);
    std::vector<TaskId> order;
    order.reserve(n);
    begin_run(monotonic_seconds());
    while (!ready.empty()) {
      TaskId id = ready.top();
      ready.pop();
      order.push_back(id);
      const Task& task = plan.tasks[id];
      std::vector<TaskId> marks;
      for (TaskId dep : task.deps) marks.insert(marks.end(), completed_by[dep].begin(), completed_by[dep].end());
      std::sort(marks.begin(), marks.end());
      marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
      if (is_empty(task)) {
        completed_by[id] = std::move(marks);
      } else {
        cudaStream_t stream = stream_of(task);
        check(cudaSetDevice(events_[id].device), "cudaSetDevice");
        for (TaskId mark : marks) {
          if (streams[mark] != stream) check(cudaStreamWaitEvent(stream, events_[mark].end, 0), "cudaStreamWaitEvent");
        }
        check(cudaEventRecord(events_[id].start, stream), "cudaEventRecord");
        if (task.kind == TaskKind::kCompute) gpu_enqueue(gpus_.at(task.device), work_[id]);
        else enqueue_copy(channels_.at({task.source, task.device}), task.bytes);
        check(cudaEventRecord(events_[id].end, stream), "cudaEventRecord");
        streams[id] = stream;
        completed_by[id] = {id};
      }
      for (TaskId next : successors[id]) {
        if (--unfinished_deps[next] == 0) ready.push(next);
      }
    }
    if (order.size() != n) throw std::runtime_error("execution stalled: the plan's dependencies contain a cycle");
    for (TaskId id : order) {
      if (!streams[id]) continue;
      check(cudaSetDevice(events_[id].device), "cudaSetDevice");
      check(cudaEventSynchronize(events_[id].end), "cudaEventSynchronize");
    }
    for (TaskId id = 0; id < n; ++id) timeline.tasks[id].end_seconds = streams[id] ? NAN : 0.0;
    finish_run(timeline);  // event times of every non-empty task (the NaN ones)
    for (TaskId id : order) {
      if (streams[id]) continue;
      double end = 0;
      for (TaskId dep : plan.tasks[id].deps) end = std::max(end, timeline.tasks[dep].end_seconds);
      timeline.tasks[id] = {end, end};
    }
    return timeline;
  }

  void enqueue_completion(TaskId id, cudaStream_t stream, CompletionQueue& done) {
    check(cudaEventRecord(events_[id].end, stream), "cudaEventRecord");
    callbacks_[id] = {&done, id};
    check(cudaLaunchHostFunc(stream, on_task_done, &callbacks_[id]), "cudaLaunchHostFunc");
  }

  void finish_run(Timeline& timeline) override {
    for (TaskId id = 0; id < events_.size(); ++id) {
      const TaskEvents& events = events_[id];
      if (events.device < 0 || std::isnan(timeline.tasks[id].end_seconds) == false) continue;
      const Gpu* gpu = gpu_for_ordinal(events.device);
      if (!gpu) continue;
      check(cudaSetDevice(events.device), "cudaSetDevice");
      float start_ms = 0, end_ms = 0;
      check(cudaEventElapsedTime(&start_ms, gpu->origin, events.start), "cudaEventElapsedTime");
      check(cudaEventElapsedTime(&end_ms, gpu->origin, events.end), "cudaEventElapsedTime");
      timeline.tasks[id] = {gpu->origin_seconds + start_ms * 1e-3, gpu->origin_seconds + end_ms * 1e-3};
    }
  }

  int device_count_ = 0;
  bool enqueue_ahead_ = false;
  // A plan over several hosts (one MPI rank per host); null group_ and every role kLocal on one.
  HostGroup* group_ = nullptr;
  int rank_ = 0;
  std::vector<Role> role_;
  std::vector<bool> runs_here_;    // role != kRemote
  std::vector<bool> spans_hosts_;  // all-reduces whose group is on several hosts
  std::vector<int> remote_channel_of_;  // per task: index in remote_channels_, or -1
  std::vector<std::unique_ptr<RemoteChannel>> remote_channels_;
  InOrderRelease collectives_in_order_;  // several hosts: the all-reduces this rank issues
  std::mutex remote_error_mutex_;
  std::string remote_error_;  // the first failure of a remote channel's thread in this run
  const ExecutionPlan* plan_ = nullptr;
  const Cluster* cluster_ = nullptr;
  double origin_ = 0;
  std::vector<ComputeWork> work_;
  std::vector<TaskEvents> events_;
  std::vector<Callback> callbacks_;
  std::map<DeviceId, Gpu> gpus_;
  std::map<int, Gpu> copy_only_origins_;
  std::map<DeviceId, std::pair<std::unique_ptr<WorkerThread>, std::unique_ptr<Workspace>>> hosts_;
  std::map<std::pair<DeviceId, DeviceId>, Channel> channels_;
#ifdef PLACESIM_WITH_NCCL
  std::map<std::vector<DeviceId>, NcclGroup> nccl_groups_;
#endif
};

}  // namespace

int require_cuda_devices_here() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0) {
    throw InputError("--backend cuda", "", "no NVIDIA driver found: this machine has no usable CUDA GPU (use --backend cpu)");
  }
  if (status == cudaErrorInsufficientDriver) {
    throw InputError("--backend cuda", "", "the NVIDIA driver is too old for this CUDA runtime (driver supports CUDA " +
                                               std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                                               ", placesim was built with " + std::to_string(runtime / 1000) + "." +
                                               std::to_string(runtime % 1000 / 10) + ")");
  }
  if (status == cudaErrorNoDevice || (status == cudaSuccess && count == 0)) {
    throw InputError("--backend cuda", "", "no CUDA GPU found on this machine (use --backend cpu)");
  }
  if (status != cudaSuccess) {
    throw InputError("--backend cuda", "", std::string("cannot use CUDA: ") + cudaGetErrorString(status) +
                                               " (is the NVIDIA driver loaded? use --backend cpu otherwise)");
  }
  return count;
}

std::unique_ptr<Executor> make_cuda_executor_here(ExecutionOptions options) {
  int count = require_cuda_devices_here();
  return std::make_unique<CudaExecutor>(std::move(options), count);
}

}  // namespace placesim::real

// The module's entry point (cuda_module.cpp); the module is compiled with hidden visibility,
// so this is all it exports.
extern "C" __attribute__((visibility("default"))) void placesim_cuda_module_functions(
    placesim::real::CudaModuleFunctions* functions) {
  functions->require_cuda_devices = &placesim::real::require_cuda_devices_here;
  functions->make_cuda_executor = &placesim::real::make_cuda_executor_here;
  functions->measure_cuda = &placesim::real::measure_cuda_here;
}
