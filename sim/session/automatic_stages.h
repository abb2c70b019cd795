// Resolves `"stage_replicas": "auto"` (ParallelismOptions::automatic_stages) with PipeDream's
// partitioner (sim/auto_placement/pipedream_partitioner.h) into the stages, their ops and widths,
// before a scenario is planned: every command that plans a scenario file loads it with
// load_scenario_to_plan.
#pragma once

#include <filesystem>
#include <string>

#include "sim/cluster/hardware_catalog.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// Each strategy of `scenario` with `"stage_replicas": "auto"` gets the partitioner's stages
/// (stage_replicas, stage_ops, pipeline, data = the widest), or, when the number of stages is
/// left to it and synchronous data parallelism over the same devices simulates faster than every
/// pipeline it proposes, becomes that data-parallel strategy (PipeDream's one-stage answer); and
/// a note of what it chose and what it weighed (Strategy::chosen_by). Throws InputError at the
/// strategy's parallelism when the model cannot be split so. With `only` not empty, the strategy of
/// that name alone (a command given one strategy plans no other: the search simulates pipelines).
void resolve_automatic_stages(Scenario* scenario, const std::string& only = "");

/// load_scenario, then resolve_automatic_stages (of the strategy named `only` alone when not
/// empty): the scenario as the commands that plan it see it.
Scenario load_scenario_to_plan(const std::filesystem::path& path, const HardwareCatalog& catalog,
                               const std::string& only = "");

}  // namespace placesim
