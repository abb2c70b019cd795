// Screening a sweep's 3D configurations, the search tier's first pass (docs/llm-planning.md,
// "Search speed"): one micro-batch cell per layout serves every data width and schedule of it.
// Approximate: each configuration takes its layout's stage finishes (gradient reductions and
// updates) at the data width of the configuration that analysed the cell; its slots are that
// cell's to the last bits. Not a tier yet: the closed form (sweep_evaluation.h) gives the rows.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/session/sweep_evaluation.h"

namespace placesim {

struct ScreenedConfiguration {
  size_t index = 0;
  /// The configuration whose cell it took (the first of its layout that could be analysed);
  /// `index` itself for that one, whose screen is its closed form.
  size_t cell_from = 0;
  double step_seconds = 0;
  double samples_per_second = 0;  ///< the whole step's batch (every replica) over its time
  /// The fullest stage's: the cell's, with a ZeRO 1/2 shard's optimizer state (and gradients)
  /// divided by this configuration's shard group.
  double peak_memory_bytes = 0;
  double memory_capacity_bytes = 0;
};

/// What a 3D configuration's screen shares: its node type, GPUs per node, fabric (or one node),
/// precision, micro-batch size and its "parallelism" variant but for the data width and a GPipe
/// or 1F1B schedule. "" for what the screen leaves out: other strategies, PipeDream's schedules,
/// a variant that sets "micro_batches", and layouts whose slots depend on the data width (ZeRO 3,
/// expert parallelism, stages outermost).
std::string screen_key(const SweepContext& context, size_t index);

/// Screens `indices` in order: a layout's first configuration that builds analyses its cell
/// (analyse_3d_cell); the others copy that configuration's options and run, size them for
/// their own GPUs and batch (size_parallelism) and run estimate_3d_step_from_cell, building no
/// scenario. Leaves out configurations with an empty screen_key and those that cannot be built
/// or sized; never throws for them. `cell_seconds` (may be null): wall seconds spent building
/// the cells' configurations and analysing the cells, for the bench.
std::vector<ScreenedConfiguration> screen_configurations(const SweepContext& context,
                                                         const std::vector<size_t>& indices,
                                                         double* cell_seconds = nullptr);

}  // namespace placesim
