#include "sim/convergence/convergence_report.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/csv_fields.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

std::string problem_line(const ConvergenceStudy& study) {
  const ConvergenceOptions& o = study.options;
  return "Problem: " + study.problem + " (" + std::to_string(study.parameters) + " parameters) on " +
         std::to_string(o.samples) + " generated samples of " + std::to_string(o.features) +
         " features, seed " + std::to_string(o.seed) + "; SGD, learning rate " + format_number(o.learning_rate, "%g") +
         " per worker gradient of " + std::to_string(o.batch_per_worker) + " samples; target loss " +
         format_number(o.target_loss, "%g") + " on " + std::to_string(o.evaluation_samples) + " held-out samples.\n";
}

std::string time_to_target(const ConvergenceRun& run) {
  if (!run.replay.target) return "not reached";
  return run.timed ? format_seconds(run.replay.target->seconds) : "-";
}


}  // namespace

std::string problem_description(const ConvergenceStudy& study) {
  std::string line = problem_line(study);
  line.pop_back();  // the text's line break
  return line;
}

std::vector<std::vector<std::string>> convergence_table(const ConvergenceStudy& study) {
  std::vector<std::vector<std::string>> table = {{"strategy", "variant", "update every", "staleness", "samples/s",
                                                  "stat. eff.", "updates", "gradients", "time to target", "final loss",
                                                  "accuracy"}};
  std::vector<const ConvergenceRun*> rows;
  for (const auto& run : study.runs) rows.push_back(&run);
  rows.push_back(&study.reference);
  for (const auto* run : rows) {
    const auto& target = run->replay.target;
    const CurvePoint& last = run->replay.curve.back();
    table.push_back({run->strategy, run->variant, run->timed ? format_seconds(run->seconds_per_update) : "-",
                     format_number(run->mean_staleness, "%.2f"),
                     run->timed ? format_number(run->samples_per_second, "%.1f") : "-",
                     target ? format_number(run->statistical_efficiency, "%.3f") : "-",
                     target ? std::to_string(target->updates) : "-", target ? std::to_string(target->gradients) : "-",
                     time_to_target(*run), format_number(last.loss, "%.4f"), format_percent(last.accuracy)});
  }
  return table;
}

std::vector<std::string> convergence_verdict(const ConvergenceStudy& study) {
  std::vector<std::string> lines;
  const ConvergenceRun* best = fastest_to_target(study);
  if (!best) {
    lines.push_back("no run reached loss " + format_number(study.options.target_loss, "%g") +
                    "; raise max_gradients or the target_loss, or lower the learning_rate if losses diverge");
    return lines;
  }
  lines.push_back("fastest to loss " + format_number(study.options.target_loss, "%g") + ": " + best->label() + " in " +
                  format_seconds(best->replay.target->seconds) + " (" + format_number(best->samples_per_second, "%.1f") +
                  " samples/s x efficiency " + format_number(best->statistical_efficiency, "%.3f") + ")");
  const ConvergenceRun* sync = fastest_to_target(study, false);
  const ConvergenceRun* async = fastest_to_target(study, true);
  if (sync && async) {
    const bool async_wins = async->replay.target->seconds < sync->replay.target->seconds;
    const ConvergenceRun* winner = async_wins ? async : sync;
    const ConvergenceRun* loser = async_wins ? sync : async;
    lines.push_back(std::string(async_wins ? "asynchronous" : "synchronous") + " wins: " + winner->label() + " " +
                    format_number(loser->replay.target->seconds / winner->replay.target->seconds, "%.2f") +
                    "x sooner than " + loser->label() + " (" + format_seconds(loser->replay.target->seconds) + ")");
  }
  // The strategies as simulated, without remedies.
  const ConvergenceRun *plain_sync = nullptr, *plain_async = nullptr;
  for (const auto& run : study.runs) {
    if (run.variant != "as simulated" || !run.replay.target) continue;
    const ConvergenceRun*& slot = run.asynchronous ? plain_async : plain_sync;
    if (!slot || run.replay.target->seconds < slot->replay.target->seconds) slot = &run;
  }
  if (plain_sync && plain_async && (plain_sync != sync || plain_async != async)) {
    const bool async_wins = plain_async->replay.target->seconds < plain_sync->replay.target->seconds;
    const ConvergenceRun* winner = async_wins ? plain_async : plain_sync;
    const ConvergenceRun* loser = async_wins ? plain_sync : plain_async;
    lines.push_back("without remedies: " + winner->strategy + " " +
                    format_number(loser->replay.target->seconds / winner->replay.target->seconds, "%.2f") +
                    "x sooner than " + loser->strategy + " (" + format_seconds(winner->replay.target->seconds) + " vs " +
                    format_seconds(loser->replay.target->seconds) + ")");
  }
  for (const auto& run : study.runs) {
    if (!run.replay.target) {
      lines.push_back(run.label() + ": loss " + format_number(study.options.target_loss, "%g") + " not reached (best " +
                      format_number(std::min_element(run.replay.curve.begin(), run.replay.curve.end(),
                                                     [](const CurvePoint& a, const CurvePoint& b) { return a.loss < b.loss; })
                                        ->loss,
                                    "%.4f") +
                      ")");
    }
  }
  return lines;
}

std::string convergence_text(const ConvergenceStudy& study) {
  std::string out = problem_line(study);
  int64_t steps = 0;
  for (const auto& run : study.runs) steps = std::max(steps, run.simulated_steps);
  out += "Schedules repeat the " + std::to_string(steps) + " simulated steps periodically, up to " +
         std::to_string(study.options.max_gradients) + " worker gradients per run.\n\n";

  const std::vector<std::vector<std::string>> table = convergence_table(study);
  // Strategy and variant columns as wide as their widest entry, left-aligned; the rest fixed.
  size_t widths[] = {8, 7, 12, 9, 10, 10, 8, 9, 14, 10, 8};
  for (size_t r = 1; r < table.size(); ++r) {
    widths[0] = std::max(widths[0], table[r][0].size());
    widths[1] = std::max(widths[1], table[r][1].size());
  }
  for (const auto& row : table) {
    for (size_t c = 0; c < row.size(); ++c) out += (c == 0 ? "" : "  ") + pad(row[c], widths[c], c < 2);
    out += "\n";
  }
  out += "\nupdate every: simulated time per parameter update (a sync step, or one async gradient); staleness: mean\n"
         "updates applied between a gradient's read and its own update; samples/s: samples aggregated into the\n"
         "parameters per simulated second up to the target; stat. eff.: samples the sequential reference needs /\n"
         "samples this run needs; updates, gradients (dropped ones included): when the target was reached; final\n"
         "loss and accuracy: on the held-out samples after the whole run.\n";
  for (const auto& note : study.notes) out += "note: " + note + "\n";

  out += "\nVerdict (time to target = reference samples / (samples/s x statistical efficiency)):\n";
  for (const auto& line : convergence_verdict(study)) out += "  " + line + "\n";
  return out;
}

nlohmann::json convergence_json(const std::string& scenario_name, const ConvergenceStudy& study) {
  const ConvergenceOptions& o = study.options;
  nlohmann::json remedies = {{"staleness_learning_rate", o.remedies.staleness_learning_rate},
                             {"bounded_staleness", o.remedies.bounded_staleness},
                             {"backup_workers", o.remedies.backup_workers}};
  nlohmann::json options = {{"problem", study.problem},
                            {"parameters", study.parameters},
                            {"samples", o.samples},
                            {"evaluation_samples", o.evaluation_samples},
                            {"features", o.features},
                            {"label_noise", o.label_noise},
                            {"batch_per_worker", o.batch_per_worker},
                            {"learning_rate", o.learning_rate},
                            {"target_loss", o.target_loss},
                            {"max_gradients", o.max_gradients},
                            {"evaluate_every", o.evaluate_every},
                            {"seed", o.seed},
                            {"remedies", remedies}};
  if (o.problem == ProblemKind::kMlp) options["hidden_units"] = o.hidden_units;
  auto point_json = [](const CurvePoint& p) {
    return nlohmann::json{{"updates", p.updates},           {"gradients", p.gradients},
                          {"applied_gradients", p.applied_gradients}, {"simulated_seconds", p.seconds},
                          {"loss", p.loss},                 {"accuracy", p.accuracy}};
  };
  auto run_json = [&](const ConvergenceRun& run) {
    nlohmann::json entry = {{"strategy", run.strategy},
                            {"variant", run.variant},
                            {"mode", run.asynchronous ? "async" : "sync"},
                            {"workers", run.workers},
                            {"rows_per_gradient", run.rows_per_gradient},
                            {"timed", run.timed},
                            {"simulated_steps", run.simulated_steps},
                            {"seconds_per_update", run.seconds_per_update},
                            {"staleness", {{"mean", run.mean_staleness}, {"max", run.max_staleness}}},
                            {"samples_per_second", run.samples_per_second},
                            {"statistical_efficiency", run.statistical_efficiency},
                            {"final", point_json(run.replay.curve.back())},
                            {"target", run.replay.target ? point_json(*run.replay.target) : nlohmann::json(nullptr)}};
    return entry;
  };
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : study.runs) runs.push_back(run_json(run));
  nlohmann::json result = {{"scenario", scenario_name},
                           {"options", options},
                           {"reference", run_json(study.reference)},
                           {"runs", runs},
                           {"notes", study.notes}};
  if (const ConvergenceRun* best = fastest_to_target(study)) {
    result["fastest"] = {{"strategy", best->strategy}, {"variant", best->variant},
                         {"simulated_seconds", best->replay.target->seconds}};
  } else {
    result["fastest"] = nullptr;
  }
  return result;
}

std::string convergence_csv(const ConvergenceStudy& study) {
  std::string out = "strategy,variant,mode,update,gradients,applied_gradients,simulated_seconds,version_read,staleness,loss,accuracy\n";
  auto quoted = [](const std::string& text) {  // always quoted; a name a spreadsheet would run is neutralised
    std::string q = "\"";
    for (char c : neutralise_formula(text)) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::vector<const ConvergenceRun*> rows;
  for (const auto& run : study.runs) rows.push_back(&run);
  rows.push_back(&study.reference);
  for (const auto* run : rows) {
    const std::string prefix =
        quoted(run->strategy) + "," + quoted(run->variant) + "," + (run->asynchronous ? "async" : "sync") + ",";
    for (const CurvePoint& p : run->replay.curve) {
      out += prefix + std::to_string(p.updates) + "," + std::to_string(p.gradients) + "," +
             std::to_string(p.applied_gradients) + "," + (run->timed ? format_number(p.seconds, "%.9g") : "") + "," +
             std::to_string(p.version_read) + "," + std::to_string(p.staleness) + "," + format_number(p.loss, "%.9g") + "," +
             format_number(p.accuracy, "%.6g") + "\n";
    }
  }
  return out;
}

}  // namespace placesim
