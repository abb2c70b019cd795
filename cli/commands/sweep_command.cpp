// `placesim sweep SCENARIO -o OUT`: evaluate every configuration of the scenario's sweep in
// parallel processes, resumably, and write results.csv, summary.md and report.html
// (docs/capacity-planning.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "cli/command.h"
#include "sim/session/sweep_evaluation.h"
#include "sim/session/sweep_screen.h"
#include "cli/sweep_ranks.h"
#include "real_backend/hosts/host_group.h"
#include "sim/core/atomic_file.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/sweep/pareto_frontier.h"
#include "sim/sweep/process_pool.h"
#include "sim/sweep/progress_bar.h"
#include "sim/sweep/recommendation.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/sweep/result_store.h"
#include "sim/sweep/row_wire.h"

namespace placesim {
namespace {

struct SweepCommandOptions {
  std::string scenario;
  std::string output;
  int jobs = 0;
  bool quiet = false;
};

/// Under `mpirun -np N` (N > 1) the ranks of the sweep; null for a single-process sweep.
real::HostGroup* sweep_ranks() {
  real::HostGroup* group = real::launched_by_mpirun() ? real::host_group() : nullptr;
  return group && group->size() > 1 ? group : nullptr;
}

/// The rows of `index` and the configurations evaluated with it (configurations_sharing_cells),
/// as a worker sends them back (row_wire.h); on the search tier, the screen's rows (search_rows).
std::string evaluate_to_text(const SweepContext& context, size_t index, Tier tier) {
  const std::vector<size_t> group = configurations_sharing_cells(context, index, tier);
  return encode_rows(tier == Tier::kSearch ? search_rows(context, group) : evaluate_configurations(context, group, tier));
}

/// Evaluates `items` on `tier` and appends each group's rows to the store as it arrives: on `jobs` local
/// processes, or over the MPI ranks when there are several.
void evaluate(const SweepContext& context, const std::vector<size_t>& items, Tier tier, int jobs, bool quiet,
              ResultStore* store) {
  if (items.empty()) return;
  std::unique_ptr<ProgressBar> bar;
  if (!quiet) {
    bar = std::make_unique<ProgressBar>(std::cerr, to_string(tier), items.size(), ::isatty(STDERR_FILENO) != 0);
  }
  // One work item per group of configurations evaluated together; a group's rows that are not
  // wanted (already in the store when resuming) are dropped.
  const std::set<size_t> wanted(items.begin(), items.end());
  const std::vector<size_t> leaders = work_items(context, items, tier);
  auto work = [&](size_t index) { return evaluate_to_text(context, index, tier); };
  auto on_result = [&](size_t, const std::string& text) {
    std::vector<SweepRow> rows = decode_rows(text);
    std::set<std::pair<size_t, Tier>> taken;  // a group's row appended once, as one row at a time did
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const SweepRow& row) {
                                return wanted.count(row.index) == 0 || store->has(row.index, row.tier) ||
                                       !taken.insert({row.index, row.tier}).second;
                              }),
               rows.end());
    store->append(rows);
    if (bar) {
      for (size_t i = 0; i < rows.size(); ++i) bar->advance();
    }
  };
  if (real::HostGroup* group = sweep_ranks()) {
    evaluate_over_ranks(*group, leaders, static_cast<int>(tier), work, on_result);
  } else {
    run_in_processes(leaders, jobs, work, on_result);
  }
  if (bar) bar->finish();
}

std::vector<size_t> missing(const std::vector<size_t>& indices, Tier tier, const ResultStore& store) {
  std::vector<size_t> left;
  for (size_t i : indices) {
    if (!store.has(i, tier)) left.push_back(i);
  }
  return left;
}

using RowMap = std::map<std::pair<size_t, Tier>, SweepRow>;

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

/// What evaluate_best_then_recommended evaluated: the best configurations of the first pass, and
/// the ones evaluated after them because the recommendation still stood on a first-pass row.
struct SecondPass {
  size_t best = 0;
  size_t extra = 0;
  /// The store's rows assessed after the pass, when nothing was evaluated since: what the report
  /// assesses unless another pass follows (a million configurations' assessment takes a second).
  std::optional<std::vector<SweepOutcome>> outcomes;
};

/// The second pass of "analytical+recheck N" and "search N": evaluates on `exact` the best
/// `count` of the ranking of `first_pass` (rows of the first pass only, so that a resumed sweep
/// picks the same ones) that lack an `exact` row; then, while the recommendation has no `exact`
/// row (the new rows moved the ranking), that configuration too, saying so with
/// "VERB configuration N as well: WHY", so the recommendation always stands on `exact`.
SecondPass evaluate_best_then_recommended(const SweepContext& context,
                                          const RowMap& first_pass, size_t count,
                                          Tier exact, const std::string& verb, const std::string& why, int jobs,
                                          bool quiet, ResultStore* store) {
  const SweepSpec& spec = context.spec;
  std::vector<SweepOutcome> outcomes = assess(spec, first_pass);
  std::vector<size_t> ranking = rank_configurations(outcomes);
  ranking.resize(std::min(ranking.size(), count));
  const std::vector<size_t> best = missing(ranking, exact, *store);
  evaluate(context, best, exact, jobs, quiet, store);
  // `outcomes` assess the store's rows but those of `changed` (configuration indices, which are
  // their positions) when the first pass's rows were the store's: then only they are assessed
  // again (a million configurations' assessment takes a second); otherwise all, once.
  bool current = &first_pass == &store->rows();
  std::vector<size_t> changed = best;
  SecondPass done{best.size(), 0, std::nullopt};
  for (size_t round = 0; round < spec.configurations.size(); ++round) {
    if (current) {
      for (size_t i : changed) outcomes[i] = assess_configuration(spec, store->rows(), spec.configurations[i]);
    } else {
      outcomes = assess(spec, store->rows());
      current = true;
    }
    const std::optional<size_t> recommended = recommend(spec, &outcomes).index;
    if (!recommended || store->has(*recommended, exact)) {
      done.outcomes = std::move(outcomes);
      break;
    }
    ++done.extra;
    if (!quiet) std::cerr << "placesim: " << verb << " configuration " << *recommended << " as well: " << why << "\n";
    evaluate(context, {*recommended}, exact, jobs, true, store);
    changed = {*recommended};
  }
  return done;
}

/// "fidelity": "search N" (docs/capacity-planning.md): screens the configurations of `left` that
/// the search tier covers and evaluates the others on the analytical tier; then the second pass
/// on the analytical tier, ranked on the search rows and the analytical rows of configurations
/// without one.
/// Returns the second pass's assessment of the store's rows (SecondPass::outcomes).
std::optional<std::vector<SweepOutcome>> search(const SweepContext& context, const std::vector<size_t>& left, int jobs,
                                                bool quiet, ResultStore* store) {
  const SweepSpec& spec = context.spec;
  std::vector<size_t> screened, exact;
  for (size_t index : left) (screen_key(context, index).empty() ? exact : screened).push_back(index);
  evaluate(context, screened, Tier::kSearch, jobs, quiet, store);
  evaluate(context, exact, Tier::kAnalytical, jobs, quiet, store);

  // The first pass's rows: the search rows and the analytical rows of configurations without one.
  RowMap copy;
  const RowMap& first_pass = rows_where(
      *store,
      [&](const std::pair<size_t, Tier>& key) {
        return key.second == Tier::kSearch || (key.second == Tier::kAnalytical && !store->has(key.first, Tier::kSearch));
      },
      &copy);
  SecondPass done =
      evaluate_best_then_recommended(context, first_pass, spec.search, Tier::kAnalytical, "evaluating",
                                     "after the search's best " + std::to_string(spec.search) +
                                         " the best is a screen's estimate",
                                     jobs, quiet, store);
  if (!quiet) {
    std::cerr << "placesim: screened " << screened.size() << " configuration" << (screened.size() == 1 ? "" : "s")
              << " on the search tier in this run; evaluated " << exact.size() << " it does not cover, " << done.best
              << " of the search's best " << spec.search << " and " << done.extra << " more on the analytical tier\n";
  }
  return std::move(done.outcomes);
}

int run(const SweepCommandOptions& options, const GlobalOptions& global) {
  auto start = std::chrono::steady_clock::now();
  HardwareCatalog catalog = global.catalog();
  const Json text = parse_json_file(options.scenario);
  JsonReader document(text, options.scenario);
  document.expect_object();
  if (!document.has("sweep")) {
    document.fail("the scenario has no \"sweep\" (see docs/capacity-planning.md)");
  }
  // The scenario without its sweep must be valid on its own (errors name their paths there).
  Scenario base = read_scenario(document, catalog, std::filesystem::path(options.scenario).parent_path());
  const SweepContext context = make_sweep_context(text, options.scenario, catalog);
  const SweepSpec& spec = context.spec;
  real::HostGroup* ranks = sweep_ranks();
  if (ranks && ranks->rank() != 0) {
    // Only rank 0 keeps the store and writes; the others evaluate what it sends.
    serve_sweep_items(*ranks, [&](size_t index, int tier) { return evaluate_to_text(context, index, Tier(tier)); });
    return 0;
  }

  std::filesystem::path out = options.output;
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error || !std::filesystem::is_directory(out)) {
    throw InputError("-o", "", "cannot create the output directory \"" + out.string() + "\"" +
                                   (error ? ": " + error.message() : std::string()));
  }
  // Before any evaluation: a read-only directory or a planted link is refused now, not at the end.
  for (const char* name : {"results.jsonl", "results.csv", "summary.md", "report.html"}) {
    std::string problem = output_path_problem(out / name);
    if (!problem.empty()) throw InputError("-o", "", "cannot write \"" + (out / name).string() + "\": " + problem);
  }
  ResultStore store(out / "results.jsonl", fingerprint(spec.fingerprint_source.dump()));
  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  std::vector<size_t> all(spec.configurations.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<size_t> left = missing(all, spec.tier, store);
  if (spec.search > 0) left = missing(left, Tier::kSearch, store);  // a screened configuration is done too
  if (!options.quiet) {
    std::cerr << "placesim: sweep " << base.name << ": " << all.size() << " configurations, fidelity "
              << fidelity_name(spec)
              << ", " << (ranks ? std::to_string(ranks->size()) + " MPI ranks" : std::to_string(jobs) + " processes");
    if (left.size() < all.size()) std::cerr << "; resuming: " << all.size() - left.size() << " already in " << (out / "results.jsonl").string();
    std::cerr << "\n";
  }
  std::optional<std::vector<SweepOutcome>> assessed;  // the store's rows as a second pass left them
  if (spec.search > 0) {
    assessed = search(context, left, jobs, options.quiet, &store);
  } else {
    evaluate(context, left, spec.tier, jobs, options.quiet, &store);
  }

  if (spec.recheck > 0) {
    // Re-check the best N of the analytical pass (ranking on analytical rows only, so a resumed
    // sweep picks the same ones).
    RowMap copy;
    const RowMap& analytical =
        rows_where(store, [](const std::pair<size_t, Tier>& key) { return key.second == Tier::kAnalytical; }, &copy);
    SecondPass done = evaluate_best_then_recommended(context, analytical, spec.recheck, Tier::kSimulated,
                                                           "simulating",
                                                           "after the re-checks the best is an analytical estimate",
                                                           jobs, options.quiet, &store);
    assessed = std::move(done.outcomes);
    if (!options.quiet) {
      const size_t simulated = done.best + done.extra;
      std::cerr << "placesim: simulated " << simulated << " configuration" << (simulated == 1 ? "" : "s")
                << " in this run: " << done.best << " re-check" << (done.best == 1 ? "" : "s")
                << " of the analytical best " << spec.recheck << " + " << done.extra
                << " more to simulate the recommended one\n";
    }
  }

  if (ranks) stop_sweep_ranks(*ranks);

  SweepReport report;
  report.scenario = base.name;
  report.spec = &spec;
  report.outcomes = assessed ? std::move(*assessed) : assess(spec, store.rows());
  mark_pareto_frontier(&report.outcomes);
  report.recommendation = recommend(spec, &report.outcomes);
  write_file_atomically(out / "results.csv", sweep_csv(report));
  write_file_atomically(out / "summary.md", sweep_summary_markdown(report));
  write_file_atomically(out / "report.html", sweep_html(report));
  // A sweep killed between writing a temporary file and renaming it left NAME.tmpPID.N behind.
  for (const char* name : {"results.jsonl", "results.csv", "summary.md", "report.html"}) remove_stale_temporaries(out / name);
  if (!options.quiet) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "Recommendation: " << report.recommendation.reason << ".\n"
              << "Wrote " << (out / "results.csv").string() << ", " << (out / "summary.md").string() << " and "
              << (out / "report.html").string() << " (" << std::fixed << std::setprecision(1) << seconds << " s).\n";
  }
  return 0;
}

}  // namespace

Command add_sweep_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<SweepCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep", "Capacity planning: evaluate every configuration of the scenario's sweep; recommend the cheapest that "
               "meets the target (docs/capacity-planning.md)");
  command->add_option("scenario", options->scenario, "Scenario JSON file with a \"sweep\"")->required();
  command->add_option("-o,--output", options->output,
                      "Output directory: results.jsonl (resume file), results.csv, summary.md, report.html")
      ->required();
  command->add_option("-j,--jobs", options->jobs, "Worker processes (default: one per core)")->check(CLI::Range(1, 4096));
  command->add_flag("-q,--quiet", options->quiet, "Print nothing but errors (outputs are still written)");
  return {command, [options, &global] { return run(*options, global); }};
}

}  // namespace placesim
