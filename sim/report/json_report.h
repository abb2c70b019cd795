// The machine-readable report (schema in docs/report-format.md): every metric of a run, per
// device, the critical path and each task's interval, under a versioned schema.
#pragma once

#include "sim/core/json_reader.h"
#include "sim/report/metrics.h"

namespace placesim {

constexpr int kReportSchemaVersion = 1;

Json json_report(const std::string& scenario, const ExecutionPlan& plan, const Cluster& cluster,
                 const Timeline& timeline, const RunMetrics& metrics);

}  // namespace placesim
