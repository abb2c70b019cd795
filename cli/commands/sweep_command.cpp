// `placesim sweep`: parses its options, checks the output directory, picks where the work runs
// (forked processes, or the ranks of `mpirun`) and prints the recommendation; the sweep itself is
// sim/session/sweep_run.h.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "cli/command.h"
#include "cli/sweep_ranks.h"
#include "real_backend/hosts/host_group.h"
#include "sim/core/atomic_file.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/sweep_evaluation.h"
#include "sim/session/sweep_run.h"
#include "sim/session/sweep_workers.h"

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

/// The sweep's work items on the ranks of `mpirun` (rank 0, this process, hands them out).
class MpiRanks final : public SweepWorkers {
 public:
  MpiRanks(real::HostGroup& group, Work work) : group_(group), work_(std::move(work)) {}
  void run(const std::vector<size_t>& items, int tier, const OnResult& on_result) override {
    evaluate_over_ranks(group_, items, tier, [&](size_t item) { return work_(item, tier); }, on_result);
  }
  std::string description() const override { return std::to_string(group_.size()) + " MPI ranks"; }
  void finish() override { stop_sweep_ranks(group_); }

 private:
  real::HostGroup& group_;
  Work work_;
};

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
  real::HostGroup* ranks = sweep_ranks();
  auto work = [&context](size_t index, int tier) { return sweep_work_item_text(context, index, Tier(tier)); };
  if (ranks && ranks->rank() != 0) {
    // Only rank 0 keeps the store and writes; the others evaluate what it sends.
    serve_sweep_items(*ranks, work);
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
  std::unique_ptr<SweepWorkers> workers;
  if (ranks) {
    workers = std::make_unique<MpiRanks>(*ranks, work);
  } else {
    workers = std::make_unique<LocalProcesses>(
        options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), work);
  }
  SweepRunOptions run_options;
  run_options.output = out;
  run_options.progress = options.quiet ? nullptr : &std::cerr;
  run_options.progress_on_terminal = ::isatty(STDERR_FILENO) != 0;
  const SweepRunResult result = run_sweep(context, base.name, *workers, run_options);
  if (!options.quiet) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "Recommendation: " << result.recommendation << ".\n"
              << "Wrote " << result.results_csv.string() << ", " << result.summary_md.string() << " and "
              << result.report_html.string() << " (" << std::fixed << std::setprecision(1) << seconds << " s).\n";
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
