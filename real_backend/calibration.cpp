#include "real_backend/calibration.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "real_backend/runtime/cpu_kernels.h"
#include "real_backend/executor_factory.h"
#include "real_backend/runtime/scheduler.h"
#include "real_backend/runtime/speed_probe.h"
#include "real_backend/runtime/worker_thread.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

/// A cluster of `count` CPU devices with `spec`, joined through a switch by `link` (for the
/// executor's dispatch and copy measurements).
Cluster measurement_cluster(const DeviceSpec& spec, int count, const LinkSpec& link) {
  Cluster cluster;
  cluster.name = "calibration";
  VertexId memory = 0;
  if (count > 1) memory = cluster.add_switch("memory");
  for (int i = 0; i < count; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kCpu, i};
    device.spec = spec;
    DeviceId id = cluster.add_device(device, "CPU:" + std::to_string(i));
    if (count > 1) cluster.add_link(cluster.device(id).vertex, memory, link);
  }
  return cluster;
}

ExecutionPlan empty_plan(const Cluster& cluster, const std::string& name) {
  ExecutionPlan plan;
  plan.name = name;
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});
  return plan;
}

TaskId append(ExecutionPlan& plan, Task task) {
  task.id = plan.tasks.size();
  if (task.id > 0) task.deps = {task.id - 1};  // a chain: one task at a time
  task.name = "t" + std::to_string(task.id);
  plan.tasks.push_back(task);
  return task.id;
}

/// Median makespan of the plan on the CPU executor, divided by its task count.
double seconds_per_task(const ExecutionPlan& plan, const Cluster& cluster, bool quick) {
  ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = quick ? 3 : 7;
  auto executor = make_executor(Backend::kCpu, options);
  executor->simulate(plan, cluster);
  return median(executor->timed_makespans()) / static_cast<double>(plan.tasks.size());
}

DeviceSpec provisional_spec(const CpuMeasurements& measured) {
  DeviceSpec spec;
  spec.id = "calibration";
  spec.name = measured.cpu_name;
  spec.kind = DeviceKind::kCpu;
  spec.peak_flops_per_second[Precision::kFp32] = measured.sgemm_best_flops_per_second;
  spec.memory_bytes = measured.physical_memory_bytes;
  spec.memory_bandwidth_bytes_per_second = measured.stream_bytes_per_second;
  spec.default_compute_efficiency = 1.0;
  spec.memory_efficiency = 1.0;
  return spec;
}

}  // namespace

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &local);
  return text;
}

CpuMeasurements measure_cpu(const Progress& progress, bool quick) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  CpuMeasurements measured;
  measured.date = today();
  measured.cpu_name = cpu_model_name();
  measured.cores = usable_cpus();
  measured.physical_memory_bytes =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  say("calibrating " + measured.cpu_name + " (" + std::to_string(measured.cores) + " usable CPUs)");

  const double min_seconds = quick ? 0.02 : 0.06;
  WorkerThread core0(0u);  // pinned like the executor's first device
  const std::vector<int64_t> sides = quick ? std::vector<int64_t>{64, 128, 256, 512}
                                           : std::vector<int64_t>{32, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  core0.run_and_wait([&] {
    Workspace workspace;
    for (int64_t side : sides) {
      GemmShape shape{side, side, side, 1};
      workspace.gemm(shape);  // allocate and warm up
      double seconds = median_call_seconds([&] { workspace.gemm(shape); }, min_seconds, 5);
      measured.sgemm.push_back({static_cast<double>(side), shape.flops() / seconds});
      say("  sgemm " + std::to_string(side) + "^3: " + format("%.1f GFLOP/s", shape.flops() / seconds / 1e9));
    }
  });
  const MachineSpeed speed = probe_machine_speed(min_seconds);
  measured.arithmetic_flops_per_second = speed.arithmetic_flops_per_second;
  say("  multiply-add loop: " + format("%.1f GFLOP/s", measured.arithmetic_flops_per_second / 1e9));
  measured.stream_bytes_per_second = speed.stream_bytes_per_second;
  say("  triad: " + format("%.2f GB/s", measured.stream_bytes_per_second / 1e9));
  std::vector<double> rates;
  for (const auto& point : measured.sgemm) rates.push_back(point.value);
  measured.sgemm_best_flops_per_second = *std::max_element(rates.begin(), rates.end());
  measured.sgemm_median_flops_per_second = median(rates);

  // Dispatch: a chain of tasks that each stream one float triple (12 bytes), so the time per
  // task is the executor's hand-off from the dispatch loop to a worker and back.
  DeviceSpec spec = provisional_spec(measured);
  LinkSpec provisional_link{"calibration", 1e10, 1e-6};
  {
    Cluster cluster = measurement_cluster(spec, 1, provisional_link);
    ExecutionPlan plan = empty_plan(cluster, "dispatch");
    Task task;
    task.kind = TaskKind::kCompute;
    task.op_kind = OpKind::kElementwise;
    task.memory_bytes = 12;
    for (int i = 0; i < (quick ? 500 : 2000); ++i) append(plan, task);
    measured.dispatch_overhead_seconds = seconds_per_task(plan, cluster, quick);
    say("  dispatch overhead: " + format("%.2f us per task", measured.dispatch_overhead_seconds * 1e6));
  }

  // Copies between two devices' threads, through the executor's copy channel.
  {
    Cluster cluster = measurement_cluster(spec, 2, provisional_link);
    for (double bytes : {4096.0, 262144.0, 4194304.0, 33554432.0}) {
      ExecutionPlan plan = empty_plan(cluster, "copies");
      Task task;
      task.kind = TaskKind::kTransfer;
      task.phase = Phase::kTransfer;
      task.source = 0;
      task.device = 1;
      task.bytes = bytes;
      int count = static_cast<int>(std::clamp(64.0 * 1048576.0 / bytes, quick ? 4.0 : 8.0, quick ? 200.0 : 1000.0));
      for (int i = 0; i < count; ++i) append(plan, task);
      double seconds = seconds_per_task(plan, cluster, quick);
      measured.copies.push_back({bytes, seconds});
      say("  copy " + format("%.0f KiB", bytes / 1024) + ": " + format("%.2f us", seconds * 1e6));
    }
    const RatePoint& small = measured.copies.front();
    const RatePoint& medium = measured.copies[1];
    const RatePoint& large = measured.copies.back();
    measured.copy_bytes_per_second = (large.size - medium.size) / std::max(1e-9, large.value - medium.value);
    measured.copy_latency_seconds = std::max(0.0, small.value - small.size / measured.copy_bytes_per_second);
    say("  copy bandwidth " + format("%.2f GB/s", measured.copy_bytes_per_second / 1e9) + ", latency " +
        format("%.2f us", measured.copy_latency_seconds * 1e6));
  }
  return measured;
}

CalibratedProfiles cpu_profiles(const CpuMeasurements& m, const std::string& id) {
  const std::string by = "measured by placesim calibrate on " + m.date + " (backend cpu, OpenBLAS, one thread): ";
  const double matmul_efficiency = m.sgemm_median_flops_per_second / m.sgemm_best_flops_per_second;
  const double other_efficiency = std::min(1.0, m.arithmetic_flops_per_second / m.sgemm_best_flops_per_second);
  Json sweep = Json::array();
  for (const auto& point : m.sgemm) sweep.push_back({{"side", point.size}, {"flops_per_second", point.value}});
  Json copies = Json::array();
  for (const auto& point : m.copies) copies.push_back({{"bytes", point.size}, {"seconds", point.value}});
  const double devices = std::max(1u, m.cores);

  CalibratedProfiles out;
  out.id = id;
  out.device = {
      {"id", id},
      {"name", m.cpu_name + " (one core)"},
      {"kind", "cpu"},
      {"peak_flops_per_second", {{"fp32", m.sgemm_best_flops_per_second}}},
      {"memory_bytes", std::floor(m.physical_memory_bytes / devices)},
      {"memory_bandwidth_bytes_per_second", m.stream_bytes_per_second},
      {"kernel_launch_overhead_seconds", m.dispatch_overhead_seconds},
      {"compute_efficiency", {{"matmul", matmul_efficiency}, {"conv", matmul_efficiency}, {"default", other_efficiency}}},
      {"memory_efficiency", 1.0},
      {"sources",
       {{"peak_flops_per_second", by + "best single-thread square sgemm rate over sides " +
                                      std::to_string(static_cast<int>(m.sgemm.front().size)) + ".." +
                                      std::to_string(static_cast<int>(m.sgemm.back().size)) +
                                      " (median time per call); the executor's GEMM kernel"},
        {"memory_bytes", by + "physical memory (sysconf) divided evenly between the " +
                             std::to_string(static_cast<int>(devices)) + " CPU devices of the cluster"},
        {"memory_bandwidth_bytes_per_second",
         by + "triad a = b + s*c, one pass over the executor's 192 MiB ring, 12 bytes per element, one thread"},
        {"kernel_launch_overhead_seconds",
         by + "median time per task of a chain of near-empty tasks run by the CPU executor (dispatch loop to "
              "worker thread and back)"},
        {"compute_efficiency",
         by + "matmul/conv: median sgemm rate over the size sweep / best rate; default (every other kind): "
              "the executor's multiply-add loop rate / best sgemm rate"},
        {"memory_efficiency", by + "1.0: memory_bandwidth_bytes_per_second is already the achieved triad rate"}}},
      {"description",
       {{"note", "written by placesim calibrate; the numbers describe what the CPU executor runs on this machine"},
        {"sgemm_sweep", sweep},
        {"arithmetic_flops_per_second", m.arithmetic_flops_per_second},
        {"copies", copies}}}};

  const std::string link_type = id + "-memcpy";
  out.link_types.emplace_back(link_type, Json{
      {"bandwidth_bytes_per_second", m.copy_bytes_per_second},
      {"latency_seconds", m.copy_latency_seconds / 2},
      {"description", "memcpy between two CPU devices' buffers on the CPU executor's copy thread; one hop of two "
                      "(device -> memory switch -> device)"},
      {"sources",
       {{"bandwidth_bytes_per_second",
         by + "(32 MiB - 256 KiB) / (time of a 32 MiB copy - time of a 256 KiB copy), chains of copies"},
        {"latency_seconds", by + "half of (time of a 4 KiB copy - 4 KiB / bandwidth): a route crosses two hops"}}}});

  Json devices_json = Json::array();
  Json links = Json::array();
  for (unsigned i = 0; i < static_cast<unsigned>(devices); ++i) {
    std::string name = "CPU:" + std::to_string(i);
    devices_json.push_back({{"name", name}, {"profile", id}});
    if (devices > 1) links.push_back({{"endpoints", {name, "memory"}}, {"type", link_type}});
  }
  Json node = {{"devices", devices_json}, {"nic", "CPU:0"}};
  if (devices > 1) {
    node["switches"] = Json::array({"memory"});
    node["links"] = links;
  }
  out.cluster = {{"id", id},
                 {"description", "this machine as the CPU executor sees it: one CPU device per usable core (" +
                                     m.cpu_name + "), calibrated on " + m.date},
                 {"node", node},
                 {"nodes", 1},
                 {"sources", {{"topology", by + "one device per CPU the process may use (sched_getaffinity)"}}}};
  return out;
}

CalibratedProfiles cuda_profiles(const CudaMeasurements& m, const CpuMeasurements& host, const std::string& id) {
  const std::string by = "measured by placesim calibrate on " + host.date + " (backend cuda, " + m.name + "): ";
  Json gemm_curve = Json::array();
  for (const auto& [flops, rate] : m.sgemm_rate_by_flops) gemm_curve.push_back({flops, rate / m.sgemm_flops_per_second});
  CalibratedProfiles out;
  out.id = id;
  out.device = {
      {"id", id},
      {"name", m.name},
      {"kind", "gpu"},
      {"peak_flops_per_second", {{"fp32", m.sgemm_flops_per_second}}},
      {"memory_bytes", m.memory_bytes},
      {"memory_bandwidth_bytes_per_second", m.stream_bytes_per_second},
      {"kernel_launch_overhead_seconds", m.launch_overhead_seconds},
      {"compute_efficiency",
       {{"matmul", m.sgemm_typical_flops_per_second / m.sgemm_flops_per_second},
        {"conv", m.sgemm_typical_flops_per_second / m.sgemm_flops_per_second},
        {"default", 1.0}}},
      {"gemm_efficiency_by_flops", gemm_curve},
      {"memory_efficiency", 1.0},
      {"compute_capability", m.compute_capability},
      {"pci_bus_id", m.pci_bus_id},
      {"sources",
       {{"peak_flops_per_second", by + "best cublasSgemm rate over a square size sweep (CUDA events)"},
        {"memory_bytes", by + "cudaDeviceProp::totalGlobalMem"},
        {"memory_bandwidth_bytes_per_second", by + "the executor's triad kernel over 3 x 256 MiB"},
        {"kernel_launch_overhead_seconds", by + "median time per task of a chain of 1000 near-empty kernels enqueued "
                                                "ahead by the CUDA executor (launch cost and gap between back-to-back "
                                                "kernels)"},
        {"compute_efficiency", by + "matmul/conv: median sgemm rate over the sweep / best rate; default 1.0: "
                                    "non-GEMM tasks run the triad kernel (memory-bound)"},
        {"gemm_efficiency_by_flops", by + "cublasSgemm rate / best rate for each square side 256 * 2^(i/2), "
                                          "i = 0..10 (FLOPs = 2 side^3), CUDA events, median of 5 calls"},
        {"memory_efficiency", by + "1.0: the bandwidth is already the achieved triad rate"}}}};
  const std::string pcie = id + "-pcie", peer = id + "-peer";
  out.link_types.emplace_back(
      pcie, Json{{"bandwidth_bytes_per_second", m.host_to_device_bytes_per_second},
                 {"latency_seconds", m.host_to_device_latency_seconds},
                 {"description", "pinned host memory to GPU, cudaMemcpyAsync on a copy stream"},
                 {"sources", {{"bandwidth_bytes_per_second", by + "64 MiB pinned host-to-device copies"},
                              {"latency_seconds", by + "4 KiB copy time minus 4 KiB / bandwidth"}}}});
  Json devices = Json::array({{{"name", "CPU:0"}, {"profile", id + "-host"}}});
  Json links = Json::array();
  for (int i = 0; i < m.device_count; ++i) {
    std::string gpu = "GPU:" + std::to_string(i);
    devices.push_back({{"name", gpu}, {"profile", id}});
    links.push_back({{"endpoints", {"CPU:0", gpu}}, {"type", pcie}});
  }
  if (m.device_count > 1 && m.peer_bytes_per_second > 0) {
    out.link_types.emplace_back(
        peer, Json{{"bandwidth_bytes_per_second", m.peer_bytes_per_second},
                   {"latency_seconds", m.peer_latency_seconds},
                   {"description", "GPU to GPU, cudaMemcpyPeerAsync"},
                   {"sources", {{"bandwidth_bytes_per_second", by + "64 MiB GPU 0 -> GPU 1 copies"},
                                {"latency_seconds", by + "4 KiB copy time minus 4 KiB / bandwidth"}}}});
    for (int i = 0; i < m.device_count; ++i) {
      for (int j = i + 1; j < m.device_count; ++j) {
        links.push_back({{"endpoints", {"GPU:" + std::to_string(i), "GPU:" + std::to_string(j)}}, {"type", peer}});
      }
    }
  }
  out.cluster = {{"id", id},
                 {"description", "this machine's " + std::to_string(m.device_count) + " x " + m.name +
                                     " and its host CPU, calibrated on " + host.date},
                 {"node", {{"devices", devices}, {"links", links}, {"nic", "CPU:0"}}},
                 {"nodes", 1},
                 {"sources", {{"topology", by + "every GPU cudaGetDeviceCount reports, linked to the host; "
                                                "peer links measured between GPU 0 and GPU 1 and assumed alike"}}}};
  return out;
}

void write_profile_directory(const std::filesystem::path& output, const CalibratedProfiles& profiles,
                             const std::vector<std::pair<std::string, Json>>& extra_devices,
                             const std::filesystem::path& bundled_root) {
  namespace fs = std::filesystem;
  const fs::path directory = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    throw InputError("--output", "", "cannot write \"" + output.string() + "\": no such directory \"" +
                                         directory.string() + "\"");
  }
  if (output.extension() != ".json") {
    throw InputError("--output", "", "expected a .json file name (DIR/NAME.json), got \"" + output.string() + "\"");
  }
  Json links;
  const fs::path links_path = directory / "links.json";
  links = parse_json_file(fs::is_regular_file(links_path, error) ? links_path : bundled_root / "links.json");
  for (const auto& [type, entry] : profiles.link_types) links[type] = entry;

  fs::create_directories(directory / "devices");
  fs::create_directories(directory / "clusters");
  for (const char* folder : {"devices", "clusters"}) {
    for (const auto& entry : fs::directory_iterator(bundled_root / folder, error)) {
      fs::path target = directory / folder / entry.path().filename();
      if (entry.path().extension() == ".json" && !fs::exists(target, error)) {
        fs::copy_file(entry.path(), target, error);
      }
    }
  }
  for (const auto& [device_id, device] : extra_devices) {
    write_file_atomically(directory / "devices" / (device_id + ".json"), device.dump(2) + "\n");
  }
  write_file_atomically(directory / "devices" / (profiles.id + ".json"), profiles.device.dump(2) + "\n");
  write_file_atomically(links_path, links.dump(2) + "\n");
  write_file_atomically(directory / "clusters" / (profiles.id + ".json"), profiles.cluster.dump(2) + "\n");
  if (fs::absolute(output) != fs::absolute(directory / "clusters" / (profiles.id + ".json"))) {
    write_file_atomically(output, profiles.cluster.dump(2) + "\n");
  }
}

}  // namespace placesim::real
