// `placesim place SCENARIO`: automatic placement (docs/placement.md). Runs every placement
// algorithm (expert split, m-TOPO, m-ETF, m-SCT) on the scenario's model and cluster, predicts
// each placement's step time with the full simulation (plan + SimGrid engine), and prints the
// placement log of the scenario's algorithm and a table of the algorithms side by side.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "sim/session/automatic_stages.h"
#include "sim/session/placement_comparison.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/auto_placement/auto_placer.h"
#include "sim/placement/placement_log.h"
#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

struct PlaceOptions {
  std::string scenario;
  std::string strategy;
  std::vector<std::string> algorithms;
  bool no_log = false;
  std::string report;  ///< --report FILE ("-": standard output); --json is --report -
  bool json = false;
};

std::string ops_per_device(const Placement& placement, const Cluster& cluster) {
  std::map<DeviceId, size_t> counts;
  for (DeviceId d : placement.device_of_op) ++counts[d];
  std::string text;
  for (const auto& [device, count] : counts) {
    text += (text.empty() ? "" : ", ") + cluster.device(device).name.local() + " " + std::to_string(count);
  }
  return text;
}

/// "GPU:0 1.7 GiB/3.0 GiB, ...": each used device's simulated peak against the placer's budget.
std::string peak_memory(const RunMetrics& metrics, const Cluster& cluster, double memory_fraction) {
  std::string text;
  for (const DeviceMetrics& device : metrics.devices) {
    if (device.compute_tasks == 0) continue;
    text += (text.empty() ? "" : ", ") + cluster.device(device.device).name.local() + " " +
            format_bytes(device.peak_memory_bytes) + "/" + format_bytes(device.memory_capacity_bytes * memory_fraction);
  }
  return text;
}

int place(PlaceOptions options, const GlobalOptions& global) {
  if (options.json) {
    if (!options.report.empty() && !is_standard_output(options.report)) {
      throw InputError("--json", "", "prints the report on standard output; it is not combined with --report FILE");
    }
    options.report = "-";
  }
  output_path(options.report, "--report", "", "", "");
  // A report on standard output is the whole of standard output: no text beside it.
  std::ostringstream discarded;
  std::ostream& out = is_standard_output(options.report) ? discarded : std::cout;
  Scenario scenario = load_scenario_to_plan(options.scenario, global.catalog(), options.strategy);
  const Strategy* strategy = &scenario.strategies.front();
  if (!options.strategy.empty()) {
    auto it = std::find_if(scenario.strategies.begin(), scenario.strategies.end(),
                           [&](const Strategy& s) { return s.name == options.strategy; });
    if (it == scenario.strategies.end()) {
      throw InputError("--strategy", "", "no strategy named \"" + options.strategy + "\"");
    }
    strategy = &*it;
  }
  if (strategy->data_parallel || strategy->pipeline) {
    throw InputError(options.scenario, "", "strategy \"" + strategy->name +
                                               "\" is data or pipeline parallel; `place` places one replica's ops");
  }
  const Cluster& cluster = scenario.cluster_for(*strategy);
  AutoPlacementOptions automatic;
  if (strategy->placement.automatic) automatic = *strategy->placement.automatic;

  std::vector<PlacementAlgorithm> algorithms = all_placement_algorithms();
  if (!options.algorithms.empty()) {
    std::vector<PlacementAlgorithm> chosen;
    for (const auto& name : options.algorithms) {
      auto it = std::find_if(algorithms.begin(), algorithms.end(), [&](auto a) { return to_string(a) == name; });
      if (it == algorithms.end()) {
        throw InputError("--algorithm", "", "unknown algorithm \"" + name + "\" (expected expert, m-topo, m-etf or m-sct)");
      }
      chosen.push_back(*it);
    }
    algorithms = chosen;
  }

  std::vector<PlacementRow> rows = compare_placements(scenario, *strategy, cluster, automatic, algorithms);
  // The log shows the scenario's algorithm, else the fastest placement that fits.
  const PlacementRow* shown = shown_placement(rows, *strategy, automatic, cluster);

  out << "Scenario: " << scenario.name << (scenario.description.empty() ? "" : " - " + scenario.description)
      << "\nModel: " << scenario.graph.name() << " (" << scenario.graph.size() << " ops), "
      << (scenario.run.kind == StepKind::kTraining ? "training" : "inference") << ", batch "
      << scenario.run.batch_size << ", " << to_string(scenario.run.precision) << "; cluster: " << cluster.name
      << " (" << cluster.devices().size() << " devices); memory limit "
      << format_percent(automatic.memory_fraction) << " of each device\n\n";
  if (shown && shown->placement && !options.no_log) {
    out << "Placement log (" << shown->algorithm << "):\n"
        << placement_log(scenario.graph, cluster, *shown->placement, scenario.run.tensorflow_version) << "\n";
  }
  out << std::left << std::setw(18) << "algorithm" << std::setw(14) << "step time" << std::setw(14)
      << "placed in" << "ops per device; simulated peak memory / placer's memory limit\n";
  for (const PlacementRow& row : rows) {
    out << std::left << std::setw(18) << row.algorithm;
    if (!row.placement) {
      out << "no placement: " << row.failure->what() << "\n";
      continue;
    }
    auto verdicts = out_of_memory_verdicts(row.metrics, cluster);
    out << std::setw(14) << format_seconds(row.metrics.step_time_seconds) << std::setw(14)
        << format_seconds(row.placing_seconds) << ops_per_device(*row.placement, cluster) << "; "
        << peak_memory(row.metrics, cluster, automatic.memory_fraction) << (verdicts.empty() ? "" : " OUT OF MEMORY") << "\n";
  }
  for (const PlacementRow& row : rows) {
    if (!row.placement) continue;
    for (const auto& verdict : out_of_memory_verdicts(row.metrics, cluster)) {
      out << row.algorithm << ": does not fit: " << verdict << "\n";
    }
  }

  if (!options.report.empty()) {
    write_file_atomically(options.report,
                          placement_report(scenario, *strategy, cluster, rows, shown, automatic.memory_fraction).dump(2) + "\n");
  }

  // A failure of the scenario's own algorithm, or of every algorithm, is the verdict.
  if (strategy->placement.automatic && shown && !shown->placement) throw *shown->failure;
  bool any = std::any_of(rows.begin(), rows.end(), [](const PlacementRow& row) {
    return row.placement && row.algorithm != "rules (TF placer)";
  });
  if (!any) throw *rows.back().failure;
  return 0;
}

}  // namespace

Command add_place_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<PlaceOptions>();
  CLI::App* command = app.add_subcommand(
      "place", "Place a scenario's ops automatically (expert, m-TOPO, m-ETF, m-SCT) and compare the step times");
  command->add_option("scenario", options->scenario, "Scenario JSON file")->required();
  command->add_option("--strategy", options->strategy, "Use the strategy with this name (default: the first)");
  command->add_option("--algorithm", options->algorithms, "Only these algorithms (expert, m-topo, m-etf, m-sct)");
  command->add_flag("--no-log", options->no_log, "Do not print the placement log");
  command->add_option("--report", options->report,
                      "Write the comparison as JSON: per algorithm its step time, memory and op -> device map "
                      "(- for standard output, then without the text)");
  command->add_flag("--json", options->json, "Print the JSON comparison on standard output and nothing else there; "
                                             "the same as --report -");
  return {command, [options, &global] { return place(*options, global); }};
}

}  // namespace placesim
