#include "sim/session/published_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "sim/report/cost_provenance.h"
#include "sim/session/automatic_stages.h"
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

/// What the scaling table counts: a data-parallel strategy's replicas, a 3D strategy's devices.
int64_t accelerators(const Strategy& strategy) {
  if (strategy.parallelism) return static_cast<int64_t>(strategy.parallelism->devices.size());
  if (strategy.data_parallel) return static_cast<int64_t>(strategy.data_parallel->replicas.size());
  return 0;
}

const Strategy& strategy_named(const Scenario& scenario, const std::string& name) {
  for (const Strategy& strategy : scenario.strategies) {
    if (strategy.name == name) return strategy;
  }
  throw InputError(scenario.file.string(), "", "no strategy named \"" + name + "\"");  // the reader refuses it first
}

}  // namespace

std::vector<PublishedCase> absolute_cases(const std::vector<PublishedCase>& cases) {
  std::vector<PublishedCase> absolute;
  for (const PublishedCase& c : cases) {
    if (c.metric != "scaling_efficiency") absolute.push_back(c);
  }
  return absolute;
}

std::vector<PublishedCase> validate_published(const std::vector<std::string>& paths, const HardwareCatalog& catalog,
                                              bool progress) {
  std::vector<Scenario> scenarios;
  for (const auto& file : scenario_files(paths)) scenarios.push_back(load_scenario_to_plan(file, catalog));
  std::vector<PublishedCase> cases;
  for (const Scenario& scenario : scenarios) {
    // A scaling efficiency's reference: samples/s per accelerator, by strategy name, evaluated once
    // however many cases name it.
    std::map<std::string, double> per_accelerator;
    auto reference_rate = [&](const std::string& name) {
      auto it = per_accelerator.find(name);
      if (it == per_accelerator.end()) {
        const Strategy& reference = strategy_named(scenario, name);  // data-parallel or 3D: the reader checked
        const double rate = evaluate_on_tier(scenario, reference, false).samples_per_second /
                            static_cast<double>(accelerators(reference));
        it = per_accelerator.emplace(name, rate).first;
      }
      return it->second;
    };
    for (const Strategy& strategy : scenario.strategies) {
      if (!strategy.published) continue;
      if (progress) std::cerr << "placesim: " << scenario.name << " / " << strategy.name << "\n";
      PublishedCase c;
      c.scenario = scenario.name;
      c.strategy = strategy.name;
      c.metric = strategy.published->metric;
      c.published = strategy.published->value;
      c.accelerators = accelerators(strategy);
      // On the scenario's tier: a plan run on its engine, or the 3D closed form (thousands of
      // GPUs in milliseconds).
      const TierStep tier_step = evaluate_on_tier(scenario, strategy, false);
      const double step = tier_step.step_seconds, samples_per_second = tier_step.samples_per_second;
      if (c.metric == "scaling_efficiency") {
        c.predicted = samples_per_second / static_cast<double>(c.accelerators) /
                      reference_rate(strategy.published->relative_to);
      } else if (c.metric == "samples_per_second") {
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
  size_t counted = 0;
  for (const auto& c : absolute_cases(cases)) {
    sum += std::fabs(c.relative_error());
    ++counted;
  }
  return counted == 0 ? 0 : 100 * sum / static_cast<double>(counted);
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
    if (c.metric == "scaling_efficiency") {  // a relative figure: in percent, its difference in points
      std::snprintf(line, sizeof(line), "%-*s %-20s %11.1f%% %11.1f%% %+5.1f pts\n", static_cast<int>(width),
                    name.c_str(), c.metric.c_str(), 100 * c.published, 100 * c.predicted,
                    100 * (c.predicted - c.published));
    } else {
      std::snprintf(line, sizeof(line), "%-*s %-20s %12.4g %12.4g %+7.1f%%\n", static_cast<int>(width), name.c_str(),
                    c.metric.c_str(), c.published, c.predicted, 100 * c.relative_error());
    }
    out += line;
  }
  // By device profile: where the error is, next to where the costs come from.
  const std::vector<PublishedCase> absolute = absolute_cases(cases);
  std::map<std::string, std::vector<PublishedCase>> by_device;
  for (const auto& c : absolute) by_device[c.device_profile].push_back(c);
  if (by_device.size() > 1) {
    out += "By device (where its compute costs come from):\n";
    for (const auto& [profile, group] : by_device) {
      std::snprintf(line, sizeof(line), "  %-24s %6.1f%% over %3zu cases  %s\n", profile.c_str(),
                    mean_absolute_percentage_error(group), group.size(), group.front().cost_source.c_str());
      out += line;
    }
  }
  if (absolute.size() < cases.size()) {
    std::snprintf(line, sizeof(line), "%zu scaling efficienc%s: in `validate --scaling`, not in the MAPE\n",
                  cases.size() - absolute.size(), cases.size() - absolute.size() == 1 ? "y" : "ies");
    out += line;
  }
  if (absolute.empty()) return out + "MAPE: none (no absolute figure among these cases)\n";
  std::snprintf(line, sizeof(line), "MAPE: %.1f%% over %zu cases\n", mean_absolute_percentage_error(cases),
                absolute.size());
  return out + line;
}

std::string scaling_table(const std::vector<PublishedCase>& cases) {
  std::string out = "scenario                                   replicas  published scaling  predicted scaling  difference\n";
  char line[512];
  double sum = 0, largest = 0;
  size_t rows = 0;
  auto add_row = [&](const std::string& scenario, int64_t accelerators, double published, double predicted) {
    const double points = 100 * (predicted - published);
    std::snprintf(line, sizeof(line), "%-42s %8lld %17.1f%% %17.1f%% %+10.1f\n", scenario.c_str(),
                  static_cast<long long>(accelerators), 100 * published, 100 * predicted, points);
    out += line;
    sum += std::fabs(points);
    largest = std::max(largest, std::fabs(points));
    ++rows;
  };
  for (const PublishedCase& reference : cases) {
    if (reference.metric == "scaling_efficiency") {  // the published figure is the efficiency itself
      add_row(reference.scenario, reference.accelerators, reference.published, reference.predicted);
      continue;
    }
    if (reference.accelerators != 1 || reference.metric != "samples_per_second") continue;
    for (const PublishedCase& c : cases) {
      if (c.scenario != reference.scenario || c.accelerators < 2 || c.metric != "samples_per_second") continue;
      const double n = static_cast<double>(c.accelerators);
      add_row(c.scenario, c.accelerators, c.published / (n * reference.published), c.predicted / (n * reference.predicted));
    }
  }
  std::snprintf(line, sizeof(line), "Scaling: mean |difference| %.1f points over %zu rows (largest %.1f)\n",
                rows ? sum / static_cast<double>(rows) : 0.0, rows, largest);
  return out + line;
}

}  // namespace placesim
