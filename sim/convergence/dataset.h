// Dataset: the generated binary-classification problem the convergence replay trains on, and the
// minibatch each worker reads at each of its iterations (the same rows under every strategy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace placesim {

struct Dataset {
  size_t features = 0;
  std::vector<double> inputs;  ///< row-major, samples x features
  std::vector<double> labels;  ///< 0 or 1
  size_t samples() const { return labels.size(); }
  const double* row(size_t i) const { return inputs.data() + i * features; }
};

struct DatasetOptions {
  size_t training_samples = 0;
  size_t evaluation_samples = 0;
  size_t features = 0;
  double label_noise = 0;  ///< probability that a label is flipped
  uint64_t seed = 0;
};

struct GeneratedData {
  Dataset training;
  Dataset evaluation;  ///< held out, same distribution; losses and accuracies are measured here
};

/// Inputs are standard normal; labels come from a fixed random teacher (a one-hidden-layer tanh
/// network, so a linear model cannot fit them perfectly), then flipped with `label_noise`.
GeneratedData generate_data(const DatasetOptions& options);

/// The rows worker `worker` reads in its `iteration`-th gradient: `batch` rows drawn with
/// replacement from a stream keyed by (seed, worker, iteration).
std::vector<size_t> minibatch_rows(uint64_t seed, int64_t worker, int64_t iteration, size_t batch, size_t samples);

}  // namespace placesim
