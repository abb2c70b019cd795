#include "sim/convergence/replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "sim/convergence/dataset.h"

namespace placesim {
namespace {

/// The replay of a replicated-stage trace (UpdateTrace::layer_stage): each stage's versions that
/// later gradients read, kept from when the version is written until its last reader has been
/// replayed; each gradient computed on its own mix of them; each update changing its stage's
/// layers only.
class StagedReplay {
 public:
  StagedReplay(const UpdateTrace& trace, const std::vector<size_t>& starts, const std::vector<double>& parameters)
      : layer_stage_(trace.layer_stage), starts_(starts) {
    if (layer_stage_.size() != starts_.size()) {
      throw std::invalid_argument("the trace gives the stage of " + std::to_string(layer_stage_.size()) +
                                  " layers, the problem has " + std::to_string(starts_.size()));
    }
    int64_t stages = 0;
    for (int64_t stage : layer_stage_) {
      if (stage < 0) throw std::invalid_argument("the trace puts a layer on stage " + std::to_string(stage));
      stages = std::max(stages, stage + 1);
    }
    for (const TracedUpdate& update : trace.updates) {
      stages = std::max(stages, update.stage + 1);
      for (const std::vector<int64_t>& versions : update.stage_versions) {
        stages = std::max(stages, static_cast<int64_t>(versions.size()));
      }
    }
    for (const TracedUpdate& update : trace.updates) {
      if (update.stage < 0) throw std::invalid_argument("a replicated-stage trace's update names no stage");
      if (update.stage_versions.size() != update.gradients.size()) {
        throw std::invalid_argument("a replicated-stage update gives the versions of " +
                                    std::to_string(update.stage_versions.size()) + " of its " +
                                    std::to_string(update.gradients.size()) + " gradients");
      }
      for (const std::vector<int64_t>& versions : update.stage_versions) {
        if (static_cast<int64_t>(versions.size()) != stages) {
          throw std::invalid_argument("a gradient gives the versions of " + std::to_string(versions.size()) +
                                      " stages, the trace has " + std::to_string(stages));
        }
        for (int64_t s = 0; s < stages; ++s) ++readers_[{s, versions[static_cast<size_t>(s)]}];
      }
    }
    versions_.assign(static_cast<size_t>(stages), 0);
    stage_gradients_.assign(static_cast<size_t>(stages), 0);
    for (int64_t s = 0; s < stages; ++s) keep(s, parameters);
  }

  /// Replays update `u`: each of its gradients on its own mix of stage versions, summed, changes
  /// only the update's stage's layers. Returns its staleness: the stage's updates applied since
  /// its oldest gradient's read.
  int64_t apply(int64_t u, const TracedUpdate& update, const TrainingProblem& problem, const Dataset& training,
                const ReplayOptions& options, std::vector<double>* gradient, std::vector<double>* parameters) {
    const int64_t stage = update.stage;
    if (stage >= stages() || update.stage_update != version(stage)) {
      throw std::invalid_argument("update " + std::to_string(u) + " is update " + std::to_string(update.stage_update) +
                                  " of stage " + std::to_string(stage) + ", out of that stage's order");
    }
    std::fill(gradient->begin(), gradient->end(), 0.0);
    int64_t oldest = version(stage);
    for (size_t i = 0; i < update.gradients.size(); ++i) {
      const GradientSource& source = update.gradients[i];
      const std::vector<int64_t>& versions = update.stage_versions[i];
      auto rows = minibatch_rows(options.seed, source.worker, source.iteration, options.batch_per_worker, training.samples());
      problem.add_gradient(read(versions), training, rows, 1.0, gradient);
      release(versions);
      oldest = std::min(oldest, versions[static_cast<size_t>(stage)]);
    }
    const int64_t staleness = version(stage) - oldest;
    const double rate = options.learning_rate * update.gradient_weight;
    for (const auto& [begin, end] : ranges(stage, parameters->size())) {
      for (size_t i = begin; i < end; ++i) (*parameters)[i] -= rate * (*gradient)[i];
    }
    ++versions_[static_cast<size_t>(stage)];
    keep(stage, *parameters);
    stage_gradients_[static_cast<size_t>(stage)] += static_cast<int64_t>(update.gradients.size());
    return staleness;
  }

  /// Gradients some stage has applied (computed), and every stage has (applied).
  int64_t gradients_computed() const { return *std::max_element(stage_gradients_.begin(), stage_gradients_.end()); }
  int64_t gradients_applied() const { return *std::min_element(stage_gradients_.begin(), stage_gradients_.end()); }

 private:
  /// [begin, end) of each of `stage`'s layers' parameters.
  std::vector<std::pair<size_t, size_t>> ranges(int64_t stage, size_t parameter_count) const {
    std::vector<std::pair<size_t, size_t>> result;
    for (size_t l = 0; l < starts_.size(); ++l) {
      if (layer_stage_[l] != stage) continue;
      result.emplace_back(starts_[l], l + 1 < starts_.size() ? starts_[l + 1] : parameter_count);
    }
    return result;
  }

  /// The weights a gradient reading each stage at `versions` was computed on.
  const std::vector<double>& read(const std::vector<int64_t>& versions) {
    for (size_t l = 0; l < starts_.size(); ++l) {
      const int64_t stage = layer_stage_[l];
      const int64_t version = versions[static_cast<size_t>(stage)];
      const auto snapshot = snapshots_.find({stage, version});
      if (version < 0 || version > versions_[static_cast<size_t>(stage)] || snapshot == snapshots_.end()) {
        throw std::invalid_argument("a gradient reads version " + std::to_string(version) + " of stage " +
                                    std::to_string(stage) + ", which has " +
                                    std::to_string(versions_[static_cast<size_t>(stage)]) + " updates");
      }
      const std::vector<double>& weights = snapshot->second;
      if (composite_.size() != weights.size()) composite_.resize(weights.size());
      const size_t end = l + 1 < starts_.size() ? starts_[l + 1] : weights.size();
      std::copy(weights.begin() + static_cast<std::ptrdiff_t>(starts_[l]), weights.begin() + static_cast<std::ptrdiff_t>(end),
                composite_.begin() + static_cast<std::ptrdiff_t>(starts_[l]));
    }
    return composite_;
  }

  void release(const std::vector<int64_t>& versions) {
    for (int64_t s = 0; s < stages(); ++s) {
      const std::pair<int64_t, int64_t> key{s, versions[static_cast<size_t>(s)]};
      if (--readers_[key] == 0) snapshots_.erase(key);
    }
  }

  int64_t stages() const { return static_cast<int64_t>(versions_.size()); }
  int64_t version(int64_t stage) const { return versions_.at(static_cast<size_t>(stage)); }
  void keep(int64_t stage, const std::vector<double>& parameters) {
    const std::pair<int64_t, int64_t> key{stage, versions_[static_cast<size_t>(stage)]};
    const auto readers = readers_.find(key);
    if (readers != readers_.end() && readers->second > 0) snapshots_[key] = parameters;
  }

  std::vector<int64_t> layer_stage_;
  std::vector<size_t> starts_;
  std::vector<int64_t> versions_;  ///< by stage: updates applied
  std::vector<int64_t> stage_gradients_;  ///< by stage: gradients applied
  std::map<std::pair<int64_t, int64_t>, int64_t> readers_;  ///< (stage, version): gradients still to read it
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> snapshots_;
  std::vector<double> composite_;
};

}  // namespace

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
  const bool staged = !trace.layer_stage.empty();
  std::optional<StagedReplay> staged_replay;
  if (staged) staged_replay.emplace(trace, starts, parameters);
  if (!staged) {  // a StagedReplay counts its own readers
    for (size_t u = 0; u < trace.updates.size(); ++u) {
      ++readers[trace.updates[u].version_read];
      for (int64_t staleness : trace.layer_staleness) {
        ++readers[std::max<int64_t>(0, static_cast<int64_t>(u) - staleness)];
      }
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
  double latest_seconds = 0;  // of the updates so far (a replicated-stage trace's may come out of time order)
  bool thinned = false;
  const auto count = static_cast<int64_t>(trace.updates.size());
  for (int64_t u = 0; u < count; ++u) {
    if (result.target && options.stop_at_target) break;
    const TracedUpdate& update = trace.updates[static_cast<size_t>(u)];
    if (update.version_read > u || update.version_read < 0) {
      throw std::invalid_argument("update " + std::to_string(u) + " reads version " +
                                  std::to_string(update.version_read) + ", not yet written");
    }
    int64_t staleness = u - update.version_read;
    if (staged) {
      staleness = staged_replay->apply(u, update, problem, training, options, &gradient, &parameters);
      gradients = staged_replay->gradients_computed();
      applied = staged_replay->gradients_applied();
    } else {
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

      double rate = options.learning_rate * update.gradient_weight;
      if (options.scale_learning_rate_by_staleness && staleness > 1) rate /= static_cast<double>(staleness);
      for (size_t i = 0; i < parameters.size(); ++i) parameters[i] -= rate * gradient[i];

      gradients += update.gradients_computed;
      applied += static_cast<int64_t>(update.gradients.size());
    }
    latest_seconds = std::max(latest_seconds, update.apply_seconds);
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
      point.seconds = latest_seconds;
      point.version_read = update.version_read;
      point.staleness = staleness;
      record(point);
    }
  }
  result.final_parameters = parameters;
  return result;
}

}  // namespace placesim
