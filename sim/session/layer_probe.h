// The search screen's layer probes: a layout's one-micro-batch cell for a zoo model of many
// alike layers split whole into model chunks ("stage_split": "layers"), drawn out from the cells
// of the same model at 2 and at 3 layers per chunk (sim/analytical/cell_extrapolation.h): cell
// plans of O(model chunks) layers instead of O(layers).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/graph/op_graph.h"
#include "sim/scenario/scenario.h"
#include "sim/session/sweep_evaluation.h"

namespace placesim {

/// How many layers named `<prefix>.<index>` (the zoo's transformer blocks `h.0`, `h.1`, ...:
/// what "stage_split": "layers" splits) `graph` has; 0 when none, or under several prefixes.
int64_t numbered_layers(const OpGraph& graph);

/// The cell of `scenario` (a configuration's, sized) from two layer probes, when its zoo model's
/// layers are alike and split whole ("stage_split": "layers") into more layers per model chunk
/// than the two probes hold together (more than 5): the cells of the same model at 2 and at 3
/// layers per chunk on the same devices and options, drawn out to its layers. nullopt otherwise,
/// or when a probe cannot be built or drawn out: the caller analyses the whole model, which says
/// why where it cannot.
std::optional<ClosedFormCell> layer_probed_cell(const SweepContext& context, const Scenario& scenario);

}  // namespace placesim
