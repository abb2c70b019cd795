#include "sim/cluster/cluster_json.h"

#include <map>

#include "sim/cluster/collective_profile.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/core/precision_values_json.h"

namespace placesim {

Json write_device_profile(const DeviceSpec& spec) {
  const Json peaks = precision_values_json(spec.peak_flops_per_second);
  Json efficiency = {{"default", spec.default_compute_efficiency}};
  for (const auto& [kind, value] : spec.compute_efficiency) efficiency[to_string(kind)] = value;
  std::string kind = spec.kind == DeviceKind::kCpu ? "cpu" : spec.kind == DeviceKind::kGpu ? "gpu" : "tpu";
  std::string cited = "hardware_profiles/devices/" + spec.id + ".json";
  Json profile = {{"id", spec.id},
                  {"name", spec.name},
                  {"kind", kind},
                  {"peak_flops_per_second", peaks},
                  {"memory_bytes", spec.memory_bytes},
                  {"memory_bandwidth_bytes_per_second", spec.memory_bandwidth_bytes_per_second},
                  {"kernel_launch_overhead_seconds", spec.kernel_launch_overhead_seconds},
                  {"compute_efficiency", efficiency},
                  {"memory_efficiency", spec.memory_efficiency},
                  {"sources",
                   {{"peak_flops_per_second", cited},
                    {"memory_bytes", cited},
                    {"memory_bandwidth_bytes_per_second", cited},
                    {"kernel_launch_overhead_seconds", cited},
                    {"compute_efficiency", cited},
                    {"memory_efficiency", cited}}}};
  if (spec.reduction_memory_efficiency > 0) {
    profile["reduction_memory_efficiency"] = spec.reduction_memory_efficiency;
    profile["sources"]["reduction_memory_efficiency"] = cited;
  }
  if (!spec.gemm_efficiency_by_flops.empty()) {
    Json curve = Json::array();
    for (const auto& [flops, fraction] : spec.gemm_efficiency_by_flops) curve.push_back({flops, fraction});
    profile["gemm_efficiency_by_flops"] = curve;
    profile["sources"]["gemm_efficiency_by_flops"] = cited;
  }
  if (spec.kernel_model) {
    profile["kernel_model"] = write_kernel_model(*spec.kernel_model);
    profile["sources"]["kernel_model"] = cited;
  }
  if (spec.max_achievable_matmul) {
    profile["max_achievable_matmul"] = {{"flops_per_second", precision_values_json(spec.max_achievable_matmul->flops_per_second)},
                                        {"source", spec.max_achievable_matmul->source}};
  }
  if (spec.sustained_matmul) {
    profile["sustained_matmul"] = {
        {"sustained_flops_per_second", precision_values_json(spec.sustained_matmul->sustained_flops_per_second)},
        {"burst_flops_per_second", precision_values_json(spec.sustained_matmul->burst_flops_per_second)},
        {"source", spec.sustained_matmul->source}};
  }
  if (spec.gemm_time_spread) {
    profile["gpu_to_gpu_spread"] = {{"gemm_time_log_sigma", spec.gemm_time_spread->log_sigma},
                                    {"source", spec.gemm_time_spread->source}};
  }
  if (spec.step_validation) {
    profile["step_validation"] = {{"cases", spec.step_validation->cases},
                                  {"mape_percent", spec.step_validation->mape_percent},
                                  {"date", spec.step_validation->date}};
  }
  if (spec.sm_count > 0) {
    profile["sm_count"] = spec.sm_count;
    profile["sources"]["sm_count"] = cited;
  }
  if (!spec.compute_capability.empty()) profile["compute_capability"] = spec.compute_capability;
  if (!spec.pci_bus_id.empty()) profile["pci_bus_id"] = spec.pci_bus_id;
  return profile;
}

Json write_cluster_json(const Cluster& cluster) {
  Json devices = Json::array();
  for (const auto& device : cluster.devices()) {
    devices.push_back({{"name", device.name.canonical()},
                       {"vertex", cluster.vertices()[device.vertex].name},
                       {"node", device.node},
                       {"speed_factor", device.speed_factor},
                       {"profile", write_device_profile(device.spec)}});
    if (device.shares_compute_with) {
      devices.back()["shares_compute_with"] = cluster.device(*device.shares_compute_with).name.canonical();
    }
  }
  Json switches = Json::array();
  for (const auto& vertex : cluster.vertices()) {
    if (!vertex.device) switches.push_back(vertex.name);
  }
  Json links = Json::array();
  for (const auto& link : cluster.links()) {
    links.push_back({{"endpoints", {cluster.vertices()[link.a].name, cluster.vertices()[link.b].name}},
                     {"type", link.spec.type},
                     {"bandwidth_bytes_per_second", link.spec.bandwidth_bytes_per_second},
                     {"latency_seconds", link.spec.latency_seconds}});
  }
  Json json = {{"name", cluster.name}, {"description", cluster.description}, {"devices", devices},
               {"switches", switches}, {"links", links}};
  // Measured curves travel with the plan; not once perturbations changed a link (they no longer apply).
  if (cluster.collective_profile && !cluster.links_rescaled()) {
    json["collective_profile"] = write_collective_profile_json(*cluster.collective_profile);
  }
  return json;
}

Cluster read_cluster_json(const JsonReader& reader) {
  reader.reject_unknown_keys({"name", "description", "devices", "switches", "links", "collective_profile"});
  Cluster cluster;
  cluster.name = reader.string_or("name", "cluster");
  cluster.description = reader.string_or("description", "");
  std::map<std::string, VertexId> vertex_of;
  for (const auto& entry : reader.at("devices").elements()) {
    entry.reject_unknown_keys({"name", "vertex", "node", "speed_factor", "profile", "shares_compute_with"});
    ClusterDevice device;
    std::string error;
    std::string name = entry.string_at("name");
    auto parsed = DeviceName::parse(name, &error);
    if (!parsed || !parsed->job || !parsed->replica || !parsed->task || !parsed->kind || !parsed->index) {
      entry.at("name").fail("expected a full device name like /job:localhost/replica:0/task:0/device:GPU:0, got \"" +
                            name + "\"");
    }
    device.name = *parsed;
    device.node = static_cast<int>(entry.integer_or("node", 0, 0, 1000000));
    device.speed_factor = entry.positive_or("speed_factor", 1.0);
    if (device.speed_factor > 1e6) entry.at("speed_factor").at_most(device.speed_factor, 1e6);
    if (auto shared = entry.find("shares_compute_with")) {
      auto other = DeviceName::parse(shared->as_string(), nullptr);
      auto matches = other ? cluster.match(*other) : std::vector<DeviceId>{};
      if (matches.size() != 1) shared->fail("expected an earlier device's full name, got \"" + shared->as_string() + "\"");
      device.shares_compute_with = matches.front();
    }
    device.spec = read_device_profile(entry.at("profile"));
    if (device.spec.kind != *parsed->kind) entry.at("profile").fail("profile kind does not match the device name");
    std::string vertex = entry.string_or("vertex", name);
    if (vertex_of.count(vertex)) entry.at("vertex").fail("duplicate vertex \"" + vertex + "\"");
    if (!cluster.match(*parsed).empty()) entry.at("name").fail("duplicate device \"" + name + "\"");
    DeviceId id = cluster.add_device(std::move(device), vertex);
    vertex_of[vertex] = cluster.device(id).vertex;
  }
  if (auto switches = reader.find("switches")) {
    for (const auto& entry : switches->elements()) {
      std::string name = entry.as_string();
      if (vertex_of.count(name)) entry.fail("duplicate vertex \"" + name + "\"");
      vertex_of[name] = cluster.add_switch(name);
    }
  }
  if (auto links = reader.find("links")) {
    for (const auto& entry : links->elements()) {
      entry.reject_unknown_keys({"endpoints", "type", "bandwidth_bytes_per_second", "latency_seconds"});
      JsonReader endpoints = entry.at("endpoints");
      if (endpoints.elements().size() != 2) endpoints.fail("expected two endpoints");
      VertexId ends[2];
      for (size_t i = 0; i < 2; ++i) {
        std::string name = endpoints.at_index(i).as_string();
        auto it = vertex_of.find(name);
        if (it == vertex_of.end()) endpoints.at_index(i).fail("unknown vertex \"" + name + "\"");
        ends[i] = it->second;
      }
      if (ends[0] == ends[1]) endpoints.fail("a link cannot join a vertex to itself");
      LinkSpec spec;
      spec.type = entry.string_or("type", "link");
      // As strict as links.json (read_link_spec).
      spec.bandwidth_bytes_per_second = entry.at("bandwidth_bytes_per_second")
                                            .at_most(entry.positive_at("bandwidth_bytes_per_second"),
                                                     kMaxPlausibleBytesPerSecond);
      spec.latency_seconds = entry.at("latency_seconds").at_most(entry.at("latency_seconds").as_non_negative_number(), 10.0);
      cluster.add_link(ends[0], ends[1], spec);
    }
  }
  if (cluster.devices().empty()) reader.at("devices").fail("a cluster needs at least one device");
  if (auto profile = reader.find("collective_profile")) {
    cluster.collective_profile = std::make_shared<const CollectiveProfile>(read_collective_profile_json(*profile));
  }
  return cluster;
}

}  // namespace placesim
