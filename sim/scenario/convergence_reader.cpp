#include "sim/scenario/convergence_reader.h"

#include <algorithm>
#include <string>

namespace placesim {
namespace {

// Bounds that keep one replay in memory and seconds: the data set is samples x features doubles
// (at most 80 MB), and every gradient costs batch x parameters multiply-adds.
constexpr int64_t kMaxSamples = 1000000;
constexpr int64_t kMaxFeatures = 1024;
constexpr int64_t kMaxDatasetValues = 10000000;
constexpr int64_t kMaxHiddenUnits = 1024;
constexpr int64_t kMaxGradients = 1000000;

std::vector<int64_t> integer_list(const JsonReader& block, const std::string& key, int64_t min_value, int64_t max_value) {
  std::vector<int64_t> values;
  if (auto list = block.find(key)) {
    list->expect_array();
    for (const auto& element : list->elements()) values.push_back(element.as_integer(min_value, max_value));
  }
  return values;
}

}  // namespace

ConvergenceOptions read_convergence(const JsonReader& block, const Scenario& scenario) {
  block.expect_object();
  block.reject_unknown_keys({"problem", "samples", "evaluation_samples", "features", "hidden_units", "label_noise",
                             "batch_per_worker", "learning_rate", "target_loss", "max_gradients", "evaluate_every",
                             "seed", "remedies"});
  ConvergenceOptions options;
  options.problem = block.choice_or("problem", {"logistic", "mlp"}, "mlp") == "logistic" ? ProblemKind::kLogistic
                                                                                       : ProblemKind::kMlp;
  options.samples = block.integer_or("samples", options.samples, 1, kMaxSamples);
  options.evaluation_samples = block.integer_or("evaluation_samples", options.evaluation_samples, 1, kMaxSamples);
  options.features = block.integer_or("features", options.features, 1, kMaxFeatures);
  if (std::max(options.samples, options.evaluation_samples) * options.features > kMaxDatasetValues) {
    block.at(options.samples >= options.evaluation_samples ? "samples" : "evaluation_samples")
        .fail(std::to_string(std::max(options.samples, options.evaluation_samples)) + " samples x " +
              std::to_string(options.features) + " features is more than the " + std::to_string(kMaxDatasetValues) +
              " values a generated data set may hold");
  }
  if (block.has("hidden_units") && options.problem != ProblemKind::kMlp) {
    block.at("hidden_units").fail("\"hidden_units\" applies to the mlp problem only");
  }
  options.hidden_units = block.integer_or("hidden_units", options.hidden_units, 1, kMaxHiddenUnits);
  if (auto noise = block.find("label_noise")) {
    options.label_noise = noise->as_non_negative_number();
    if (options.label_noise >= 0.5) noise->fail("label_noise must be below 0.5 (at 0.5 the labels carry no signal)");
  }
  options.batch_per_worker = block.integer_or("batch_per_worker", options.batch_per_worker, 1, options.samples);
  // Plain SGD on these normalised problems diverges far below a rate of 100 (the bundled
  // scenarios use 0.1 and 1); the loss is binary cross-entropy, ln 2 = 0.69 nats at chance, so
  // a target above 10 nats (confidently wrong on almost every row) is a typo or another unit.
  constexpr double kMaxLearningRate = 100, kMaxTargetLossNats = 10;
  if (auto rate = block.find("learning_rate")) options.learning_rate = rate->at_most(rate->as_positive_number(), kMaxLearningRate);
  if (auto loss = block.find("target_loss")) options.target_loss = loss->at_most(loss->as_positive_number(), kMaxTargetLossNats);
  options.max_gradients = block.integer_or("max_gradients", options.max_gradients, 1, kMaxGradients);
  options.evaluate_every = block.integer_or("evaluate_every", options.evaluate_every, 1, options.max_gradients);
  options.seed = static_cast<uint64_t>(block.integer_or("seed", static_cast<int64_t>(scenario.run.seed), 0));

  int64_t sync_replicas = 0;
  bool data_parallel = false;
  for (const Strategy& strategy : scenario.strategies) {
    data_parallel = data_parallel || (strategy.parallelism && strategy.parallelism->pipeline > 1);  // a pipeline
    if (!strategy.data_parallel) continue;
    data_parallel = true;
    if (strategy.data_parallel->mode == SyncMode::kSync) {
      sync_replicas = std::max(sync_replicas, static_cast<int64_t>(strategy.data_parallel->replicas.size()));
    }
  }
  if (!data_parallel) {
    block.fail("convergence needs at least one strategy with \"data_parallel\" or a \"parallelism\" block with "
               "\"pipeline\" >= 2");
  }
  if (scenario.run.kind != StepKind::kTraining) block.fail("convergence needs run.mode \"training\"");

  if (auto remedies = block.find("remedies")) {
    remedies->expect_object();
    remedies->reject_unknown_keys({"staleness_learning_rate", "bounded_staleness", "backup_workers"});
    options.remedies.staleness_learning_rate = remedies->bool_or("staleness_learning_rate", false);
    options.remedies.bounded_staleness = integer_list(*remedies, "bounded_staleness", 0, kMaxGradients);
    options.remedies.backup_workers = integer_list(*remedies, "backup_workers", 1, kMaxGradients);
    for (size_t i = 0; i < options.remedies.backup_workers.size(); ++i) {
      const int64_t backups = options.remedies.backup_workers[i];
      if (backups >= sync_replicas) {
        remedies->at("backup_workers").at_index(i).fail(
            std::to_string(backups) + " backup workers would drop every gradient: " +
            (sync_replicas == 0 ? std::string("no strategy is synchronous data parallel")
                                : "the synchronous strategies have at most " + std::to_string(sync_replicas) + " replicas"));
      }
    }
  }
  return options;
}

}  // namespace placesim
