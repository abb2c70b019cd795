// convergence.html: a self-contained page (inline SVG, no script) with the held-out loss against
// simulated time of every run, synchronous and asynchronous runs in two panels side by side on
// the same axes (nice ticks, axis labels), the target loss as a dashed line, each run's time to
// target marked on its curve, a legend under each panel, and the table and verdict as HTML.
#pragma once

#include <string>

#include "sim/convergence/convergence_study.h"

namespace placesim {

std::string convergence_html(const std::string& scenario_name, const ConvergenceStudy& study);

}  // namespace placesim
