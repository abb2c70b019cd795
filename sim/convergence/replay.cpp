#include "sim/convergence/replay.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/convergence/dataset.h"

namespace placesim {

ReplayResult replay(const UpdateTrace& trace, const TrainingProblem& problem, const Dataset& training,
                    const Dataset& evaluation, const ReplayOptions& options) {
  ReplayResult result;
  std::vector<double> parameters = problem.initial_parameters(options.seed);
  // Versions some later update still reads, kept until their last reader has been replayed.
  std::map<int64_t, int64_t> readers;
  std::map<int64_t, std::vector<double>> snapshots;
  const std::vector<size_t> starts = problem.layer_starts();
  if (!trace.layer_staleness.empty() && trace.layer_staleness.size() != starts.size()) {
    throw std::invalid_argument("the trace gives the staleness of " + std::to_string(trace.layer_staleness.size()) +
                                " layers, the problem has " + std::to_string(starts.size()));
  }
  for (size_t u = 0; u < trace.updates.size(); ++u) {
    ++readers[trace.updates[u].version_read];
    for (int64_t staleness : trace.layer_staleness) {
      ++readers[std::max<int64_t>(0, static_cast<int64_t>(u) - staleness)];
    }
  }
  auto release = [&](int64_t version) {
    if (--readers[version] == 0) snapshots.erase(version);
  };
  std::vector<double> composite;

  int64_t gradients = 0, applied = 0;
  auto record = [&](const CurvePoint& base) {
    CurvePoint point = base;
    Evaluation evaluation_now = problem.evaluate(parameters, evaluation);
    point.loss = evaluation_now.loss;
    point.accuracy = evaluation_now.accuracy;
    result.curve.push_back(point);
    if (!result.target && point.loss <= options.target_loss) result.target = point;
  };
  record(CurvePoint{});

  std::vector<double> gradient(problem.parameter_count());
  int64_t every = options.evaluate_every, next_evaluation = every;
  bool thinned = false;
  const auto count = static_cast<int64_t>(trace.updates.size());
  for (int64_t u = 0; u < count; ++u) {
    if (result.target && options.stop_at_target) break;
    const TracedUpdate& update = trace.updates[static_cast<size_t>(u)];
    if (update.version_read > u || update.version_read < 0) {
      throw std::invalid_argument("update " + std::to_string(u) + " reads version " +
                                  std::to_string(update.version_read) + ", not yet written");
    }
    if (readers.count(u)) snapshots[u] = parameters;
    const std::vector<double>* read = &snapshots.find(update.version_read)->second;
    if (!trace.layer_staleness.empty()) {
      // PipeDream: each layer's weights as its stage stashed them, u - staleness updates old.
      composite = *read;
      for (size_t l = 0; l < trace.layer_staleness.size(); ++l) {
        const int64_t version = std::max<int64_t>(0, u - trace.layer_staleness[l]);
        const std::vector<double>& layer = snapshots.at(version);
        const size_t end = l + 1 < starts.size() ? starts[l + 1] : layer.size();
        std::copy(layer.begin() + static_cast<std::ptrdiff_t>(starts[l]), layer.begin() + static_cast<std::ptrdiff_t>(end),
                  composite.begin() + static_cast<std::ptrdiff_t>(starts[l]));
      }
      read = &composite;
    }
    std::fill(gradient.begin(), gradient.end(), 0.0);
    for (const GradientSource& source : update.gradients) {
      auto rows = minibatch_rows(options.seed, source.worker, source.iteration, options.batch_per_worker,
                                 training.samples());
      problem.add_gradient(*read, training, rows, 1.0, &gradient);
    }
    release(update.version_read);
    for (size_t l = 0; l < trace.layer_staleness.size(); ++l) release(std::max<int64_t>(0, u - trace.layer_staleness[l]));

    const int64_t staleness = u - update.version_read;
    double rate = options.learning_rate * update.gradient_weight;
    if (options.scale_learning_rate_by_staleness && staleness > 1) rate /= static_cast<double>(staleness);
    for (size_t i = 0; i < parameters.size(); ++i) parameters[i] -= rate * gradient[i];

    gradients += update.gradients_computed;
    applied += static_cast<int64_t>(update.gradients.size());
    result.staleness.push_back(static_cast<double>(staleness));
    if (options.record_parameters) result.parameters.push_back(parameters);
    if (result.target && !thinned) {
      thinned = true;
      every = std::max(options.evaluate_every, (count - u + kPointsAfterTarget - 1) / kPointsAfterTarget);
      next_evaluation = u + every;
    }
    if (u + 1 == next_evaluation || u + 1 == count) {
      next_evaluation = u + 1 + every;
      CurvePoint point;
      point.updates = u + 1;
      point.gradients = gradients;
      point.applied_gradients = applied;
      point.seconds = update.apply_seconds;
      point.version_read = update.version_read;
      point.staleness = staleness;
      record(point);
    }
  }
  result.final_parameters = parameters;
  return result;
}

}  // namespace placesim
