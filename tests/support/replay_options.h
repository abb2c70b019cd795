// The convergence replay's options the pipeline replay tests share: a target never reached (every
// update is replayed) and every update's parameters recorded.
#pragma once

#include "sim/convergence/replay.h"

namespace placesim::testing {

/// Learning rate 0.3, 8 rows per gradient, seed 7, target loss 0.01 (not reached), parameters
/// recorded after every update.
inline ReplayOptions recorded_replay_options() {
  ReplayOptions o;
  o.learning_rate = 0.3;
  o.target_loss = 0.01;
  o.batch_per_worker = 8;
  o.seed = 7;
  o.record_parameters = true;
  return o;
}

}  // namespace placesim::testing
