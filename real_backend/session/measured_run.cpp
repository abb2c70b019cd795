#include "real_backend/session/measured_run.h"

#include <sstream>

#include "real_backend/hosts/host_group.h"
#include "real_backend/runtime/machine_load.h"
#include "real_backend/runtime/speed_probe.h"
#include "sim/session/automatic_stages.h"
#include "sim/core/input_error.h"
#include "sim/plan/plan_json.h"
#include "sim/report/metrics.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {

LoadedPlan load_scenario_or_plan(const std::string& path, const HardwareCatalog& catalog,
                                 const std::function<void(const std::string&)>& note) {
  Json document = parse_json_file(path);
  LoadedPlan loaded;
  if (document.is_object() && document.contains("tasks")) {
    PlanFile file = read_plan_json(JsonReader(document, path));
    loaded.name = file.plan.name;
    loaded.plan = std::move(file.plan);
    loaded.cluster = std::move(file.cluster);
    return loaded;
  }
  Scenario scenario = load_scenario_to_plan(path, catalog);
  PlannedScenario planned = plan_scenario(scenario);
  if (note) {
    for (const auto& line : planned.placement.notes) note(line);
  }
  loaded.name = scenario.name;
  loaded.plan = std::move(planned.plan);
  // The cluster the plan was built on: a strategy may carry its own (issue 22's latent bug).
  loaded.cluster = scenario.cluster_for(scenario.strategies.front());
  return loaded;
}

namespace {
/// Each probe kernel runs at least this long (and 5 calls): about 0.1 s per probe.
constexpr double kProbeSeconds = 0.02;
}  // namespace

MeasuredRun execute_plan(const ExecutionPlan& plan, const Cluster& cluster, const MeasuredRunOptions& options) {
  real::ExecutionOptions execution;
  execution.warmup_runs = options.warmup_runs;
  execution.timed_runs = options.timed_runs;
  execution.share_gpus = options.share_gpus;
  execution.dispatch = options.gpu_dispatch;
  // Under mpirun every host runs its part of the plan; rank 0 reports, the others stay quiet.
  real::HostGroup* group = real::launched_by_mpirun() ? real::host_group() : nullptr;
  MeasuredRun measured;
  measured.reporting_rank = !group || group->rank() == 0;
  if (options.progress && measured.reporting_rank) execution.progress = options.progress;
  auto executor = real::make_executor(options.backend, execution);
  // On one host's CPUs, the machine's kernel rates just before and after the runs, against the
  // profile that predicted them: slowdowns from other virtual machines do not show as load.
  const ClusterDevice* cpu = nullptr;
  for (const auto& device : cluster.devices()) {
    if (!cpu && device.spec.kind == DeviceKind::kCpu) cpu = &device;
  }
  const bool probe_speed = !group && options.backend == real::Backend::kCpu && cpu;
  std::vector<real::MachineSpeed> speeds;
  if (probe_speed) speeds.push_back(real::probe_machine_speed(kProbeSeconds));
  real::MachineLoad load;
  measured.run.timeline = executor->simulate(plan, cluster);
  if (!measured.reporting_rank) return measured;  // rank 0 has the merged timeline
  auto warn = [&](const std::string& line) {
    if (options.warning) options.warning(line);
  };
  if (std::string busy = load.busy_warning(); !busy.empty()) warn(busy);
  if (probe_speed) {
    speeds.push_back(real::probe_machine_speed(kProbeSeconds));
    if (std::string drift = real::speed_drift(speeds, real::profile_speed(cpu->spec)); !drift.empty()) {
      std::ostringstream line;
      line << "warning: this machine ran at other rates than its profile \"" << cpu->spec.id << "\" says, by more than "
           << 100 * real::kSpeedTolerance << "%, before and after the measurement: " << drift
           << "; the comparison mixes that difference in (calibrate again, or measure on a quiet machine)";
      warn(line.str());
    }
  }
  measured.run.metrics = compute_metrics(plan, cluster, measured.run.timeline);
  return measured;
}

real::ComparedRun compared_run(const ExecutionPlan& plan, const Cluster& cluster, const SimulatedRun& run) {
  real::ComparedRun compared{plan.name, run.timeline.source, run.metrics.step_time_seconds, {}};
  compared.tasks.reserve(plan.tasks.size());
  for (const Task& task : plan.tasks) {
    compared.tasks.push_back({task.name,
                              task.kind == TaskKind::kCompute ? to_string(task.op_kind) : to_string(task.kind),
                              cluster.device(task.device).name.canonical(), run.timeline.tasks[task.id].duration()});
  }
  return compared;
}

real::Comparison compare_runs(const ExecutionPlan& plan, const Cluster& cluster, const SimulatedRun& predicted,
                              const SimulatedRun& measured) {
  return real::compare_runs(compared_run(plan, cluster, predicted), compared_run(plan, cluster, measured));
}

}  // namespace placesim
