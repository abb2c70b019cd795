// The convergence study's reports: a text table with the verdict (stdout of `placesim
// converge`), convergence.json (every run's figures) and convergence.csv (the loss curve of every
// run, one row per evaluated update). Formats in docs/convergence.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/convergence/convergence_study.h"

namespace placesim {

std::string convergence_text(const ConvergenceStudy& study);
/// The problem, optimiser and target in one sentence (the text's first line).
std::string problem_description(const ConvergenceStudy& study);
/// The text's table as cells: a header row, then one row per run and the reference last.
std::vector<std::vector<std::string>> convergence_table(const ConvergenceStudy& study);
/// The verdict's lines: the fastest run, sync vs async, without remedies, the runs that miss.
std::vector<std::string> convergence_verdict(const ConvergenceStudy& study);
nlohmann::json convergence_json(const std::string& scenario_name, const ConvergenceStudy& study);
std::string convergence_csv(const ConvergenceStudy& study);

}  // namespace placesim
