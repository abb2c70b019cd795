#include <algorithm>
#include <cmath>

#include "sim/core/units_format.h"
#include "sim/report/html_escape.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/sweep/report/tier_comparison.h"
#include "sim/sweep/sweep_format.h"

namespace placesim {
namespace {

constexpr size_t kTableRows = 15;

// Names and reasons come from the scenario: Markdown renderers pass HTML through, so a name such
// as "<img src=x onerror=...>" must print as text; '|' and line breaks would split a table row.
std::string md_text(const std::string& text) {
  std::string out;
  for (char c : html_escape(text)) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c == '\n' || c == '\r' ? ' ' : c;
    }
  }
  return out;
}

std::string table_header() {
  return "| # | configuration | samples/s | step | MFU | scaling eff. | $/h | time to train | cost to train | peak memory | "
         "meets |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
}

std::string table_row(const SweepSpec& spec, const SweepOutcome& o) {
  const SweepRow& r = o.row();
  std::string meets = o.acceptable() ? "yes" : (!o.meets_target ? "below target" : "over budget");
  return "| " + std::to_string(o.configuration.index) + (o.recommended ? " **(recommended)**" : "") + " | " +
         md_text(describe(spec, o.configuration)) + " | " + format_number(r.samples_per_second) + " | " +
         format_seconds(r.step_seconds) + " | " + (o.mfu > 0 ? format_number(o.mfu * 100) + "%" : "-") + " | " +
         (o.scaling_efficiency > 0 ? format_number(o.scaling_efficiency * 100) + "%" : "-") + " | " +
         format_usd(o.usd_per_hour) + " | " + format_duration(o.time_to_train_seconds) + " | " +
         format_usd(o.usd_to_train) + " | " + format_bytes(r.peak_memory_bytes) + " | " + meets + " |\n";
}

}  // namespace

std::string sweep_summary_markdown(const SweepReport& report) {
  const SweepSpec& spec = *report.spec;
  size_t fitting = 0, out_of_memory = 0, not_applicable = 0, acceptable = 0, simulated = 0, screened_only = 0;
  for (const auto& o : report.outcomes) {
    if (!o.evaluated()) continue;
    fitting += o.fits() ? 1 : 0;
    out_of_memory += o.row().status == RowStatus::kOutOfMemory ? 1 : 0;
    not_applicable += o.row().status == RowStatus::kNotApplicable ? 1 : 0;
    acceptable += o.acceptable() ? 1 : 0;
    simulated += o.simulated ? 1 : 0;
    screened_only += o.row().tier == Tier::kSearch ? 1 : 0;
  }
  std::string md = "# Capacity plan: " + md_text(report.scenario) + "\n\n";
  md += std::to_string(report.outcomes.size()) + " configurations, fidelity " + fidelity_name(spec) + " (" +
        std::to_string(simulated) + " simulated with SimGrid" +
        (spec.search > 0 ? ", " + std::to_string(screened_only) + " screened only by the search tier (approximate)" : "") +
        "): " + std::to_string(fitting) + " fit in memory, " +
        std::to_string(out_of_memory) + " do not, " + std::to_string(not_applicable) + " cannot be built; " +
        std::to_string(acceptable) + " meet every constraint.\n\n";
  md += "Time and cost to train refer to " + format_number(spec.train_samples) + " samples";
  if (spec.target) md += "; target: " + spec.target->metric + " " + format_number(spec.target->value);
  if (spec.budget_usd_per_hour) md += "; budget " + format_usd(*spec.budget_usd_per_hour) + "/h";
  if (spec.budget_usd_to_train) md += "; budget " + format_usd(*spec.budget_usd_to_train) + " to train";
  md += ".\n\n## Recommendation\n\n" + md_text(report.recommendation.reason) + ".\n\n";

  std::vector<size_t> ranking = rank_configurations(report.outcomes);
  md += "## Best configurations (by cost to train, those meeting the constraints first)\n\n" + table_header();
  for (size_t k = 0; k < std::min(kTableRows, ranking.size()); ++k) md += table_row(spec, report.outcomes[ranking[k]]);

  md += "\n## Pareto frontier (cost to train vs time to train)\n\n" + table_header();
  std::vector<size_t> frontier;
  for (size_t i : ranking) {
    if (report.outcomes[i].pareto) frontier.push_back(i);
  }
  std::sort(frontier.begin(), frontier.end(), [&](size_t a, size_t b) {
    return report.outcomes[a].time_to_train_seconds < report.outcomes[b].time_to_train_seconds;
  });
  for (size_t i : frontier) md += table_row(spec, report.outcomes[i]);

  if (out_of_memory + not_applicable > 0) {
    md += "\n## Configurations that do not fit or cannot be built\n\n| # | configuration | why |\n|---:|---|---|\n";
    size_t listed = 0;
    for (const auto& o : report.outcomes) {
      if (!o.evaluated() || o.fits()) continue;
      if (++listed > kInfeasibleRowsListed) {
        md += "\n... and " + std::to_string(out_of_memory + not_applicable - kInfeasibleRowsListed) +
              " more (results.csv has every configuration's reason).\n";
        break;
      }
      std::string why = o.row().reason;
      for (char& c : why) c = c == '|' ? '/' : c;
      why = md_text(why);
      md += "| " + std::to_string(o.configuration.index) + " | " + md_text(describe(spec, o.configuration)) + " | " +
            (o.row().status == RowStatus::kOutOfMemory ? "out of memory: " : "not applicable: ") + why + " |\n";
    }
  }

  for (const TierComparison& comparison : tier_comparisons(report.outcomes)) {
    std::vector<double> sizes;
    for (const TierComparison::Row& row : comparison.rows) sizes.push_back(std::abs(row.difference_percent));
    std::sort(sizes.begin(), sizes.end());
    md += "\n## " + comparison.title + "\n\n|difference| median " + format_number(sizes[(sizes.size() - 1) / 2]) +
          "%, largest " + format_number(sizes.back()) + "% over " + std::to_string(sizes.size()) + ".\n\n| # | configuration | " +
          comparison.first + " | " + comparison.second + " | difference |\n|---:|---|---:|---:|---:|\n";
    for (const TierComparison::Row& row : comparison.rows) {
      const SweepOutcome& o = *row.outcome;
      md += "| " + std::to_string(o.configuration.index) + " | " + md_text(describe(spec, o.configuration)) + " | " +
            format_seconds(row.first_seconds) + " | " + format_seconds(row.second_seconds) + " | " +
            (row.difference_percent >= 0 ? "+" : "") + format_number(row.difference_percent) + "% |\n";
    }
  }
  md += "\n## Prices (US dollars per device-hour)\n\n";
  for (const NodeType& type : spec.node_types) {
    auto source = spec.prices.device_sources.find(type.device_id);
    md += "- " + md_text(type.device_id) + ": " + format_usd(spec.prices.device_price(type.device_id).value_or(0)) + " — " +
          (source == spec.prices.device_sources.end() ? std::string("-") : md_text(source->second)) + "\n";
  }
  return md;
}

}  // namespace placesim
