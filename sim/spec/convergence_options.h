// ConvergenceOptions: what `placesim converge` trains and measures (a scenario's "convergence"
// block, docs/convergence.md): the generated problem, the optimizer, the target loss and the
// staleness remedies to compare. Every default is sized so the bundled scenario runs in seconds.
#pragma once

#include <cstdint>
#include <vector>

namespace placesim {

/// The generated problem the replay trains (sim/convergence/training_problem.h).
enum class ProblemKind { kLogistic, kMlp };

struct ConvergenceRemedies {
  /// Async: learning rate divided by each update's staleness (Zhang et al. 2016).
  bool staleness_learning_rate = false;
  /// Async: stale-synchronous parallel bounds to try, in iterations (0 = bulk synchronous).
  std::vector<int64_t> bounded_staleness;
  /// Sync: numbers of slowest gradients to drop each step.
  std::vector<int64_t> backup_workers;
};

struct ConvergenceOptions {
  ProblemKind problem = ProblemKind::kMlp;  // the non-convex case, where staleness hurts most
  // 4096 rows: enough that 8 workers x 32 rows rarely repeat a minibatch, small enough to generate
  // in milliseconds.
  int64_t samples = 4096;
  // 1024 held-out rows: the loss is measured to about +-0.02 (binomial noise of the accuracy).
  int64_t evaluation_samples = 1024;
  int64_t features = 16;      // small enough that one evaluation costs well under a millisecond
  int64_t hidden_units = 16;  // mlp only: as many as features, enough to fit the 4-unit teacher
  // 5% of labels flipped: the best reachable loss stays well above zero, as on real data.
  double label_noise = 0.05;
  int64_t batch_per_worker = 32;  // a common per-worker minibatch for small models
  // 0.1 per worker gradient: plain SGD on this problem converges in a few hundred updates
  // without diverging at the staleness of 8 async workers.
  double learning_rate = 0.1;
  // 0.3 nats: about 0.05 above the loss the MLP settles at on this data (5% of labels flipped);
  // sequential SGD at the default rate reaches it in about 500 gradients (seed 42).
  double target_loss = 0.3;
  // 4000 gradients per run (a sync step of N workers counts N): eight times what sequential SGD
  // needs, so a run slowed by staleness still has room to get there.
  int64_t max_gradients = 4000;
  int64_t evaluate_every = 1;  // every update: time-to-target exact to one update
  uint64_t seed = 1;           // the scenario's run.seed when the block does not give one
  ConvergenceRemedies remedies;
};

}  // namespace placesim
