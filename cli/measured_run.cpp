#include "cli/measured_run.h"

#include <cstdlib>
#include <iostream>

#include "real_backend/hosts/host_group.h"
#include "real_backend/runtime/machine_load.h"
#include "real_backend/runtime/speed_probe.h"
#include "sim/core/input_error.h"
#include "sim/plan/plan_json.h"
#include "sim/report/json_report.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {

LoadedPlan load_scenario_or_plan(const std::string& path, const HardwareCatalog& catalog) {
  Json document = parse_json_file(path);
  LoadedPlan loaded;
  if (document.is_object() && document.contains("tasks")) {
    PlanFile file = read_plan_json(JsonReader(document, path));
    loaded.name = file.plan.name;
    loaded.plan = std::move(file.plan);
    loaded.cluster = std::move(file.cluster);
    return loaded;
  }
  Scenario scenario = load_scenario(path, catalog);
  PlannedScenario planned = plan_scenario(scenario);
  for (const auto& note : planned.placement.notes) std::cerr << "placesim: " << note << "\n";
  loaded.name = scenario.name;
  loaded.plan = std::move(planned.plan);
  // The cluster the plan was built on: a strategy may carry its own (issue 22's latent bug).
  loaded.cluster = scenario.cluster_for(scenario.strategies.front());
  return loaded;
}

void add_backend_options(CLI::App* command, BackendOptions* options) {
  command->add_option("--backend", options->backend, "Where to execute: cpu (worker threads, OpenBLAS) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  command->add_option("--warmup", options->warmup_runs, "Untimed runs of the whole plan before timing")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--runs", options->timed_runs, "Timed runs; each task's start and end are the medians")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_flag("-q,--quiet", options->quiet, "No progress on stderr");
  command->add_flag("--share-gpus", options->share_gpus,
                    "cuda: run plan GPU k on GPU k mod (GPUs here), one compute stream per plan GPU");
  command->add_option("--gpu-dispatch", options->gpu_dispatch,
                      "cuda: ahead (enqueue the whole plan with stream/event dependencies, as a framework does) "
                      "or loop (issue each task when its deps have finished)")
      ->check(CLI::IsMember({"ahead", "loop"}))
      ->capture_default_str();
}

real::Backend parse_backend_option(const std::string& text) {
  auto backend = real::parse_backend(text);
  if (!backend) throw InputError("--backend", "", "unknown backend \"" + text + "\" (expected cpu or cuda)");
  return *backend;
}

namespace {
/// Each probe kernel runs at least this long (and 5 calls): about 0.1 s per probe.
constexpr double kProbeSeconds = 0.02;
}  // namespace

SimulatedRun execute_plan(const ExecutionPlan& plan, const Cluster& cluster, const BackendOptions& options) {
  real::ExecutionOptions execution;
  execution.warmup_runs = options.warmup_runs;
  execution.timed_runs = options.timed_runs;
  execution.share_gpus = options.share_gpus;
  execution.dispatch = options.gpu_dispatch == "loop" ? real::GpuDispatch::kLoop : real::GpuDispatch::kAhead;
  // Under mpirun every host runs its part of the plan; rank 0 reports, the others stay quiet.
  real::HostGroup* group = real::launched_by_mpirun() ? real::host_group() : nullptr;
  const bool reporting_rank = !group || group->rank() == 0;
  if (!options.quiet && reporting_rank) {
    execution.progress = [name = plan.name](const std::string& line) {
      std::cerr << "placesim: " << name << ": " << line << std::endl;
    };
  }
  auto executor = real::make_executor(parse_backend_option(options.backend), execution);
  // On one host's CPUs, the machine's kernel rates just before and after the runs, against the
  // profile that predicted them: slowdowns from other virtual machines do not show as load.
  const ClusterDevice* cpu = nullptr;
  for (const auto& device : cluster.devices()) {
    if (!cpu && device.spec.kind == DeviceKind::kCpu) cpu = &device;
  }
  const bool probe_speed = !group && options.backend == "cpu" && cpu;
  std::vector<real::MachineSpeed> speeds;
  if (probe_speed) speeds.push_back(real::probe_machine_speed(kProbeSeconds));
  SimulatedRun run;
  real::MachineLoad load;
  run.timeline = executor->simulate(plan, cluster);
  if (!reporting_rank) std::exit(0);  // rank 0 has the merged timeline and writes the outputs
  if (std::string warning = load.busy_warning(); !warning.empty()) std::cerr << "placesim: " << warning << "\n";
  if (probe_speed) {
    speeds.push_back(real::probe_machine_speed(kProbeSeconds));
    if (std::string drift = real::speed_drift(speeds, real::profile_speed(cpu->spec)); !drift.empty()) {
      std::cerr << "placesim: warning: this machine ran at other rates than its profile \"" << cpu->spec.id
                << "\" says, by more than " << 100 * real::kSpeedTolerance
                << "%, before and after the measurement: " << drift
                << "; the comparison mixes that difference in (calibrate again, or measure on a quiet machine)\n";
    }
  }
  run.metrics = compute_metrics(plan, cluster, run.timeline);
  return run;
}

real::Comparison compare_runs(const std::string& name, const ExecutionPlan& plan, const Cluster& cluster,
                              const SimulatedRun& predicted, const SimulatedRun& measured) {
  Json predicted_report = json_report(name, plan, cluster, predicted.timeline, predicted.metrics);
  Json measured_report = json_report(name, plan, cluster, measured.timeline, measured.metrics);
  return real::compare_reports(predicted_report, "predicted", measured_report, "measured");
}

}  // namespace placesim
