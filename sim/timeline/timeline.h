// Timeline: when each task of a plan started and ended, in seconds from the start of the run.
// The SimGrid engine writes predicted timelines; the real backend writes measured ones in the
// same type, so metrics, traces and comparisons work on either.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/execution_plan.h"

namespace placesim {

struct TaskInterval {
  double start_seconds = 0;
  double end_seconds = 0;
  double duration() const { return end_seconds - start_seconds; }
};

struct Timeline {
  std::string source;                 ///< "simgrid", "measured/cpu", ...
  std::vector<TaskInterval> tasks;    ///< indexed by TaskId
  double makespan_seconds() const;
};

}  // namespace placesim
