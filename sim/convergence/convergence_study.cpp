#include "sim/convergence/convergence_study.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "sim/convergence/dataset.h"
#include "sim/convergence/update_schedule.h"
#include "sim/core/units_format.h"
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
  run.rows_per_gradient = static_cast<int64_t>(options.batch_per_worker);
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
/// problem has no layers to spread: noted and skipped. Replicated stages of unequal widths
/// (PipelineTimings::stage_replicas): each stage its own staleness
/// (pipedream_replicated_weight_versions) and its own updates (schedule_replicated_stages). No
/// remedies apply (noted when asked).
void add_pipeline_run(const std::string& strategy, const SimulatedTimings& timings, const Problem& problem,
                      const ConvergenceOptions& options, const ReplayOptions& replay_options, ConvergenceStudy* study,
                      const std::function<void(const std::string&, const UpdateTrace&, const ReplayOptions&)>& add) {
  const PipelineTimings& pipeline = *timings.pipeline;
  // A gradient is a micro-batch's: its share of a worker's rows, at its share of the learning
  // rate, so each row weighs as in a data-parallel worker's step.
  ReplayOptions micro_batch_options = replay_options;
  const auto rows = std::max<int64_t>(
      1, std::llround(static_cast<double>(options.batch_per_worker) / static_cast<double>(pipeline.micro_batches)));
  micro_batch_options.batch_per_worker = static_cast<size_t>(rows);
  micro_batch_options.learning_rate =
      replay_options.learning_rate * static_cast<double>(rows) / static_cast<double>(options.batch_per_worker);
  std::vector<int64_t> staleness;
  const bool replicated = !pipeline.stage_replicas.empty();
  std::vector<int64_t> layer_stage, stage_staleness;
  if (timings.asynchronous) {
    const auto layers = static_cast<int64_t>(problem.model->layer_starts().size());
    if (layers < 2) {
      study->notes.push_back(strategy + ": PipeDream's stages need a problem with layers (\"problem\": \"mlp\"); skipped");
      return;
    }
    std::string described;
    const int64_t run_micro_batches = pipeline.micro_batches * timings.simulated_steps;
    for (int64_t s = 0; s < pipeline.stages; ++s) {
      stage_staleness.push_back(pipedream_weight_versions(pipeline.stages, s, run_micro_batches, pipeline.double_buffered,
                                                          pipeline.stage_replicas) - 1);
    }
    for (int64_t l = 0; l < layers; ++l) {
      const int64_t stage = (l * (pipeline.stages - 1) + (layers - 1) / 2) / (layers - 1);
      layer_stage.push_back(stage);
      staleness.push_back(stage_staleness[static_cast<size_t>(stage)]);
      described += (l ? ", " : "") + std::string("layer ") + std::to_string(l) + " on stage " + std::to_string(stage) +
                   (replicated ? " (" + plural(pipeline.stage_replicas[static_cast<size_t>(stage)], "replica") + ", "
                               : " (") +
                   "staleness " + std::to_string(staleness.back()) + ")";
    }
    if (replicated) {
      std::string widths;
      for (int64_t width : pipeline.stage_replicas) widths += (widths.empty() ? "" : "-") + std::to_string(width);
      study->notes.push_back(strategy + ": PipeDream's replicated stages " + widths + ": " + described +
                             "; each stage updates its own layers once per round (a micro-batch of each of its "
                             "replicas' streams), " + std::to_string(pipeline.replicas) + " streams");
    } else {
      study->notes.push_back(strategy + (pipeline.double_buffered ? ": PipeDream-2BW over " : ": PipeDream over ") +
                             std::to_string(pipeline.stages) + " stages: " + described);
    }
  }
  const ConvergenceRemedies& remedies = options.remedies;
  if (remedies.staleness_learning_rate || !remedies.bounded_staleness.empty() || !remedies.backup_workers.empty()) {
    study->notes.push_back(strategy + ": the remedies apply to data-parallel strategies, not to a pipeline's");
  }
  if (pipeline.micro_batches > 1) {
    study->notes.push_back(strategy + ": each gradient is a micro-batch's, " + plural(rows, "row") + " (" +
                           std::to_string(options.batch_per_worker) + " per worker step / " +
                           std::to_string(pipeline.micro_batches) + " micro-batches) at learning rate " +
                           format_number(micro_batch_options.learning_rate, "%g"));
  }
  add("as simulated",
      replicated ? schedule_replicated_stages(timings, layer_stage, stage_staleness, options.max_gradients)
                 : schedule_pipeline(timings, staleness, options.max_gradients),
      micro_batch_options);
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
      add_pipeline_run(strategy.strategy, timings, problem, options, replay_options, &study, add);
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
    auto rows_to_target = [](const ConvergenceRun& run) {
      return static_cast<double>(run.replay.target->applied_gradients) * static_cast<double>(run.rows_per_gradient);
    };
    const double reference = rows_to_target(study.reference);
    for (ConvergenceRun& run : study.runs) {
      if (run.replay.target) run.statistical_efficiency = reference / rows_to_target(run);
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
