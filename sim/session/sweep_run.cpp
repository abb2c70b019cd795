#include "sim/session/sweep_run.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sim/core/atomic_file.h"
#include "sim/session/sweep_screen.h"
#include "sim/sweep/pareto_frontier.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/recommendation.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/sweep/result_store.h"
#include "sim/sweep/row_wire.h"

namespace placesim {
namespace {

using RowMap = std::map<std::pair<size_t, Tier>, SweepRow>;

std::vector<size_t> missing(const std::vector<size_t>& indices, Tier tier, const ResultStore& store) {
  std::vector<size_t> left;
  for (size_t i : indices) {
    if (!store.has(i, tier)) left.push_back(i);
  }
  return left;
}

/// The rows of `store` whose (index, tier) `keep` accepts: the store's own map when it accepts
/// every one (nothing copied: a million rows), else a copy of those it accepts, in `copy`.
template <typename Keep>
const RowMap& rows_where(const ResultStore& store, Keep keep, RowMap* copy) {
  const RowMap& rows = store.rows();
  if (std::all_of(rows.begin(), rows.end(), [&](const auto& entry) { return keep(entry.first); })) return rows;
  for (const auto& [key, row] : rows) {
    if (keep(key)) copy->emplace(key, row);
  }
  return *copy;
}

/// What Sweep::evaluate_best_then_recommended evaluated: the best configurations of the first
/// pass, and the ones evaluated after them because the recommendation still stood on a first-pass
/// row.
struct SecondPass {
  size_t best = 0;
  size_t extra = 0;
  /// The store's rows assessed after the pass, when nothing was evaluated since: what the report
  /// assesses unless another pass follows (a million configurations' assessment takes a second).
  std::optional<std::vector<SweepOutcome>> outcomes;
};

/// One run of a sweep: its context, its workers, its store and where it says what it does.
class Sweep {
 public:
  Sweep(const SweepContext& context, SweepWorkers& workers, std::ostream* progress, bool progress_on_terminal,
        ResultStore& store)
      : context_(context), spec_(context.spec), workers_(workers), progress_(progress),
        progress_on_terminal_(progress_on_terminal), store_(store) {}

  /// Evaluates `items` on `tier` and appends each group's rows to the store as it arrives, with a
  /// progress bar unless `quietly`.
  void evaluate(const std::vector<size_t>& items, Tier tier, bool quietly = false) {
    if (items.empty()) return;
    std::unique_ptr<ProgressBar> bar;
    if (progress_ && !quietly) {
      bar = std::make_unique<ProgressBar>(*progress_, to_string(tier), items.size(), progress_on_terminal_);
    }
    // One work item per group of configurations evaluated together; a group's rows that are not
    // wanted (already in the store when resuming) are dropped.
    const std::set<size_t> wanted(items.begin(), items.end());
    const std::vector<size_t> leaders = work_items(context_, items, tier);
    auto on_result = [&](size_t, const std::string& text) {
      std::vector<SweepRow> rows = decode_rows(text);
      std::set<std::pair<size_t, Tier>> taken;  // a group's row appended once, as one row at a time did
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const SweepRow& row) {
                                  return wanted.count(row.index) == 0 || store_.has(row.index, row.tier) ||
                                         !taken.insert({row.index, row.tier}).second;
                                }),
                 rows.end());
      store_.append(rows);
      if (bar) {
        for (size_t i = 0; i < rows.size(); ++i) bar->advance();
      }
    };
    workers_.run(leaders, static_cast<int>(tier), on_result);
    if (bar) bar->finish();
  }

  /// The second pass of "analytical+recheck N" and "search N": evaluates on `exact` the best
  /// `count` of the ranking of `first_pass` (rows of the first pass only, so that a resumed sweep
  /// picks the same ones) that lack an `exact` row; then, while the recommendation has no `exact`
  /// row (the new rows moved the ranking), that configuration too, saying so with
  /// "VERB configuration N as well: WHY", so the recommendation always stands on `exact`.
  SecondPass evaluate_best_then_recommended(const RowMap& first_pass, size_t count, Tier exact,
                                            const std::string& verb, const std::string& why) {
    std::vector<SweepOutcome> outcomes = assess(spec_, first_pass);
    std::vector<size_t> ranking = rank_configurations(outcomes);
    ranking.resize(std::min(ranking.size(), count));
    const std::vector<size_t> best = missing(ranking, exact, store_);
    evaluate(best, exact);
    // `outcomes` assess the store's rows but those of `changed` (configuration indices, which are
    // their positions) when the first pass's rows were the store's: then only they are assessed
    // again (a million configurations' assessment takes a second); otherwise all, once.
    bool current = &first_pass == &store_.rows();
    std::vector<size_t> changed = best;
    SecondPass done{best.size(), 0, std::nullopt};
    for (size_t round = 0; round < spec_.configurations.size(); ++round) {
      if (current) {
        for (size_t i : changed) outcomes[i] = assess_configuration(spec_, store_.rows(), spec_.configurations[i]);
      } else {
        outcomes = assess(spec_, store_.rows());
        current = true;
      }
      const std::optional<size_t> recommended = recommend(spec_, &outcomes).index;
      if (!recommended || store_.has(*recommended, exact)) {
        done.outcomes = std::move(outcomes);
        break;
      }
      ++done.extra;
      if (progress_) *progress_ << "placesim: " << verb << " configuration " << *recommended << " as well: " << why << "\n";
      evaluate({*recommended}, exact, /*quietly=*/true);
      changed = {*recommended};
    }
    return done;
  }

  /// "fidelity": "search N" (docs/capacity-planning.md): screens the configurations of `left` that
  /// the search tier covers and evaluates the others on the analytical tier; then the second pass
  /// on the analytical tier, ranked on the search rows and the analytical rows of configurations
  /// without one. Returns the second pass's assessment of the store's rows (SecondPass::outcomes).
  std::optional<std::vector<SweepOutcome>> search(const std::vector<size_t>& left) {
    std::vector<size_t> screened, exact;
    for (size_t index : left) (screen_key(context_, index).empty() ? exact : screened).push_back(index);
    evaluate(screened, Tier::kSearch);
    evaluate(exact, Tier::kAnalytical);

    // The first pass's rows: the search rows and the analytical rows of configurations without one.
    RowMap copy;
    const RowMap& first_pass = rows_where(
        store_,
        [&](const std::pair<size_t, Tier>& key) {
          return key.second == Tier::kSearch ||
                 (key.second == Tier::kAnalytical && !store_.has(key.first, Tier::kSearch));
        },
        &copy);
    SecondPass done = evaluate_best_then_recommended(
        first_pass, spec_.search, Tier::kAnalytical, "evaluating",
        "after the search's best " + std::to_string(spec_.search) + " the best is a screen's estimate");
    if (progress_) {
      *progress_ << "placesim: screened " << screened.size() << " configuration" << (screened.size() == 1 ? "" : "s")
                 << " on the search tier in this run; evaluated " << exact.size() << " it does not cover, "
                 << done.best << " of the search's best " << spec_.search << " and " << done.extra
                 << " more on the analytical tier\n";
    }
    return std::move(done.outcomes);
  }

  /// "analytical+recheck N": simulates the best N of the analytical pass (ranked on analytical
  /// rows only, so a resumed sweep picks the same ones), then the recommended one if it still
  /// stands on an analytical row. Returns the pass's assessment of the store's rows.
  std::optional<std::vector<SweepOutcome>> recheck() {
    RowMap copy;
    const RowMap& analytical =
        rows_where(store_, [](const std::pair<size_t, Tier>& key) { return key.second == Tier::kAnalytical; }, &copy);
    SecondPass done = evaluate_best_then_recommended(analytical, spec_.recheck, Tier::kSimulated, "simulating",
                                                     "after the re-checks the best is an analytical estimate");
    if (progress_) {
      const size_t simulated = done.best + done.extra;
      *progress_ << "placesim: simulated " << simulated << " configuration" << (simulated == 1 ? "" : "s")
                 << " in this run: " << done.best << " re-check" << (done.best == 1 ? "" : "s")
                 << " of the analytical best " << spec_.recheck << " + " << done.extra
                 << " more to simulate the recommended one\n";
    }
    return std::move(done.outcomes);
  }

 private:
  const SweepContext& context_;
  const SweepSpec& spec_;
  SweepWorkers& workers_;
  std::ostream* progress_;
  bool progress_on_terminal_;
  ResultStore& store_;
};

}  // namespace

std::string sweep_work_item_text(const SweepContext& context, size_t index, Tier tier) {
  const std::vector<size_t> group = configurations_sharing_cells(context, index, tier);
  return encode_rows(tier == Tier::kSearch ? search_rows(context, group) : evaluate_configurations(context, group, tier));
}

SweepRunResult run_sweep(const SweepContext& context, const std::string& scenario_name, SweepWorkers& workers,
                         const SweepRunOptions& options) {
  const SweepSpec& spec = context.spec;
  const std::filesystem::path& out = options.output;
  ResultStore store(out / "results.jsonl", fingerprint(spec.fingerprint_source.dump()));

  std::vector<size_t> all(spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<size_t> left = missing(all, spec.tier, store);
  if (spec.search > 0) left = missing(left, Tier::kSearch, store);  // a screened configuration is done too
  if (options.progress) {
    *options.progress << "placesim: sweep " << scenario_name << ": " << all.size() << " configurations, fidelity "
                      << fidelity_name(spec) << ", " << workers.description();
    if (left.size() < all.size()) {
      *options.progress << "; resuming: " << all.size() - left.size() << " already in "
                        << (out / "results.jsonl").string();
    }
    *options.progress << "\n";
  }
  Sweep sweep(context, workers, options.progress, options.progress_on_terminal, store);
  std::optional<std::vector<SweepOutcome>> assessed;  // the store's rows as a second pass left them
  if (spec.search > 0) {
    assessed = sweep.search(left);
  } else {
    sweep.evaluate(left, spec.tier);
  }
  if (spec.recheck > 0) assessed = sweep.recheck();
  workers.finish();

  SweepReport report;
  report.scenario = scenario_name;
  report.spec = &spec;
  report.outcomes = assessed ? std::move(*assessed) : assess(spec, store.rows());
  mark_pareto_frontier(&report.outcomes);
  report.recommendation = recommend(spec, &report.outcomes);
  SweepRunResult result{report.recommendation.reason, out / "results.csv", out / "summary.md", out / "report.html"};
  write_file_atomically(result.results_csv, sweep_csv(report));
  write_file_atomically(result.summary_md, sweep_summary_markdown(report));
  write_file_atomically(result.report_html, sweep_html(report));
  // A sweep killed between writing a temporary file and renaming it left NAME.tmpPID.N behind.
  for (const char* name : {"results.jsonl", "results.csv", "summary.md", "report.html"}) {
    remove_stale_temporaries(out / name);
  }
  return result;
}

}  // namespace placesim
