// Comparing a predicted run with a measured one, from their JSON reports (docs/report-format.md):
// step time and its error, each task's duration error, the worst tasks by absolute error, and the
// error per op kind (summed durations). Pure arithmetic on two reports; runs nothing.
#pragma once

#include <string>
#include <vector>

#include "sim/core/json_reader.h"

namespace placesim::real {

struct TaskComparison {
  size_t id = 0;
  std::string name;
  std::string kind;  ///< op kind for compute tasks, "transfer" for transfers
  std::string device;
  double predicted_seconds = 0;
  double measured_seconds = 0;
  double error_seconds() const { return predicted_seconds - measured_seconds; }
};

struct KindComparison {
  std::string kind;
  size_t tasks = 0;
  double predicted_seconds = 0;  ///< sum of durations
  double measured_seconds = 0;
  double relative_error() const;  ///< (predicted - measured) / measured; 0 when both are 0
};

struct Comparison {
  std::string predicted_source, measured_source, plan;
  double predicted_step_seconds = 0;
  double measured_step_seconds = 0;
  /// (predicted - measured) / measured.
  double step_relative_error() const;
  std::vector<TaskComparison> tasks;           ///< plan order
  std::vector<KindComparison> kinds;           ///< by name
  std::vector<size_t> worst_tasks(size_t count) const;  ///< indices into tasks, largest |error| first
};

/// One run of a plan as a comparison sees it: what a report (docs/report-format.md) says of it.
struct ComparedTask {
  std::string name;
  std::string kind;  ///< op kind for compute tasks, else the task kind ("transfer", "collective")
  std::string device;
  double seconds = 0;  ///< end - start
};
struct ComparedRun {
  std::string plan;    ///< the plan's name
  std::string source;  ///< who made the timeline ("simgrid", "cpu-backend", ...)
  double step_seconds = 0;
  std::vector<ComparedTask> tasks;  ///< plan order
};

/// Two runs of the same plan (same task count and names, in order: std::invalid_argument
/// otherwise, a caller's mistake, never the user's).
Comparison compare_runs(const ComparedRun& predicted, const ComparedRun& measured);

/// The same from two JSON reports: InputError (naming `predicted_file` or `measured_file`) when a
/// report is malformed or the two reports are not of the same plan (task count and names must
/// match).
Comparison compare_reports(const Json& predicted, const std::string& predicted_file, const Json& measured,
                           const std::string& measured_file);

std::string comparison_text(const Comparison& comparison, size_t worst = 10);
Json comparison_json(const Comparison& comparison, size_t worst = 10);
/// One row per task: id,name,kind,device,predicted_seconds,measured_seconds,error_seconds,error_percent.
std::string comparison_csv(const Comparison& comparison);

/// Mean absolute percentage error of step times, in percent.
double mean_absolute_percentage_error(const std::vector<Comparison>& cases);

}  // namespace placesim::real
