// The stages of `placesim run`, chained: scenario -> placement -> plan -> engine -> metrics.
// The CLI commands are thin wrappers around these functions.
#pragma once

#include <optional>
#include <string>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "sim/placement/placement.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/comparison_report.h"
#include "sim/report/metrics.h"
#include "sim/report/pipeline_metrics.h"
#include "sim/scenario/scenario.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct PlannedScenario {
  Placement placement;  ///< of one replica
  ExecutionPlan plan;
  std::vector<std::string> notes;  ///< choices made while planning (e.g. the all-reduce algorithm picked)
};

/// Places and plans one strategy of the scenario (data parallel or not).
PlannedScenario plan_strategy(const Scenario& scenario, const Strategy& strategy);
/// `strategy` on one replica, the scaling baseline `run` and `sweep` divide by: a 3D layout's data
/// 1 on its first replica's tensor x pipeline devices (they come first); a data-parallel
/// strategy's first worker (its all-reduce a ring: other algorithms need more members); a
/// pipeline's model on its first device alone.
Strategy single_replica_strategy(const Strategy& strategy);
/// The first strategy's plan.
PlannedScenario plan_scenario(const Scenario& scenario);

struct SimulatedRun {
  Timeline timeline;
  RunMetrics metrics;
};

SimulatedRun simulate_plan(const ExecutionPlan& plan, const Cluster& cluster);
/// The analytical tier's timeline (no contention) with the same metrics.
SimulatedRun estimate_plan(const ExecutionPlan& plan, const Cluster& cluster);
/// simulate_plan or estimate_plan, as `tier` says (the closed-form tier has no plan to run).
SimulatedRun run_plan(const ExecutionPlan& plan, const Cluster& cluster, Tier tier);

/// The closed-form tier's step of one 3D strategy (sim/analytical/pipeline_closed_form.h), no plan
/// of the step. Throws InputError (at /simulation/tier) for a strategy without "parallelism" or
/// replicas that are not identical.
ClosedFormStepEstimate estimate_closed_form(const Scenario& scenario, const Strategy& strategy);

/// One verdict per stage whose representative device needs more than it has ("stage 3 (GPU:0
/// of task:1, and every device of the stage) needs 92.1 GiB, has 80.0 GiB: ..."), the stage that
/// lacks the most bytes first; empty when everything fits.
std::vector<std::string> out_of_memory_verdicts(const ClosedFormStepEstimate& estimate, const Cluster& cluster,
                                                const ParallelismOptions& options);

/// The first of out_of_memory_verdicts, and how many stages lack memory, without formatting the
/// others (a sweep's row keeps one); {"", 0} when everything fits.
std::pair<std::string, size_t> worst_out_of_memory_verdict(const ClosedFormStepEstimate& estimate, const Cluster& cluster,
                                                           const ParallelismOptions& options);

/// The error of a strategy that does not fit, as `run` and `check` give it: "strategy "NAME":
/// does not fit in memory: " + the worst three verdicts and a count of the rest (worst_verdicts),
/// naming `file`. `strategy_name` is empty for a scenario with one strategy.
InputError out_of_memory_error(const std::string& file, const std::string& strategy_name,
                               const std::vector<std::string>& verdicts);

/// Batches, model FLOPs, tokens and MFU of `strategy` at `samples_per_second`
/// (docs/llm-planning.md). Placement-rule strategies count the devices `metrics` shows computing.
TrainingEfficiency training_efficiency(const Scenario& scenario, const Strategy& strategy, double samples_per_second,
                                       const RunMetrics* metrics = nullptr);

/// Whether `evaluate_strategy` can give a scaling baseline: data-parallel strategies and 3D
/// strategies with data > 1.
bool has_scaling_baseline(const Strategy& strategy);

/// TensorFlow's placement log of `strategy` (sim/placement/placement_log.h) in the scenario's
/// TensorFlow version: `placement`, or for data parallelism every replica's ops, as in-graph
/// replication's towers ("tower_<r>/<op>" on replica r's device), variables (VariableV2 ops with
/// parameters) shared once on their parameter server when the strategy has servers.
std::string strategy_placement_log(const Scenario& scenario, const Strategy& strategy, const Placement& placement);

/// Plans and simulates one strategy; for data-parallel strategies also the same strategy on its
/// first replica alone, for 3D strategies on data 1 (the baseline of scaling efficiency) when
/// `with_baseline`.
struct EvaluatedStrategy {
  PlannedScenario planned;
  SimulatedRun run;
  StrategyResult result;
  std::optional<PipelineMetrics> pipeline;  ///< pipeline-parallel strategies only
};
EvaluatedStrategy evaluate_strategy(const Scenario& scenario, const Strategy& strategy, bool with_baseline);

/// Writes the trace and/or report files requested (empty path = skip), atomically.
void write_outputs(const std::string& scenario_name, const ExecutionPlan& plan, const Cluster& cluster,
                   const SimulatedRun& run, const std::string& trace_path, const std::string& report_path,
                   const DataParallelMetrics* data_parallel = nullptr, const PipelineMetrics* pipeline = nullptr,
                   const TrainingEfficiency* efficiency = nullptr);

}  // namespace placesim
