#include "sim/sweep/recommendation.h"

#include <algorithm>

#include "sim/sweep/sweep_format.h"

namespace placesim {

std::vector<size_t> rank_configurations(const std::vector<SweepOutcome>& outcomes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].fits() && outcomes[i].row().samples_per_second > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SweepOutcome& x = outcomes[a];
    const SweepOutcome& y = outcomes[b];
    if (x.acceptable() != y.acceptable()) return x.acceptable();
    if (x.usd_to_train != y.usd_to_train) return x.usd_to_train < y.usd_to_train;
    if (x.time_to_train_seconds != y.time_to_train_seconds) return x.time_to_train_seconds < y.time_to_train_seconds;
    return a < b;
  });
  return order;
}

namespace {

std::string target_text(const SweepSpec& spec) {
  if (!spec.target) return "";
  const SweepTarget& t = *spec.target;
  if (t.metric == "samples_per_second") return "reach " + format_number(t.value) + " samples/s";
  if (t.metric == "tokens_per_second") return "reach " + format_number(t.value) + " tokens/s";
  return "train in " + format_duration(t.value) + " or less";
}

std::string budget_text(const SweepSpec& spec) {
  std::string text;
  if (spec.budget_usd_per_hour) text += format_usd(*spec.budget_usd_per_hour) + "/h";
  if (spec.budget_usd_to_train) text += (text.empty() ? "" : " and ") + format_usd(*spec.budget_usd_to_train) + " to train";
  return text;
}

}  // namespace

Recommendation recommend(const SweepSpec& spec, std::vector<SweepOutcome>* outcomes) {
  Recommendation recommendation;
  for (SweepOutcome& o : *outcomes) o.recommended = false;
  std::vector<size_t> ranking = rank_configurations(*outcomes);
  size_t fitting = ranking.size();
  size_t acceptable = 0;
  for (size_t i : ranking) acceptable += (*outcomes)[i].acceptable() ? 1 : 0;
  std::string conditions = "fit in memory";
  if (spec.target) conditions += ", " + target_text(spec);
  if (spec.budget_usd_per_hour || spec.budget_usd_to_train) conditions += ", stay within " + budget_text(spec);
  const std::string samples = format_number(spec.train_samples) + " samples";
  if (acceptable == 0) {
    std::string reason = "no configuration qualifies: of " + std::to_string(outcomes->size()) + " configurations, " +
                         std::to_string(fitting) + " fit in memory";
    if (fitting > 0) {
      // The closest misses: the fastest one and the cheapest one, and what each lacks.
      size_t fastest = *std::min_element(ranking.begin(), ranking.end(), [&](size_t a, size_t b) {
        return (*outcomes)[a].time_to_train_seconds < (*outcomes)[b].time_to_train_seconds;
      });
      const SweepOutcome& f = (*outcomes)[fastest];
      reason += "; the fastest, configuration " + std::to_string(fastest) + " (" + describe(spec, f.configuration) +
                "), trains " + samples + " in " + format_duration(f.time_to_train_seconds) + " for " +
                format_usd(f.usd_to_train) + " (" + format_number(f.row().samples_per_second) + " samples/s, " +
                format_usd(f.usd_per_hour) + "/h)";
      if (!f.meets_target) reason += ", short of the target (" + target_text(spec) + ")";
      if (!f.within_budget) reason += ", over the budget (" + budget_text(spec) + ")";
    }
    recommendation.reason = reason;
    return recommendation;
  }
  size_t best = ranking.front();
  SweepOutcome& b = (*outcomes)[best];
  b.recommended = true;
  recommendation.index = best;
  std::string reason = "configuration " + std::to_string(best) + " (" + describe(spec, b.configuration) +
                       ") is the cheapest of the " + std::to_string(acceptable) + " of " +
                       std::to_string(outcomes->size()) + " configurations that " + conditions + ": " + samples + " in " +
                       format_duration(b.time_to_train_seconds) + " for " + format_usd(b.usd_to_train) + " (" +
                       format_number(b.row().samples_per_second) + " samples/s at " + format_usd(b.usd_per_hour) + "/h";
  if (b.scaling_efficiency > 0) reason += ", scaling efficiency " + format_number(b.scaling_efficiency * 100) + "%";
  reason += std::string(", ") + (b.simulated ? "simulated" : "analytical estimate") + ")";
  if (acceptable > 1) {
    const SweepOutcome& next = (*outcomes)[ranking[1]];
    double more = b.usd_to_train > 0 ? (next.usd_to_train / b.usd_to_train - 1) * 100 : 0;
    reason += "; the next cheapest, configuration " + std::to_string(ranking[1]) + " (" +
              describe(spec, next.configuration) + "), costs " + format_number(more) + "% more";
    size_t fastest = best;
    for (size_t i : ranking) {
      if ((*outcomes)[i].acceptable() && (*outcomes)[i].time_to_train_seconds < (*outcomes)[fastest].time_to_train_seconds) {
        fastest = i;
      }
    }
    if (fastest != best) {
      const SweepOutcome& f = (*outcomes)[fastest];
      reason += "; the fastest that qualifies, configuration " + std::to_string(fastest) + ", trains in " +
                format_duration(f.time_to_train_seconds) + " for " + format_usd(f.usd_to_train);
    }
  }
  recommendation.reason = reason;
  return recommendation;
}

}  // namespace placesim
