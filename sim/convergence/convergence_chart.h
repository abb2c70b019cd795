// convergence.html: a self-contained page (inline SVG, no script) with the loss against simulated
// time of every run, synchronous runs and asynchronous runs in two panels side by side on the
// same axes, the target loss as a dashed line, and the summary table.
#pragma once

#include <string>

#include "sim/convergence/convergence_study.h"

namespace placesim {

std::string convergence_html(const std::string& scenario_name, const ConvergenceStudy& study);

}  // namespace placesim
