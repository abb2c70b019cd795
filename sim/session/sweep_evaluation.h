// Evaluating one configuration of a sweep: its typed scenario (the document read once, varied per
// configuration: sim/scenario/scenario_variations.h), planned, and run on one tier (the
// analytical estimate or the SimGrid engine) into a SweepRow.
// A pure function of (sweep, index, tier), so any process — or, later, any MPI rank — can
// evaluate any configuration and the results do not depend on who did.
#pragma once

#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/core/reuse_cache.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/scenario_variations.h"
#include "sim/sweep/sweep_row.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {

struct SweepContext {
  SweepSpec spec;
  /// The document read once; each configuration a variation of it.
  std::shared_ptr<const ScenarioVariations> variations;
  /// Graphs and clusters the configurations share, built once per process (a forked worker
  /// starts with the parent's and fills its own); a cache, so it fills under a const context.
  mutable ScenarioReuse reuse;
  /// By strategy variant: its "parallelism" object as text without its schedule, when that is
  /// GPipe or 1F1B (one micro-batch runs alike under both), and the schedule; text "" for other
  /// strategies and for PipeDream's schedules. `id`: the first variant of the same text, which
  /// the keys below name. `screened`: whether the search tier covers the layout (screen_key);
  /// `per_data_width`: whether its screen cells serve one data width only (its slots move with it,
  /// or its collective algorithm applies to some data-parallel groups only).
  /// `screen_id`: the first variant whose layout is the same but for a ZeRO stage of 0, 1 or 2,
  /// which only shard the optimizer state and gradients and divide the updates, so that the
  /// search tier's screen shares one cell among them (sweep_screen.h; experts' shards too, divided over
  /// their own holders; not for layouts per data width); `zero_stage`: the variant's
  /// "zero" (0 without one: an FSDP layout's stage 3 is its reader's, and such layouts, whose slots
  /// move with the data width, keep their own cells). The screen's layouts also leave out selective
  /// recomputation that selects no op of the model (ScenarioVariations::
  /// selective_recompute_selects_nothing): the plans are the same with it or without it.
  struct Layout {
    std::string text;
    PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
    /// The first layout with this one's cells on the analytical tier (cell_key): the same text,
    /// but for selective recomputation that selects nothing.
    size_t id = 0;
    size_t screen_id = 0;
    int zero_stage = 0;
    bool screened = false;
    bool per_data_width = false;
    /// The variant asks for selective recomputation (its configurations' hardware FLOPs count
    /// the recomputed attention), and whether the screen shares its cells with the layout
    /// without it, as its patterns select no op of the model (fused attention).
    bool selective_recompute = false;
    bool selective_recompute_shares_cells = false;
  };
  std::vector<Layout> layouts;
  /// By configuration: what its one micro-batch's cell depends on ("" = shares none); and the
  /// configurations of each such key, in index order (configurations_sharing_cells).
  std::vector<std::string> cell_keys;
  std::map<std::string, std::vector<size_t>> cell_groups;
  /// The same for the search tier's screen (sim/session/sweep_screen.h: screen_key).
  std::vector<std::string> screen_keys;
  std::map<std::string, std::vector<size_t>> screen_groups;
  /// The screen's step orders by closed_form_step_order_key: configurations of different layouts
  /// with the same stages, chunks, schedule and micro-batches walk the same slots. A cache, per
  /// process, of 2 million slots (about 50 bytes each) and as many orders as fit in them.
  mutable ReuseCache<std::shared_ptr<const ClosedFormStepOrder>> step_orders{{}, 0, 2000000, 2000000};
};

/// Reads the sweep of `document` (the scenario file `file`: relative model and cluster files
/// resolve against its directory) and what its configurations share; `catalog` must outlive the
/// context.
/// Throws InputError at the first problem of the sweep or of a strategy variant.
SweepContext make_sweep_context(Json document, const std::string& file, const HardwareCatalog& catalog);

/// The typed scenario of configuration `index` (InputError: why it cannot be built).
Scenario configuration_scenario(const SweepContext& context, size_t index);

/// A 3D configuration's row from its closed-form `estimate` (sim/analytical/
/// pipeline_closed_form.h) at options `p` and per-replica batch `batch_size` on `cluster`: step,
/// throughput, the busiest stage's slots as compute and the rest (fill, drain, data-parallel
/// reductions, updates) as bubble, the fullest stage's memory, and out_of_memory when a stage
/// does not fit.
void fill_closed_form_row(const ClosedFormStepEstimate& estimate, const Cluster& cluster, const ParallelismOptions& p,
                          int64_t batch_size, SweepRow* row);

/// The row of configuration `index` that cannot be built or sized on `tier`: not_applicable,
/// with `error`'s message (an InputError's without the sweep's file name, which every row shares).
SweepRow not_applicable_row(size_t index, Tier tier, const std::exception& error);

/// Never throws for a configuration that cannot be built or does not fit: those come back as
/// rows with status not_applicable or out_of_memory and the reason.
SweepRow evaluate_configuration(const SweepContext& context, size_t index, Tier tier);

/// The configurations best evaluated together with `index` on `tier`, `index` among them, in
/// index order: on the analytical tier, every 3D configuration of the sweep that differs from it
/// only in its pipeline schedule, GPipe or 1F1B, or in selective recomputation that selects no op
/// (their steps and one-replica baselines read the same one micro-batch cells:
/// sim/analytical/pipeline_closed_form.h); on the search tier, every
/// configuration of its screen key (sim/session/sweep_screen.h); otherwise `index` alone.
/// A function of the sweep only, so any process or MPI rank forms the same groups.
std::vector<size_t> configurations_sharing_cells(const SweepContext& context, size_t index, Tier tier);

/// `indices` as work items on `tier`: the first of each group of configurations_sharing_cells
/// met in `indices`' order (the group is evaluated with it), the other members left out.
std::vector<size_t> work_items(const SweepContext& context, const std::vector<size_t>& indices, Tier tier);

/// evaluate_configuration of each of `indices`, in order, analysing each shared cell once: the
/// rows are the ones evaluate_configuration gives one by one.
std::vector<SweepRow> evaluate_configurations(const SweepContext& context, const std::vector<size_t>& indices,
                                              Tier tier);

}  // namespace placesim
