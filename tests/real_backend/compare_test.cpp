// `placesim compare` arithmetic on hand-made reports: step time error, worst tasks by absolute
// error, per-op-kind sums, CSV rows, MAPE, and reports of different plans rejected.
#include <gtest/gtest.h>

#include <cmath>

#include "real_backend/compare.h"
#include "sim/core/input_error.h"

namespace placesim {
namespace {

/// A report with the given step time and tasks {name, kind, op_kind, start, end}.
Json report(double step, const std::vector<std::tuple<std::string, std::string, std::string, double, double>>& tasks,
            const std::string& source) {
  Json list = Json::array();
  for (const auto& [name, kind, op_kind, start, end] : tasks) {
    Json task = {{"name", name}, {"kind", kind}, {"device", "/job:localhost/replica:0/task:0/device:CPU:0"},
                 {"start_seconds", start}, {"end_seconds", end}};
    if (kind == "compute") task["op_kind"] = op_kind;
    list.push_back(task);
  }
  return {{"kind", "placesim-report"}, {"plan", "p"}, {"timeline_source", source}, {"step_time_seconds", step},
          {"tasks", list}};
}

const Json kPredicted = report(0.010, {{"a", "compute", "matmul", 0.000, 0.004},
                                       {"b", "compute", "matmul", 0.004, 0.006},
                                       {"c", "compute", "elementwise", 0.006, 0.007},
                                       {"t", "transfer", "", 0.007, 0.010}},
                               "simgrid");
const Json kMeasured = report(0.008, {{"a", "compute", "matmul", 0.000, 0.003},
                                      {"b", "compute", "matmul", 0.003, 0.006},
                                      {"c", "compute", "elementwise", 0.006, 0.0065},
                                      {"t", "transfer", "", 0.0065, 0.008}},
                              "measured/cpu");

TEST(Compare, StepTimeErrorIsPredictedMinusMeasuredOverMeasured) {
  real::Comparison c = real::compare_reports(kPredicted, "p.json", kMeasured, "m.json");
  // (10 ms - 8 ms) / 8 ms = +25%
  EXPECT_NEAR(c.step_relative_error(), 0.25, 1e-12);
  EXPECT_EQ(c.predicted_source, "simgrid");
  EXPECT_EQ(c.measured_source, "measured/cpu");
}

TEST(Compare, WorstTasksAreSortedByAbsoluteError) {
  real::Comparison c = real::compare_reports(kPredicted, "p.json", kMeasured, "m.json");
  // errors: a +1 ms, b -1 ms, c +0.5 ms, t +1.5 ms
  std::vector<size_t> worst = c.worst_tasks(3);
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_EQ(c.tasks[worst[0]].name, "t");
  EXPECT_NEAR(c.tasks[worst[0]].error_seconds(), 0.0015, 1e-12);
  EXPECT_EQ(c.tasks[worst[1]].name, "a");  // |+1| ties |-1|: plan order
  EXPECT_EQ(c.tasks[worst[2]].name, "b");
}

TEST(Compare, PerKindErrorComparesSummedDurations) {
  real::Comparison c = real::compare_reports(kPredicted, "p.json", kMeasured, "m.json");
  ASSERT_EQ(c.kinds.size(), 3u);  // elementwise, matmul, transfer (by name)
  const real::KindComparison& matmul = c.kinds[1];
  EXPECT_EQ(matmul.kind, "matmul");
  EXPECT_EQ(matmul.tasks, 2u);
  // predicted 4 + 2 = 6 ms, measured 3 + 3 = 6 ms
  EXPECT_NEAR(matmul.relative_error(), 0.0, 1e-12);
  EXPECT_EQ(c.kinds[2].kind, "transfer");
  // 3 ms vs 1.5 ms: +100%
  EXPECT_NEAR(c.kinds[2].relative_error(), 1.0, 1e-9);
}

TEST(Compare, CsvHasOneRowPerTaskAndJsonTheSummary) {
  real::Comparison c = real::compare_reports(kPredicted, "p.json", kMeasured, "m.json");
  std::string csv = real::comparison_csv(c);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_EQ(csv.rfind("id,name,kind,device,predicted_seconds,measured_seconds,error_seconds,error_percent\n", 0), 0u);
  Json json = real::comparison_json(c, 2);
  EXPECT_EQ(json["worst_tasks"].size(), 2u);
  EXPECT_NEAR(json["step_time_relative_error"].get<double>(), 0.25, 1e-12);
}

TEST(Compare, CsvCellsASpreadsheetWouldRunAreNeutralised) {
  // Task names come from the plan, which comes from whoever wrote the scenario: each cell that
  // starts with = + - @ gets a leading ' (OWASP), as results.csv's do; a quoted cell is still run.
  const std::vector<std::tuple<std::string, std::string, std::string, double, double>> tasks = {
      {"=HYPERLINK(\"http://x\",\"a\")", "compute", "matmul", 0.0, 0.004},
      {"+cmd", "compute", "matmul", 0.004, 0.006},
      {"-2", "compute", "elementwise", 0.006, 0.007},  // a plain number stays as it is
      {"@SUM(A1)", "transfer", "", 0.007, 0.010}};
  real::Comparison c =
      real::compare_reports(report(0.010, tasks, "simgrid"), "p.json", report(0.008, tasks, "m"), "m.json");
  std::string csv = real::comparison_csv(c);
  EXPECT_NE(csv.find("\n0,\"'=HYPERLINK(\"\"http://x\"\",\"\"a\"\")\",matmul,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,'+cmd,matmul,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,-2,elementwise,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n3,'@SUM(A1),transfer,"), std::string::npos) << csv;
}

TEST(Compare, MapeIsTheMeanOfAbsoluteStepErrors) {
  real::Comparison over = real::compare_reports(kPredicted, "p", kMeasured, "m");  // +25%
  real::Comparison under = real::compare_reports(report(0.006, {}, "simgrid"), "p", report(0.008, {}, "x"), "m");
  // (25% + 25%) / 2
  EXPECT_NEAR(real::mean_absolute_percentage_error({over, under}), 25.0, 1e-9);
}

TEST(Compare, ReportsOfDifferentPlansAreRejected) {
  Json other = report(0.008, {{"a", "compute", "matmul", 0, 1}}, "measured/cpu");
  EXPECT_THROW(real::compare_reports(kPredicted, "p.json", other, "m.json"), InputError);
  Json renamed = kMeasured;
  renamed["tasks"][2]["name"] = "z";
  try {
    real::compare_reports(kPredicted, "p.json", renamed, "m.json");
    FAIL() << "renamed task accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("m.json: /tasks/2/name"), std::string::npos) << error.what();
  }
}

// The typed comparison (what `execute` and `validate --backend` use, no report in between) gives
// what the JSON reports of the same runs give.
TEST(Compare, TypedRunsCompareAsTheirReports) {
  const std::string cpu = "/job:localhost/replica:0/task:0/device:CPU:0";
  real::ComparedRun predicted{"p", "simgrid", 0.010,
                              {{"a", "matmul", cpu, 0.004}, {"b", "matmul", cpu, 0.002},
                               {"c", "elementwise", cpu, 0.001}, {"t", "transfer", cpu, 0.003}}};
  real::ComparedRun measured{"p", "measured/cpu", 0.008,
                             {{"a", "matmul", cpu, 0.003}, {"b", "matmul", cpu, 0.003},
                              {"c", "elementwise", cpu, 0.0005}, {"t", "transfer", cpu, 0.0015}}};
  real::Comparison typed = real::compare_runs(predicted, measured);
  real::Comparison from_json = real::compare_reports(kPredicted, "p.json", kMeasured, "m.json");
  EXPECT_NEAR(typed.step_relative_error(), 0.25, 1e-12);  // (10 - 8) / 8
  EXPECT_EQ(typed.plan, "p");
  EXPECT_EQ(typed.measured_source, "measured/cpu");
  ASSERT_EQ(typed.tasks.size(), from_json.tasks.size());
  for (size_t i = 0; i < typed.tasks.size(); ++i) {
    EXPECT_EQ(typed.tasks[i].name, from_json.tasks[i].name);
    EXPECT_EQ(typed.tasks[i].kind, from_json.tasks[i].kind);
    EXPECT_NEAR(typed.tasks[i].error_seconds(), from_json.tasks[i].error_seconds(), 1e-15);
  }
  ASSERT_EQ(typed.kinds.size(), 3u);
  EXPECT_NEAR(typed.kinds[2].relative_error(), 1.0, 1e-9);  // transfer: 3 ms vs 1.5 ms
  EXPECT_EQ(real::comparison_csv(typed), real::comparison_csv(from_json));
}

TEST(Compare, TypedRunsOfDifferentPlansAreACallersMistake) {
  real::ComparedRun predicted{"p", "simgrid", 0.01, {{"a", "matmul", "", 0.001}}};
  real::ComparedRun other_name{"p", "measured/cpu", 0.01, {{"b", "matmul", "", 0.001}}};
  real::ComparedRun longer{"p", "measured/cpu", 0.01, {{"a", "matmul", "", 0.001}, {"b", "matmul", "", 0.001}}};
  EXPECT_THROW(real::compare_runs(predicted, other_name), std::invalid_argument);
  EXPECT_THROW(real::compare_runs(predicted, longer), std::invalid_argument);
}

}  // namespace
}  // namespace placesim
