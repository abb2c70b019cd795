#include "sim/session/automatic_stages.h"

#include <algorithm>
#include <optional>
#include <set>

#include "sim/auto_placement/pipedream_partitioner.h"
#include "sim/core/units_format.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/spec_error_location.h"
#include "sim/session/pipeline.h"

namespace placesim {
namespace {

/// Candidates simulated (the best estimate of each number of stages, 2 to 8, then the next
/// best): the partitioner's estimate proposes, the simulation (fill and drain, queueing at a
/// narrow stage, links shared by transfers and all-reduces) decides.
constexpr size_t kSimulatedCandidates = 8;
/// Simulations of the search around the fastest candidate: one stage boundary moved to the next
/// place either way, kept while the simulation says faster. The estimate adds a boundary's
/// transfers to its stages where the simulation overlaps some and queues others, so it can put a
/// cut a few ops from where the simulation would.
constexpr size_t kLocalSearchSimulations = 12;
/// How far a boundary may move in one step of that search, in places where a stage may end: a
/// cut between a convolution and its activation costs the same transfers as one place on, so a
/// search by single places stops on such plateaus.
constexpr size_t kPlacesMovedAtOnce = 4;

/// "conv1_1 .. pool5 (33 ops)": a stage's ops, first and last.
std::string ops_text(const std::vector<std::string>& ops) {
  if (ops.size() == 1) return ops.front();
  return ops.front() + " .. " + ops.back() + " (" + std::to_string(ops.size()) + " ops)";
}

std::string widths_text(const std::vector<int64_t>& widths) {
  std::string text;
  for (int64_t width : widths) text += (text.empty() ? "" : "-") + std::to_string(width);
  return text;
}

/// `options` with `stages` as its replicated stages.
ParallelismOptions with_stages(ParallelismOptions options, const AutomaticStages& stages) {
  const std::vector<int64_t>& widths = stages.partition.widths;
  options.automatic_stages.reset();
  options.pipeline = static_cast<int64_t>(widths.size());
  options.stage_replicas = widths;
  options.stage_ops = stages.stage_ops;
  options.data = *std::max_element(widths.begin(), widths.end());
  return options;
}

/// The scenario's step throughput with `stages` as the strategy's pipeline (0 when it cannot be
/// planned so, e.g. a stage's ops).
double simulate_stages(const Scenario& scenario, const Strategy& strategy, const ParallelismOptions& asked,
                       const AutomaticStages& stages) {
  Strategy candidate = strategy;
  candidate.parallelism = with_stages(asked, stages);
  try {
    return evaluate_strategy(scenario, candidate, false).result.samples_per_second();
  } catch (const InputError&) {
    return 0.0;
  }
}

/// Around `*best` (simulated at `*fastest`): one stage boundary moved by up to kPlacesMovedAtOnce
/// places either way (the same widths; the best estimates first), the fastest move each round,
/// while the simulation says faster, kLocalSearchSimulations at most; `seen` are the cuts
/// already simulated. Returns what it did, for the note.
std::string search_around(const Scenario& scenario, const Strategy& strategy, const ParallelismOptions& asked,
                          const AutomaticStagesSearch& search, std::set<std::vector<size_t>> seen,
                          AutomaticStages* best, double* fastest) {
  std::string moved;
  size_t budget = kLocalSearchSimulations;
  for (bool improved = true; improved && budget > 0;) {
    improved = false;
    std::optional<AutomaticStages> faster;
    double faster_samples_per_second = *fastest;
    for (AutomaticStages& neighbour : search.neighbours(*best, kPlacesMovedAtOnce)) {
      if (budget == 0) break;
      if (!seen.insert(neighbour.partition.first).second) continue;
      --budget;
      const double samples_per_second = simulate_stages(scenario, strategy, asked, neighbour);
      if (samples_per_second > faster_samples_per_second) {
        faster_samples_per_second = samples_per_second;
        faster = std::move(neighbour);
      }
    }
    if (faster) {
      std::string cuts;
      for (size_t s = 0; s + 1 < faster->stage_ops.size(); ++s) cuts += (s ? " / " : "") + faster->stage_ops[s].back();
      moved += (moved.empty() ? "" : ", ") + std::string("after ") + cuts + " " +
               format_number(faster_samples_per_second, "%.1f");
      *best = std::move(*faster);
      *fastest = faster_samples_per_second;
      improved = true;
    }
  }
  return std::to_string(kLocalSearchSimulations - budget) + " simulated around it" +
         (moved.empty() ? std::string(", none faster") : "; moved the cut while faster: " + moved);
}

}  // namespace

void resolve_automatic_stages(Scenario* scenario, const std::string& only) {
  for (Strategy& strategy : scenario->strategies) {
    if (!strategy.parallelism || !strategy.parallelism->automatic_stages) continue;
    if (!only.empty() && strategy.name != only) continue;
    const ParallelismOptions asked = *strategy.parallelism;
    AutomaticStagesSearch search;
    try {
      search = automatic_pipedream_stages(scenario->graph, scenario->cluster_for(strategy), scenario->run, asked);
    } catch (const SpecError& error) {
      throw locate_spec_error(*scenario, strategy, error);
    }
    // The best estimate of each number of stages first (the estimate ranks pipelines of
    // different depths least well: it has no fill, drain or stall), then the next best.
    std::vector<AutomaticStages> candidates, rest;
    std::set<size_t> depths;
    for (AutomaticStages& candidate : search.candidates) {
      (depths.insert(candidate.partition.widths.size()).second ? candidates : rest).push_back(std::move(candidate));
    }
    for (AutomaticStages& candidate : rest) candidates.push_back(std::move(candidate));
    if (candidates.size() > kSimulatedCandidates) candidates.resize(kSimulatedCandidates);
    // Each candidate simulated as the strategy would be (the closed-form tier builds no plan:
    // there the estimate decides), then the search around the fastest.
    const bool simulated = scenario->run.tier != Tier::kClosedForm;
    size_t chosen = 0;
    double fastest = -1;
    std::string tried, moved;
    if (simulated) {
      std::set<std::vector<size_t>> seen;
      for (size_t c = 0; c < candidates.size(); ++c) {
        const double samples_per_second = simulate_stages(*scenario, strategy, asked, candidates[c]);
        tried += (tried.empty() ? "" : ", ") + widths_text(candidates[c].partition.widths) + " " +
                 (samples_per_second > 0 ? format_number(samples_per_second, "%.1f") : std::string("not plannable")) +
                 " (" + format_seconds(candidates[c].partition.seconds) + ")";
        seen.insert(candidates[c].partition.first);
        if (samples_per_second > fastest) {
          fastest = samples_per_second;
          chosen = c;
        }
      }
      if (fastest > 0) moved = search_around(*scenario, strategy, asked, search, std::move(seen), &candidates[chosen], &fastest);
    }
    // Synchronous data parallelism over the same devices. PipeDream's optimizer may answer one
    // stage on every worker (the paper's Table 1: ResNet-50's "16"): when the number of stages is
    // left to it, a candidate; with a given "pipeline", beside the choice in the note.
    const bool data_parallel_eligible = simulated && asked.automatic_stages.value_or(0) == 0;
    Strategy plain = strategy;
    std::string data_parallel;
    double data_parallel_samples_per_second = 0;
    if (simulated) {
      plain.parallelism.reset();
      DataParallelOptions& options = plain.data_parallel.emplace();
      options.replicas = asked.devices;
      options.algorithm = asked.algorithm;
      options.bucket_bytes = asked.bucket_bytes;
      options.communication = asked.communication;
      try {
        data_parallel_samples_per_second = evaluate_strategy(*scenario, plain, false).result.samples_per_second();
        data_parallel = "synchronous data parallelism over the same " + std::to_string(asked.devices.size()) +
                        " devices simulates at " + format_number(data_parallel_samples_per_second, "%.1f") +
                        " samples/s";
      } catch (const InputError& error) {
        data_parallel = "synchronous data parallelism over the same devices cannot be planned: " + std::string(error.what());
      }
    }
    const std::string candidates_text =
        tried.empty() ? std::string()
                      : "the fastest in simulation of " + std::to_string(candidates.size()) +
                            " pipelines, the best estimate of each number of stages first (samples/s simulated, and the "
                            "estimate per stream's batch: " + tried + "), " + moved;
    if (data_parallel_eligible && data_parallel_samples_per_second > fastest) {
      strategy.parallelism.reset();
      strategy.data_parallel = std::move(plain.data_parallel);
      strategy.chosen_by = "PipeDream's partitioner (\"stage_replicas\": \"auto\", SOSP 2019 section 3.1) chose "
                           "data parallelism, one stage on all " + std::to_string(asked.devices.size()) +
                           " GPUs: " + data_parallel + ", faster than " + candidates_text;
      continue;
    }
    const AutomaticStages& stages = candidates[chosen];
    const PipeDreamPartition& partition = stages.partition;
    *strategy.parallelism = with_stages(asked, stages);
    std::string described;
    for (size_t s = 0; s < partition.widths.size(); ++s) {
      described += (s ? "; " : "") + std::string("stage ") + std::to_string(s) + " " + ops_text(stages.stage_ops[s]) +
                   " on " + std::to_string(partition.widths[s]) + (partition.widths[s] == 1 ? " replica, " : " replicas, ") +
                   format_seconds(partition.stage_seconds[s]);
    }
    strategy.chosen_by = "PipeDream's partitioner (\"stage_replicas\": \"auto\", SOSP 2019 section 3.1) chose " +
                         widths_text(partition.widths) + " over " + std::to_string(asked.data) + " GPUs: " + described +
                         " per stream's batch with its transfers (its estimate)" +
                         (candidates_text.empty() ? std::string() : "; " + candidates_text) +
                         (data_parallel.empty() ? std::string() : "; " + data_parallel);
  }
}

Scenario load_scenario_to_plan(const std::filesystem::path& path, const HardwareCatalog& catalog, const std::string& only) {
  Scenario scenario = load_scenario(path, catalog);
  resolve_automatic_stages(&scenario, only);
  return scenario;
}

}  // namespace placesim
