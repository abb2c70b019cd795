#include "sim/convergence/dataset.h"

#include <cmath>

#include "sim/convergence/random_stream.h"

namespace placesim {
namespace {

// A teacher of this many tanh units: enough curvature that logistic regression plateaus above
// the MLP's loss, few enough that a small MLP can learn it.
constexpr size_t kTeacherUnits = 4;

struct Teacher {
  size_t features = 0;
  std::vector<double> hidden;  ///< kTeacherUnits x features
  std::vector<double> output;  ///< kTeacherUnits
  double logit(const double* x) const {
    double sum = 0;
    for (size_t u = 0; u < kTeacherUnits; ++u) {
      double z = 0;
      for (size_t f = 0; f < features; ++f) z += hidden[u * features + f] * x[f];
      sum += output[u] * std::tanh(z);
    }
    return sum;
  }
};

Teacher make_teacher(size_t features, RandomStream& random) {
  Teacher teacher;
  teacher.features = features;
  // Unit-variance pre-activations: weights of variance 1 / features on standard-normal inputs.
  const double scale = 1.0 / std::sqrt(static_cast<double>(features));
  for (size_t i = 0; i < kTeacherUnits * features; ++i) teacher.hidden.push_back(random.normal() * scale);
  for (size_t u = 0; u < kTeacherUnits; ++u) teacher.output.push_back(random.normal());
  // One dominant unit keeps most of the signal linear-ish, so both models can make progress.
  teacher.output[0] = 3.0;
  return teacher;
}

Dataset sample(const Teacher& teacher, size_t samples, double label_noise, RandomStream& random) {
  Dataset data;
  data.features = teacher.features;
  data.inputs.resize(samples * teacher.features);
  data.labels.resize(samples);
  for (size_t i = 0; i < samples; ++i) {
    double* x = data.inputs.data() + i * teacher.features;
    for (size_t f = 0; f < teacher.features; ++f) x[f] = random.normal();
    bool positive = teacher.logit(x) > 0;
    if (random.uniform() < label_noise) positive = !positive;
    data.labels[i] = positive ? 1.0 : 0.0;
  }
  return data;
}

}  // namespace

GeneratedData generate_data(const DatasetOptions& options) {
  RandomStream random(mix_seed(options.seed, 1));
  Teacher teacher = make_teacher(options.features, random);
  GeneratedData data;
  data.training = sample(teacher, options.training_samples, options.label_noise, random);
  data.evaluation = sample(teacher, options.evaluation_samples, options.label_noise, random);
  return data;
}

std::vector<size_t> minibatch_rows(uint64_t seed, int64_t worker, int64_t iteration, size_t batch, size_t samples) {
  RandomStream random(mix_seed(seed, static_cast<uint64_t>(worker) + 2, static_cast<uint64_t>(iteration)));
  std::vector<size_t> rows(batch);
  for (size_t& row : rows) row = static_cast<size_t>(random.below(samples));
  return rows;
}

}  // namespace placesim
