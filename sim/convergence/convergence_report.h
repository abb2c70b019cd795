// The convergence study's reports: a text table with the verdict (stdout of `placesim
// converge`), convergence.json (every run's figures) and convergence.csv (the loss curve of every
// run, one row per evaluated update). Formats in docs/convergence.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/convergence/convergence_study.h"

namespace placesim {

std::string convergence_text(const ConvergenceStudy& study);
nlohmann::json convergence_json(const std::string& scenario_name, const ConvergenceStudy& study);
std::string convergence_csv(const ConvergenceStudy& study);

}  // namespace placesim
