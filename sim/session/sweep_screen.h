// The search tier of a sweep's 3D configurations (docs/llm-planning.md, "Search speed"): one
// micro-batch cell per layout serves every data width, GPipe/1F1B schedule and ZeRO stage up to 2
// of it, each configuration costing only its recurrence and memory pass. Approximate: each
// configuration takes its layout's stage finishes (gradient reductions and updates) at the data
// width and ZeRO stage of the configuration that analysed the cell, and its slots as priced at
// that configuration's batch. A sweep's
// "fidelity": "search N" screens with it, then evaluates the best N on the analytical tier.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/session/sweep_evaluation.h"

namespace placesim {

struct ScreenedConfiguration {
  /// The configuration whose cell it took (the first of its layout that could be analysed):
  /// `row.index` itself for that one, whose screen is its closed form, and for one that cannot
  /// be built or sized.
  size_t cell_from = 0;
  /// Tier kSearch. Ok or out_of_memory: step, throughput, breakdown and MFU inputs as the closed
  /// form gives them (sweep_evaluation.h: fill_closed_form_row); peak memory the fullest stage's,
  /// the cell's with the optimizer state (ZeRO 1 and 2) and the gradients (ZeRO 2) divided by
  /// this configuration's shard groups (an expert's: its holders in one) instead of the cell's;
  /// no one-replica baseline (single_replica_samples_per_second
  /// 0), as the step sees the data width only through the cell's stage finishes.
  /// not_applicable: why it cannot be built or sized.
  SweepRow row;
};

/// What a 3D configuration's screen shares (SweepContext::screen_keys): its node type, GPUs per
/// node, fabric (or one node), precision, micro-batch size and its "parallelism" variant but for
/// the data width, a GPipe or 1F1B schedule, selective recomputation whose patterns select no op
/// of the model (fused attention: the same plans; each configuration's hardware FLOPs its own)
/// and a ZeRO stage of 0, 1 or 2 (the same slots; the
/// updates, 1/shards of the parameters from stage 1, are the cell's stage's; an expert's shards
/// divide over its holders, the rest over the shard group); for layouts whose slots move with the
/// data width (ZeRO 3, FSDP, stages outermost) or whose collective algorithm needs some group
/// shape (halving-doubling, ...) also its node count, so their cells serve only other schedules
/// and batches. "" for what the screen leaves out: other strategies,
/// PipeDream's schedules and a variant that sets "micro_batches".
const std::string& screen_key(const SweepContext& context, size_t index);

/// Screens `indices`, each key's narrowest data width first (then in order): a layout's first
/// configuration that builds analyses its cell (analyse_3d_cell, or for a deep model of alike
/// whole-layer stages from two shallow probes of it, layer_probe.h); the others copy that
/// configuration's options and run, size them for their own GPUs and batch (size_parallelism)
/// and run estimate_3d_step_from_cell, building no scenario. Leaves out configurations with an empty screen_key and those whose sizing no longer
/// fits the cell (cell_fits); a configuration that cannot be built or sized is a not_applicable
/// row, as evaluate_configuration gives it (other exceptions are bugs, and propagate). Rows come
/// in the order of `indices`. `cell_seconds` (may be null): wall seconds spent building the
/// cells' configurations and analysing the cells, for the bench.
std::vector<ScreenedConfiguration> screen_configurations(const SweepContext& context,
                                                         const std::vector<size_t>& indices,
                                                         double* cell_seconds = nullptr);

/// The search tier's rows of `indices`, in order: the screen's, and for what it leaves out the
/// analytical tier's (evaluate_configurations), so that every configuration has a row.
std::vector<SweepRow> search_rows(const SweepContext& context, const std::vector<size_t>& indices);

}  // namespace placesim
