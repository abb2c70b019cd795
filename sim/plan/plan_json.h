// Plan files: an ExecutionPlan and the resolved Cluster it runs on, as versioned JSON
// (docs/plan-format.md). read_plan_json(write_plan_json(p, c)) reproduces p and c.
#pragma once

#include <filesystem>

#include "sim/core/json_reader.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

struct PlanFile {
  ExecutionPlan plan;
  Cluster cluster;
};

Json write_plan_json(const ExecutionPlan& plan, const Cluster& cluster);
/// Validates schema version, task references, device names and acyclicity; InputError otherwise.
PlanFile read_plan_json(const JsonReader& document);
PlanFile load_plan_file(const std::filesystem::path& path);

}  // namespace placesim
