// A whole sweep (`placesim sweep`, docs/capacity-planning.md): every configuration of a sweep's
// context evaluated on its fidelity's tier (the search tier's screen and its second pass, the
// analytical tier's re-checks on the simulated one), appended to the resume file as rows arrive
// and skipped when a resumed run finds them there; then the assessment, the Pareto frontier, the
// recommendation and the outputs (results.csv, summary.md, report.html). Where the items run is
// the caller's choice (sweep_workers.h); what the sweep says while it runs goes to a stream the
// caller gives, and nothing else is printed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <string>

#include "sim/session/sweep_evaluation.h"
#include "sim/session/sweep_workers.h"

namespace placesim {

struct SweepRunOptions {
  /// An existing directory: results.jsonl (resume file), results.csv, summary.md, report.html.
  std::filesystem::path output;
  /// Progress bars and notes ("placesim: ..." lines); null: none.
  std::ostream* progress = nullptr;
  bool progress_on_terminal = false;  ///< the bars redraw one line (a terminal) or print lines
};

struct SweepRunResult {
  std::string recommendation;  ///< the recommendation's reason, a sentence
  std::filesystem::path results_csv, summary_md, report_html;
};

/// Runs the sweep of `context` (its scenario named `scenario_name`) on `workers`, made with
/// sweep_work_item_text of the same context as their work, into `options.output`. Throws
/// InputError when the resume file belongs to another sweep or cannot be written,
/// std::runtime_error when a worker fails.
SweepRunResult run_sweep(const SweepContext& context, const std::string& scenario_name, SweepWorkers& workers,
                         const SweepRunOptions& options);

/// The rows of work item `index` on `tier` as a worker sends them back (row_wire.h): the
/// configurations evaluated with it (configurations_sharing_cells), on the search tier the
/// screen's rows (search_rows). What every worker runs, here or on another host.
std::string sweep_work_item_text(const SweepContext& context, size_t index, Tier tier);

}  // namespace placesim
