#include "real_backend/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "sim/core/csv_fields.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

double relative(double predicted, double measured) {
  if (measured == 0) return predicted == 0 ? 0.0 : INFINITY;
  return (predicted - measured) / measured;
}

std::string fixed(const char* pattern, double value) {
  int size = std::snprintf(nullptr, 0, pattern, value);
  std::string text(static_cast<size_t>(size > 0 ? size : 0) + 1, '\0');
  std::snprintf(text.data(), text.size(), pattern, value);
  text.resize(static_cast<size_t>(size > 0 ? size : 0));
  return text;
}

std::vector<ComparedTask> read_tasks(const JsonReader& report) {
  std::vector<ComparedTask> tasks;
  JsonReader list = report.at("tasks");
  for (size_t i = 0; i < list.size(); ++i) {
    JsonReader task = list.at_index(i);
    ComparedTask entry;
    entry.name = task.string_at("name");
    entry.device = task.string_or("device", "");
    entry.kind = task.string_at("kind") == "compute" ? task.string_or("op_kind", "other") : task.string_at("kind");
    double start = task.at("start_seconds").as_non_negative_number();
    double end = task.at("end_seconds").as_non_negative_number();
    if (end < start) {
      task.at("end_seconds").fail("the task ends (" + brief(task.at("end_seconds").value()) + " s) before it starts (" +
                                  brief(task.at("start_seconds").value()) + " s): a duration cannot be negative");
    }
    entry.seconds = end - start;
    tasks.push_back(entry);
  }
  return tasks;
}

}  // namespace

double KindComparison::relative_error() const { return relative(predicted_seconds, measured_seconds); }
double Comparison::step_relative_error() const { return relative(predicted_step_seconds, measured_step_seconds); }

std::vector<size_t> Comparison::worst_tasks(size_t count) const {
  std::vector<size_t> order(tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::abs(tasks[a].error_seconds()) > std::abs(tasks[b].error_seconds());
  });
  order.resize(std::min(count, order.size()));
  return order;
}

Comparison compare_runs(const ComparedRun& predicted, const ComparedRun& measured) {
  if (predicted.tasks.size() != measured.tasks.size()) {
    throw std::invalid_argument("compare_runs: " + std::to_string(predicted.tasks.size()) + " predicted tasks against " +
                                std::to_string(measured.tasks.size()) + " measured: not runs of the same plan");
  }
  Comparison comparison;
  comparison.plan = predicted.plan;
  comparison.predicted_source = predicted.source;
  comparison.measured_source = measured.source;
  comparison.predicted_step_seconds = predicted.step_seconds;
  comparison.measured_step_seconds = measured.step_seconds;
  std::map<std::string, KindComparison> kinds;
  for (size_t i = 0; i < predicted.tasks.size(); ++i) {
    const ComparedTask& p = predicted.tasks[i];
    const ComparedTask& m = measured.tasks[i];
    if (p.name != m.name) {
      throw std::invalid_argument("compare_runs: task " + std::to_string(i) + " is \"" + p.name + "\" predicted and \"" +
                                  m.name + "\" measured: not runs of the same plan");
    }
    comparison.tasks.push_back({i, p.name, p.kind, p.device, p.seconds, m.seconds});
    KindComparison& kind = kinds[p.kind];
    kind.kind = p.kind;
    ++kind.tasks;
    kind.predicted_seconds += p.seconds;
    kind.measured_seconds += m.seconds;
  }
  for (auto& [name, kind] : kinds) comparison.kinds.push_back(kind);
  return comparison;
}

Comparison compare_reports(const Json& predicted_json, const std::string& predicted_file, const Json& measured_json,
                           const std::string& measured_file) {
  JsonReader predicted_report(predicted_json, predicted_file), measured_report(measured_json, measured_file);
  for (const JsonReader* report : {&predicted_report, &measured_report}) {
    if (report->string_or("kind", "") != "placesim-report") {
      report->fail("not a placesim report (expected \"kind\": \"placesim-report\")");
    }
  }
  // A zero step would make every relative error infinite: a report of a step that took no time is
  // not a measurement.
  auto read_run = [](const JsonReader& report) {
    return ComparedRun{report.string_or("plan", ""), report.string_or("timeline_source", ""),
                       report.at("step_time_seconds").as_positive_number(), read_tasks(report)};
  };
  ComparedRun predicted = read_run(predicted_report), measured = read_run(measured_report);
  if (predicted.tasks.size() != measured.tasks.size()) {
    measured_report.at("tasks").fail("has " + std::to_string(measured.tasks.size()) + " tasks but " + predicted_file +
                                     " has " + std::to_string(predicted.tasks.size()) +
                                     ": the reports are not of the same plan");
  }
  for (size_t i = 0; i < predicted.tasks.size(); ++i) {
    if (predicted.tasks[i].name != measured.tasks[i].name) {
      measured_report.at("tasks").at_index(i).at("name").fail(
          "task " + std::to_string(i) + " is \"" + measured.tasks[i].name + "\" but \"" + predicted.tasks[i].name +
          "\" in " + predicted_file + ": the reports are not of the same plan");
    }
  }
  return compare_runs(predicted, measured);
}

std::string comparison_text(const Comparison& c, size_t worst) {
  std::string text;
  text += "Plan: " + c.plan + " (" + std::to_string(c.tasks.size()) + " tasks), predicted by " +
          c.predicted_source + ", measured by " + c.measured_source + "\n";
  text += "Step time: predicted " + fixed("%.3f ms", c.predicted_step_seconds * 1e3) + ", measured " +
          fixed("%.3f ms", c.measured_step_seconds * 1e3) + ", error " +
          fixed("%+.1f%%", c.step_relative_error() * 100) + "\n\n";
  text += "Per op kind (summed task durations):\n";
  text += "  kind            tasks   predicted ms    measured ms    error\n";
  for (const auto& kind : c.kinds) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-14s %6zu %14.3f %14.3f %+8.1f%%\n", kind.kind.c_str(), kind.tasks,
                  kind.predicted_seconds * 1e3, kind.measured_seconds * 1e3, kind.relative_error() * 100);
    text += line;
  }
  text += "\nWorst tasks by absolute error:\n";
  text += "     id  predicted us   measured us     error us  task\n";
  for (size_t index : c.worst_tasks(worst)) {
    const TaskComparison& t = c.tasks[index];
    char line[320];
    std::snprintf(line, sizeof line, "  %5zu %13.1f %13.1f %+12.1f  %s (%s)\n", t.id, t.predicted_seconds * 1e6,
                  t.measured_seconds * 1e6, t.error_seconds() * 1e6, t.name.c_str(), t.kind.c_str());
    text += line;
  }
  return text;
}

Json comparison_json(const Comparison& c, size_t worst) {
  Json kinds = Json::array();
  for (const auto& kind : c.kinds) {
    kinds.push_back({{"kind", kind.kind},
                     {"tasks", kind.tasks},
                     {"predicted_seconds", kind.predicted_seconds},
                     {"measured_seconds", kind.measured_seconds},
                     {"relative_error", kind.relative_error()}});
  }
  Json worst_tasks = Json::array();
  for (size_t index : c.worst_tasks(worst)) {
    const TaskComparison& t = c.tasks[index];
    worst_tasks.push_back({{"id", t.id},
                           {"name", t.name},
                           {"kind", t.kind},
                           {"device", t.device},
                           {"predicted_seconds", t.predicted_seconds},
                           {"measured_seconds", t.measured_seconds},
                           {"error_seconds", t.error_seconds()}});
  }
  return {{"kind", "placesim-comparison"},
          {"schema_version", 1},
          {"plan", c.plan},
          {"predicted_source", c.predicted_source},
          {"measured_source", c.measured_source},
          {"predicted_step_time_seconds", c.predicted_step_seconds},
          {"measured_step_time_seconds", c.measured_step_seconds},
          {"step_time_relative_error", c.step_relative_error()},
          {"per_kind", kinds},
          {"worst_tasks", worst_tasks}};
}

std::string comparison_csv(const Comparison& c) {
  std::string csv = "id,name,kind,device,predicted_seconds,measured_seconds,error_seconds,error_percent\n";
  for (const auto& t : c.tasks) {
    double percent = relative(t.predicted_seconds, t.measured_seconds) * 100;
    csv += std::to_string(t.id) + "," + csv_cell(t.name) + "," + csv_cell(t.kind) + "," + csv_cell(t.device) + "," +
           fixed("%.9g", t.predicted_seconds) + "," + fixed("%.9g", t.measured_seconds) + "," +
           fixed("%.9g", t.error_seconds()) + "," + (std::isfinite(percent) ? fixed("%.3f", percent) : "") + "\n";
  }
  return csv;
}

double mean_absolute_percentage_error(const std::vector<Comparison>& cases) {
  if (cases.empty()) return 0;
  double sum = 0;
  for (const auto& c : cases) sum += std::abs(c.step_relative_error());
  return 100 * sum / static_cast<double>(cases.size());
}

}  // namespace placesim::real
