// A layout's one-micro-batch cell (pipeline_closed_form.h) for a model of many identical layers,
// from the cells of two shallower versions of it (the search screen's layer probes). With every
// model chunk holding the same number k of identical layers, each number a cell records (a
// slot alone, a delay, a stage's finish, a peak of live buffers, the static memory, what a
// micro-batch keeps) is what the chunk's ends cost plus k times what one layer adds, so two
// cells at k1 < k2 layers per chunk give it at any k by the line through them, provided both
// have the same shape (stages, chunks, senders, slot order) and agree on what layers do not
// change (capacities, the lockstep GEMM pace).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/analytical/pipeline_closed_form.h"

namespace placesim {

/// The value at `layers` on the line through (shallow_layers, shallow_value) and (deep_layers,
/// deep_value): what extrapolate_cell gives each number of a cell, and what a caller checks the
/// model's own totals against.
double at_layers(double shallow_value, int64_t shallow_layers, double deep_value, int64_t deep_layers, int64_t layers);

/// The cell at `layers` from `shallow` at `shallow_layers` and `deep` at `deep_layers`
/// (shallow_layers < deep_layers; any counts proportional to the layers per chunk will do):
/// every recorded number on the line through the two, the task count rounded. nullopt when the
/// two cells differ in shape or in a number the layers cannot change, or a number would come out
/// negative: the caller then analyses the cell itself.
std::optional<ClosedFormCell> extrapolate_cell(const ClosedFormCell& shallow, int64_t shallow_layers,
                                               const ClosedFormCell& deep, int64_t deep_layers, int64_t layers);

}  // namespace placesim
