#include "sim/convergence/convergence_study.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "sim/convergence/dataset.h"
#include "sim/convergence/update_schedule.h"
#include "sim/spec/strategy.h"

namespace placesim {
namespace {

struct Problem {
  std::unique_ptr<TrainingProblem> model;
  GeneratedData data;
};

ConvergenceRun replay_run(const std::string& strategy, const std::string& variant, const UpdateTrace& trace,
                          const Problem& problem, const ReplayOptions& options) {
  ConvergenceRun run;
  run.strategy = strategy;
  run.variant = variant;
  run.asynchronous = trace.asynchronous;
  run.timed = trace.timed;
  run.workers = trace.workers;
  run.replay = replay(trace, *problem.model, problem.data.training, problem.data.evaluation, options);
  const auto& staleness = run.replay.staleness;
  if (!staleness.empty()) {
    run.mean_staleness = std::accumulate(staleness.begin(), staleness.end(), 0.0) / static_cast<double>(staleness.size());
    run.max_staleness = *std::max_element(staleness.begin(), staleness.end());
  }
  if (trace.timed && !trace.updates.empty()) {
    run.seconds_per_update = trace.updates.back().apply_seconds / static_cast<double>(trace.updates.size());
    const CurvePoint& until = run.replay.target ? *run.replay.target : run.replay.curve.back();
    if (until.seconds > 0) {
      run.samples_per_second =
          static_cast<double>(until.applied_gradients) * static_cast<double>(options.batch_per_worker) / until.seconds;
    }
  }
  return run;
}

std::string plural(int64_t count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

/// A pipeline's run. PipeDream: the problem's layers map onto the stages input side first (the
/// first layer on stage 0, the last on the last stage, those between spread evenly), and layer l
/// reads its weights as that stage stashed them, K - 1 - stage(l) updates old; PipeDream-2BW's
/// at most 1 (pipedream_weight_versions; every gradient of an update counted as stale as the
/// stage's stalest, an upper bound: only its first K - 1 - s micro-batches are). A single-layer
/// problem has no layers to spread: noted and skipped. No remedies apply (noted when asked).
void add_pipeline_run(const std::string& strategy, const SimulatedTimings& timings, const Problem& problem,
                      const ConvergenceOptions& options, ConvergenceStudy* study,
                      const std::function<void(const std::string&, const UpdateTrace&)>& add) {
  const PipelineTimings& pipeline = *timings.pipeline;
  std::vector<int64_t> staleness;
  if (timings.asynchronous) {
    const auto layers = static_cast<int64_t>(problem.model->layer_starts().size());
    if (layers < 2) {
      study->notes.push_back(strategy + ": PipeDream's stages need a problem with layers (\"problem\": \"mlp\"); skipped");
      return;
    }
    std::string described;
    const int64_t run_micro_batches = pipeline.micro_batches * timings.simulated_steps;
    for (int64_t l = 0; l < layers; ++l) {
      const int64_t stage = (l * (pipeline.stages - 1) + (layers - 1) / 2) / (layers - 1);
      staleness.push_back(
          pipedream_weight_versions(pipeline.stages, stage, run_micro_batches, pipeline.double_buffered) - 1);
      described += (l ? ", " : "") + std::string("layer ") + std::to_string(l) + " on stage " + std::to_string(stage) +
                   " (staleness " + std::to_string(staleness.back()) + ")";
    }
    study->notes.push_back(strategy + (pipeline.double_buffered ? ": PipeDream-2BW over " : ": PipeDream over ") +
                           std::to_string(pipeline.stages) + " stages: " + described);
  }
  const ConvergenceRemedies& remedies = options.remedies;
  if (remedies.staleness_learning_rate || !remedies.bounded_staleness.empty() || !remedies.backup_workers.empty()) {
    study->notes.push_back(strategy + ": the remedies apply to data-parallel strategies, not to a pipeline's");
  }
  add("as simulated", schedule_pipeline(timings, staleness, options.max_gradients));
}

}  // namespace

ConvergenceStudy run_convergence_study(const std::vector<StrategyTimings>& strategies,
                                       const ConvergenceOptions& options) {
  ConvergenceStudy study;
  study.options = options;
  Problem problem;
  problem.model = make_training_problem(options.problem, static_cast<size_t>(options.features),
                                        static_cast<size_t>(options.hidden_units));
  study.problem = problem.model->name();
  study.parameters = problem.model->parameter_count();
  DatasetOptions data;
  data.training_samples = static_cast<size_t>(options.samples);
  data.evaluation_samples = static_cast<size_t>(options.evaluation_samples);
  data.features = static_cast<size_t>(options.features);
  data.label_noise = options.label_noise;
  data.seed = options.seed;
  problem.data = generate_data(data);

  ReplayOptions replay_options;
  replay_options.learning_rate = options.learning_rate;
  replay_options.target_loss = options.target_loss;
  replay_options.batch_per_worker = static_cast<size_t>(options.batch_per_worker);
  replay_options.seed = options.seed;
  replay_options.evaluate_every = options.evaluate_every;

  int64_t workers = 1;
  for (const auto& strategy : strategies) workers = std::max(workers, strategy.timings.workers);
  ReplayOptions reference_options = replay_options;
  reference_options.stop_at_target = true;  // only its samples to the target are used
  study.reference = replay_run("sequential SGD", "no clock, stops at target", sequential_trace(workers, options.max_gradients),
                               problem, reference_options);

  for (const auto& strategy : strategies) {
    const SimulatedTimings& timings = strategy.timings;
    auto add = [&](const std::string& variant, const UpdateTrace& trace, const ReplayOptions& run_options) {
      study.runs.push_back(replay_run(strategy.strategy, variant, trace, problem, run_options));
      study.runs.back().simulated_steps = timings.simulated_steps;
    };
    if (timings.pipeline) {
      add_pipeline_run(strategy.strategy, timings, problem, options, &study, [&](const std::string& variant,
                                                                                const UpdateTrace& trace) {
        add(variant, trace, replay_options);
      });
      continue;
    }
    if (timings.asynchronous) {
      add("as simulated", schedule_async(timings, std::nullopt, options.max_gradients), replay_options);
      if (options.remedies.staleness_learning_rate) {
        ReplayOptions scaled = replay_options;
        scaled.scale_learning_rate_by_staleness = true;
        add("lr / staleness", schedule_async(timings, std::nullopt, options.max_gradients), scaled);
      }
      for (int64_t bound : options.remedies.bounded_staleness) {
        add("bounded staleness " + std::to_string(bound), schedule_async(timings, bound, options.max_gradients),
            replay_options);
      }
    } else {
      add("as simulated", schedule_sync(timings, 0, options.max_gradients), replay_options);
      for (int64_t backups : options.remedies.backup_workers) {
        if (backups >= timings.workers) {
          study.notes.push_back(strategy.strategy + ": " + plural(backups, "backup worker") + " skipped (it has " +
                                plural(timings.workers, "replica") + ")");
          continue;
        }
        add(plural(backups, "backup worker"), schedule_sync(timings, backups, options.max_gradients), replay_options);
      }
    }
  }

  if (study.reference.replay.target) {
    const double reference = static_cast<double>(study.reference.replay.target->applied_gradients);
    for (ConvergenceRun& run : study.runs) {
      if (run.replay.target) run.statistical_efficiency = reference / static_cast<double>(run.replay.target->applied_gradients);
    }
    study.reference.statistical_efficiency = 1;
  }
  return study;
}

const ConvergenceRun* fastest_to_target(const ConvergenceStudy& study, std::optional<bool> asynchronous) {
  const ConvergenceRun* best = nullptr;
  for (const ConvergenceRun& run : study.runs) {
    if (!run.replay.target || (asynchronous && run.asynchronous != *asynchronous)) continue;
    if (!best || run.replay.target->seconds < best->replay.target->seconds) best = &run;
  }
  return best;
}

}  // namespace placesim
