// Scenarios written inline in tests, read as `placesim` reads a file (bundled hardware profiles).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim::testing {

inline Scenario scenario_from_json(const Json& document) {
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  return read_scenario(JsonReader(document, "test.json"), catalog, PLACESIM_SOURCE_DIR);
}

inline Scenario scenario_from_text(const std::string& text) { return scenario_from_json(Json::parse(text)); }

/// The cluster of a bundled template (hardware_profiles/clusters/), as a scenario reads it.
inline Cluster template_cluster(const std::string& template_name) {
  return scenario_from_text(R"({"model": {"zoo": "mlp"}, "cluster": {"template": ")" + template_name +
                            R"("}, "strategy": {"data_parallel": {"replicas": 2}}})")
      .cluster;
}

/// The first `count` GPUs of `cluster`, in device order.
inline std::vector<DeviceId> first_gpus(const Cluster& cluster, size_t count) {
  std::vector<DeviceId> ids;
  for (DeviceId id = 0; id < cluster.devices().size() && ids.size() < count; ++id) {
    if (cluster.device(id).spec.kind == DeviceKind::kGpu) ids.push_back(id);
  }
  return ids;
}

/// The `model` block (JSON text) in fp16 with Adam, batch 8 per data-parallel replica, on `nodes`
/// DGX A100s over InfiniBand HDR, with the `parallelism` block and `simulation` options given.
inline std::string small_parallel_scenario(const std::string& model, const std::string& parallelism, int nodes,
                                           const std::string& simulation) {
  return R"({"model": )" + model + R"(,
    "cluster": {"template": "dgx_a100", "nodes": )" +
         std::to_string(nodes) + R"(, "fabric": {"link": "ib_hdr"}},
    "strategy": {"parallelism": )" +
         parallelism + R"(},
    "simulation": )" + simulation + R"(,
    "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 1}})";
}

/// A small GPT (L = 2, h = 64, 8 heads, T = 32 tokens, V = 128: Psi = 110,336 parameters), as
/// small_parallel_scenario runs it.
inline std::string small_gpt_scenario(const std::string& parallelism, int nodes = 1, const std::string& simulation = "{}") {
  return small_parallel_scenario(R"({"zoo": "gpt", "parameters": {"layers": 2, "hidden": 64, "heads": 8, "sequence": 32,
             "vocabulary": 128}})",
                                 parallelism, nodes, simulation);
}

/// small_gpt_scenario's text run for `steps` steps instead of 1.
inline std::string small_gpt_scenario_steps(const std::string& parallelism, int steps, const std::string& simulation) {
  std::string text = small_gpt_scenario(parallelism, 1, simulation);
  text.replace(text.find("\"steps\": 1"), 10, "\"steps\": " + std::to_string(steps));
  return text;
}

/// The input error `action` throws: its JSON path and message (`refused` false when it throws none).
struct Refusal {
  bool refused = false;
  std::string json_path;
  std::string message;
};
inline Refusal refusal_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& error) {
    return {true, error.json_path(), error.what()};
  }
  return {};
}

}  // namespace placesim::testing
