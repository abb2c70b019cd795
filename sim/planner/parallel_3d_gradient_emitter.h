// The end of a 3D plan's step: each (stage, rank)'s gradients, complete after the last
// micro-batch, reduced across the data-parallel replicas in buckets in the order backward
// finishes them (all-reduce; ZeRO 3 reduce-scatter; hybrid sharding: reduce-scatter in the shard
// group, then all-reduce across groups), then one optimizer update per shard, after the stage's
// last slot and its rank's last bucket (optimizer.step() with every gradient reduced); tied weights'
// two copies all-reduced between their stages before both are updated. Under PipeDream's
// schedule, one stage's after every micro-batch instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/planner/parallel_3d_emission.h"

namespace placesim {

/// last_backward[d][v][r]: replica d's task after which op v's gradient on rank r is complete.
using LastBackward = std::vector<std::vector<std::vector<TaskId>>>;

/// Which gradients an emit_gradient_updates call reduces and updates: every stage's (a step's
/// end), or one stage's after one micro-batch (PipeDream), with `tag` ("/mb5") added to the
/// names of the tasks it writes.
struct GradientScope {
  int64_t stage = -1;  ///< -1: every stage
  std::string tag;
  /// The replicas whose gradients are reduced together (PipeDream's replicated stages: the
  /// streams one round of the stage's replicas ran); empty: every simulated replica.
  std::vector<int64_t> replicas;
};

void emit_gradient_updates(Parallel3dEmission* emission, int64_t step, const LastBackward& last_backward,
                           const GradientScope& scope = {});

}  // namespace placesim
