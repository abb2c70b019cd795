// The discrete-event engine on SimGrid: devices become hosts, cluster links become full-duplex
// SimGrid links (CM02 model: no TCP correction factors, max-min fair sharing), transfers follow
// the cluster's routes. Activities are created only when their task becomes ready, because
// SimGrid 3.32 is superlinear in DAGs built up front (see docs/engine.md).
#pragma once

#include <memory>

#include "sim/engine/engine.h"

namespace placesim {

/// SimGrid allows one engine per process, so each simulation runs in a forked child process that
/// sends its timeline back through a pipe; the engine can be called any number of times.
std::unique_ptr<PlanEngine> make_simgrid_engine();

}  // namespace placesim
