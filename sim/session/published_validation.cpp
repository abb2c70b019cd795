#include "sim/session/published_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "sim/report/cost_provenance.h"
#include "sim/session/pipeline.h"
#include "sim/session/tier_step.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

std::vector<std::filesystem::path> scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::filesystem::path> found;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") found.push_back(entry.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(path, error)) {
      files.emplace_back(path);
    } else {
      throw InputError(path, "", "no such file or directory");
    }
  }
  return files;
}

/// The device a strategy's figure is about: the cluster's first accelerator (validation clusters
/// are one accelerator type and their hosts), else its first device; and its cost source.
void describe_device(const Cluster& cluster, PublishedCase* c) {
  const ClusterDevice* chosen = nullptr;
  for (const auto& device : cluster.devices()) {
    if (device.spec.kind != DeviceKind::kCpu) {
      chosen = &device;
      break;
    }
  }
  if (!chosen && !cluster.devices().empty()) chosen = &cluster.devices().front();
  if (!chosen) return;
  c->device_profile = chosen->spec.id;
  for (const CostSource& source : cost_sources(cluster)) {
    if (source.profile == chosen->spec.id) c->cost_source = source.kind;
  }
}

}  // namespace

std::vector<PublishedCase> validate_published(const std::vector<std::string>& paths, const HardwareCatalog& catalog,
                                              bool progress) {
  std::vector<Scenario> scenarios;
  for (const auto& file : scenario_files(paths)) scenarios.push_back(load_scenario(file, catalog));
  std::vector<PublishedCase> cases;
  for (const Scenario& scenario : scenarios) {
    for (const Strategy& strategy : scenario.strategies) {
      if (!strategy.published) continue;
      if (progress) std::cerr << "placesim: " << scenario.name << " / " << strategy.name << "\n";
      PublishedCase c;
      c.scenario = scenario.name;
      c.strategy = strategy.name;
      c.metric = strategy.published->metric;
      c.published = strategy.published->value;
      if (strategy.data_parallel) c.accelerators = static_cast<int64_t>(strategy.data_parallel->replicas.size());
      if (strategy.parallelism) c.accelerators = static_cast<int64_t>(strategy.parallelism->devices.size());
      // On the scenario's tier: a plan run on its engine, or the 3D closed form (thousands of
      // GPUs in milliseconds).
      const TierStep tier_step = evaluate_on_tier(scenario, strategy, false);
      const double step = tier_step.step_seconds, samples_per_second = tier_step.samples_per_second;
      if (c.metric == "samples_per_second") {
        c.predicted = samples_per_second;
      } else if (c.metric == "model_tflops_per_gpu") {
        // Model FLOPs as MFU counts them (PaLM's formula for language models, docs/llm-planning.md).
        const TrainingEfficiency efficiency = training_efficiency(scenario, strategy, samples_per_second, nullptr);
        c.predicted = samples_per_second * efficiency.model_flops_per_sample /
                      static_cast<double>(std::max<int64_t>(1, efficiency.devices)) / 1e12;
      } else {
        c.predicted = step;
      }
      describe_device(scenario.cluster_for(strategy), &c);
      cases.push_back(c);
    }
  }
  if (cases.empty()) {
    throw InputError(paths.empty() ? "" : paths.front(), "",
                     "no strategy with a \"published\" figure found (nothing to validate)");
  }
  return cases;
}

double mean_absolute_percentage_error(const std::vector<PublishedCase>& cases) {
  double sum = 0;
  for (const auto& c : cases) sum += std::fabs(c.relative_error());
  return cases.empty() ? 0 : 100 * sum / static_cast<double>(cases.size());
}

std::string published_table(const std::vector<PublishedCase>& cases) {
  size_t width = 10;
  for (const auto& c : cases) width = std::max(width, c.scenario.size() + c.strategy.size() + 3);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s %-20s %12s %12s %8s\n", static_cast<int>(width), "case", "metric",
                "published", "predicted", "error");
  out += line;
  for (const auto& c : cases) {
    std::string name = c.scenario + " / " + c.strategy;
    std::snprintf(line, sizeof(line), "%-*s %-20s %12.4g %12.4g %+7.1f%%\n", static_cast<int>(width), name.c_str(),
                  c.metric.c_str(), c.published, c.predicted, 100 * c.relative_error());
    out += line;
  }
  // By device profile: where the error is, next to where the costs come from.
  std::map<std::string, std::vector<PublishedCase>> by_device;
  for (const auto& c : cases) by_device[c.device_profile].push_back(c);
  if (by_device.size() > 1) {
    out += "By device (where its compute costs come from):\n";
    for (const auto& [profile, group] : by_device) {
      std::snprintf(line, sizeof(line), "  %-24s %6.1f%% over %3zu cases  %s\n", profile.c_str(),
                    mean_absolute_percentage_error(group), group.size(), group.front().cost_source.c_str());
      out += line;
    }
  }
  std::snprintf(line, sizeof(line), "MAPE: %.1f%% over %zu cases\n", mean_absolute_percentage_error(cases), cases.size());
  return out + line;
}

std::string scaling_table(const std::vector<PublishedCase>& cases) {
  std::string out = "scenario                                   replicas  published scaling  predicted scaling  difference\n";
  char line[512];
  double sum = 0, largest = 0;
  size_t rows = 0;
  for (const PublishedCase& reference : cases) {
    if (reference.accelerators != 1 || reference.metric != "samples_per_second") continue;
    for (const PublishedCase& c : cases) {
      if (c.scenario != reference.scenario || c.accelerators < 2 || c.metric != "samples_per_second") continue;
      const double n = static_cast<double>(c.accelerators);
      const double published = c.published / (n * reference.published);
      const double predicted = c.predicted / (n * reference.predicted);
      const double points = 100 * (predicted - published);
      std::snprintf(line, sizeof(line), "%-42s %8lld %17.1f%% %17.1f%% %+10.1f\n", c.scenario.c_str(),
                    static_cast<long long>(c.accelerators), 100 * published, 100 * predicted, points);
      out += line;
      sum += std::fabs(points);
      largest = std::max(largest, std::fabs(points));
      ++rows;
    }
  }
  std::snprintf(line, sizeof(line), "Scaling: mean |difference| %.1f points over %zu rows (largest %.1f)\n",
                rows ? sum / static_cast<double>(rows) : 0.0, rows, largest);
  return out + line;
}

}  // namespace placesim
