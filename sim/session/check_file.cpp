#include "sim/session/check_file.h"

#include <algorithm>
#include <iostream>

#include "sim/session/automatic_stages.h"
#include "sim/session/collective_validation.h"
#include "sim/session/pipeline.h"
#include "sim/session/tier_step.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/graph/model_json.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/plan/plan_json.h"
#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/price_list.h"
#include "sim/session/sweep_evaluation.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {
namespace {

std::string detect_kind(const Json& document, const std::filesystem::path& path) {
  if (!document.is_object()) {
    throw InputError(path.string(), "/", "expected a JSON object, got " + brief(document));
  }
  if (document.contains("kind") && document["kind"] == "placesim-plan") return "plan";
  if (document.contains("tasks")) return "plan";
  if (document.contains("ops")) return "model";
  if (document.contains("peak_flops_per_second")) return "device";
  if (document.contains("node")) return "cluster";
  if (document.contains("checks")) return "collective-checks";  // hardware_profiles/collectives/checks.json
  if (document.contains("model") || document.contains("cluster")) return "scenario";
  if (document.contains("devices") && document["devices"].is_object()) return "prices";  // hardware_profiles/prices.json
  // A links table maps type names to entries; any one entry that looks like a link is enough, so a
  // table whose first entry (in key order) has a typo is still checked as links.
  for (const auto& entry : document) {
    if (entry.is_object() && entry.contains("bandwidth_bytes_per_second")) return "links";
  }
  throw InputError(path.string(), "/",
                   "cannot tell what this file is (expected a scenario, model, device profile, links table, cluster, "
                   "plan, price list or collective checks); pass --kind");
}

std::string plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

std::string check_file(const std::filesystem::path& path, const std::string& requested_kind,
                       const HardwareCatalog& catalog, bool allow_oom) {
  if (path.extension() == ".onnx") {  // imported as declared; a symbolic batch: the exported one, else 1
    OnnxImportOptions options;
    options.default_batch = 1;
    options.batch_from_metadata = true;
    options.warnings = &std::cerr;
    OpGraph graph = import_onnx_model(path, options);
    return "ONNX model \"" + graph.name() + "\": " + plural(graph.size(), "op");
  }
  Json document = parse_json_file(path);
  std::string kind = requested_kind == "auto" ? detect_kind(document, path) : requested_kind;
  JsonReader reader(document, path.string());
  reader.expect_object();
  if (kind == "scenario") {
    Scenario scenario = read_scenario(reader, catalog, path.parent_path());
    resolve_automatic_stages(&scenario);
    // The sweep block as `placesim sweep` reads it: what sweep would refuse, check refuses.
    std::string sweep_summary;
    if (document.contains("sweep")) {
      const SweepContext context = make_sweep_context(document, path.string(), catalog);
      const SweepSpec& spec = context.spec;
      sweep_summary = "; sweep of " + plural(spec.configurations.size(), "configuration") + " (" + fidelity_name(spec) + ")";
    }
    // Where `run` would write (refused here as there when outside the scenario's directory).
    std::string outputs;
    for (auto [key, value] : {std::pair<std::string, std::string>{"report", scenario.report_path},
                              std::pair<std::string, std::string>{"trace", scenario.trace_path}}) {
      std::string where = scenario_output_path(value, path, "/outputs/" + key, false);
      if (!where.empty()) outputs += "; run writes its " + key + " to " + where;
    }
    // The memory verdicts `run` gives (it refuses a strategy that does not fit): every strategy
    // evaluated on the scenario's tier, as `run` does.
    const bool several = scenario.strategies.size() > 1;
    std::string fullest;  // the device or stage nearest its capacity, over all strategies
    double fullest_share = -1;
    size_t tasks = 0;
    std::string base_does_not_fit;
    for (const Strategy& strategy : scenario.strategies) {
      const std::string prefix = several ? "strategy \"" + strategy.name + "\" " : "";
      // On the scenario's tier (the closed form: one micro-batch's cells, no plan of the step).
      const TierStep step = evaluate_on_tier(scenario, strategy, false);
      tasks = std::max(tasks, step.tasks);
      if (step.fullest_share() > fullest_share) {
        fullest_share = step.fullest_share();
        fullest = prefix + step.fullest + ": " + format_bytes(step.fullest_peak_bytes) + " of " +
                  format_bytes(step.fullest_capacity_bytes);
      }
      const std::vector<std::string>& verdicts = step.out_of_memory;
      if (verdicts.empty()) continue;
      if (document.contains("sweep")) {
        // A sweep's base scenario is a template: `placesim sweep` judges each configuration's memory.
        base_does_not_fit = "; the base scenario alone does not fit in memory (`placesim run` refuses it; `placesim "
                            "sweep` judges each configuration): " + worst_verdicts(verdicts, 1);
      } else if (allow_oom) {
        base_does_not_fit = "; does not fit in memory (`placesim run` refuses it without --allow-oom): " + prefix +
                            worst_verdicts(verdicts, 1);
      } else {
        throw out_of_memory_error(path.string(), several ? strategy.name : "", verdicts);
      }
    }
    const std::string plan_size = scenario.run.tier == Tier::kClosedForm
                                      ? "closed-form tier: " + plural(tasks, "task") + " for one micro-batch"
                                      : plural(tasks, "task") + " per run" + (several ? " (the largest strategy)" : "");
    return "scenario \"" + scenario.name + "\": " + plural(scenario.graph.size(), "op") + " on " +
           plural(scenario.cluster.devices().size(), "device") + ", " + plan_size +
           (!base_does_not_fit.empty() ? base_does_not_fit
            : fullest.empty()          ? std::string()
                                       : "; fits in memory, fullest " + fullest) +
           sweep_summary + outputs;
  }
  if (kind == "model") {
    OpGraph graph = read_model_json(reader);
    return "model \"" + graph.name() + "\": " + plural(graph.size(), "op");
  }
  if (kind == "device") {
    DeviceSpec spec = read_device_profile(reader);
    return "device profile \"" + spec.id + "\" (" + spec.name + ")";
  }
  if (kind == "links") {
    for (const auto& type : reader.keys()) read_link_spec(type, reader.at(type));
    return "link table: " + plural(reader.keys().size(), "link type");
  }
  if (kind == "cluster") {
    Cluster cluster = load_cluster_file(path, catalog);
    return "cluster \"" + cluster.name + "\": " + plural(cluster.devices().size(), "device") + ", " +
           plural(cluster.links().size(), "link");
  }
  if (kind == "collective-checks") {
    return "collective checks: " + plural(check_collective_checks_file(path, catalog), "measured run") +
           " with its cluster";
  }
  if (kind == "prices") {
    PriceList prices = read_price_file(path);
    return "price list: " + plural(prices.usd_per_device_hour.size(), "device price");
  }
  if (kind == "plan") {
    PlanFile file = read_plan_json(reader);
    return "plan \"" + file.plan.name + "\": " + plural(file.plan.tasks.size(), "task") + " on " +
           plural(file.cluster.devices().size(), "device");
  }
  throw InputError(path.string(), "", "unknown --kind \"" + kind + "\"");
}

}  // namespace placesim
