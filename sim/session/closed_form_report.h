// The JSON report of `placesim run` on the closed-form tier ("kind": "placesim-closed-form-report",
// docs/capacity-planning.md): per 3D strategy its step, throughput and, per pipeline stage, the
// forward and backward slots, the stage's end, micro-batches in flight and peak memory. There is
// no plan of the step, so no timeline, device table or trace (sim/analytical/pipeline_closed_form.h).
#pragma once

#include <string>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/report/training_efficiency.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// One strategy's entry; `samples_per_step` = batch size x data-parallel replicas; with
/// `efficiency`, its batches, MFU and tokens (docs/llm-planning.md).
Json closed_form_strategy_json(const Strategy& strategy, const Cluster& cluster, const ClosedFormStepEstimate& estimate,
                               double samples_per_step, const TrainingEfficiency* efficiency = nullptr);

/// The report document around the strategies' entries.
Json closed_form_report(const std::string& scenario_name, const Json& strategies);

}  // namespace placesim
