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
  for (const TracedUpdate& update : trace.updates) ++readers[update.version_read];
  std::map<int64_t, std::vector<double>> snapshots;

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
    auto read = snapshots.find(update.version_read);
    std::fill(gradient.begin(), gradient.end(), 0.0);
    for (const GradientSource& source : update.gradients) {
      auto rows = minibatch_rows(options.seed, source.worker, source.iteration, options.batch_per_worker,
                                 training.samples());
      problem.add_gradient(read->second, training, rows, 1.0, &gradient);
    }
    if (--readers[update.version_read] == 0) snapshots.erase(read);

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
